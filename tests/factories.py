"""factory_boy factories for the models the tests build."""

import factory
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from datasets_app.models import Dataset, Prompt, Response


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.PostGenerationMethodCall("set_password", "correct-horse-battery")

    @factory.post_generation
    def roles(self, create, extracted, **kwargs):
        if not create:
            return
        names = list(extracted or [])
        if "admin" in names:
            self.is_staff = True
            self.is_superuser = True
            names.remove("admin")
        self.save()
        if names:
            groups = []
            for name in names:
                group, _ = Group.objects.get_or_create(name=name)
                groups.append(group)
            self.groups.set(groups)


class DatasetFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Dataset

    name = factory.Sequence(lambda n: f"dataset-{n}")


class PromptFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Prompt

    dataset = factory.SubFactory(DatasetFactory)
    external_id = factory.Sequence(lambda n: f"p{n}")
    category = "analysis"
    language = "ind"
    turns = factory.LazyFunction(lambda: ["Jelaskan mengapa langit berwarna biru."])


class ResponseFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Response

    prompt = factory.SubFactory(PromptFactory)
    model_name = factory.Sequence(lambda n: f"model-{n}")
    turns = factory.LazyFunction(lambda: ["Karena hamburan Rayleigh."])

import json
from dataclasses import asdict

from django.core.management.base import BaseCommand

from config.demo import demo_load


class Command(BaseCommand):
    help = "Load the bundled sample project and print the demo users with their passwords."

    def add_arguments(self, parser):
        parser.add_argument(
            "--password", help="Give every demo user this password (default: a new random one each)."
        )
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **options):
        result = demo_load(password=options["password"])
        if options["json"]:
            payload = {"users": [asdict(u) for u in result.users], "dataset": result.dataset.as_dict()}
            self.stdout.write(json.dumps(payload, ensure_ascii=False))
            return
        counts = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in result.dataset.counts.items())
        self.stdout.write(self.style.SUCCESS(f"Sample dataset {result.dataset.dataset.name!r}: {counts}."))
        self.stdout.write("")
        self.stdout.write("Demo users (log in at http://127.0.0.1:8000/accounts/login/):")
        width = max(len(u.username) for u in result.users)
        for user in result.users:
            self.stdout.write(f"  {user.username:<{width}}  {user.password:<14}  {', '.join(user.roles)}")

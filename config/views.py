"""The home page: each role's entry points, and an annotator's projects with their progress."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from accounts.roles import user_roles
from annotation.selectors import annotator_projects
from demo.selectors import demo_model_starting


@login_required
def home(request):
    roles = sorted(user_roles(request.user))
    projects = annotator_projects(user=request.user) if "annotator" in roles else []
    context = {"roles": roles, "annotator_projects": projects, "demo_model_starting": demo_model_starting()}
    return render(request, "home.html", context)

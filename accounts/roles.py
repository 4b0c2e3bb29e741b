"""Roles are Django auth groups. Staff users count as every role."""

from collections.abc import Iterable

from django.utils.translation import gettext_lazy as _

ANNOTATOR = "annotator"
REVIEWER = "reviewer"
PROJECT_MANAGER = "project_manager"
RESEARCHER = "researcher"
ALL_ROLES = (ANNOTATOR, REVIEWER, PROJECT_MANAGER, RESEARCHER)
ROLE_LABELS = {
    ANNOTATOR: _("Annotator"),
    REVIEWER: _("Reviewer"),
    PROJECT_MANAGER: _("Project manager"),
    RESEARCHER: _("Researcher"),
}

# A simulated annotator (the demo's stand-ins for people) carries this last name and cannot log in; exports
# find them by it and declare their answers as simulated.
SIMULATED_LAST_NAME = "(demo data)"

# Who may look at datasets (model names included): never plain annotators.
DATA_ROLES = (PROJECT_MANAGER, RESEARCHER)

# People with these roles (and administrators) are deactivated or reset only by an administrator.
PRIVILEGED_ROLES = (PROJECT_MANAGER, RESEARCHER)


def role_label(name: str) -> str:
    """The role's name for people (translated); any other group keeps its own name."""
    return str(ROLE_LABELS.get(name, name))


def user_roles(user) -> set[str]:
    if not getattr(user, "is_authenticated", False):
        return set()
    cached = getattr(user, "_timbang_roles", None)
    if cached is None:
        cached = set(user.groups.filter(name__in=ALL_ROLES).values_list("name", flat=True))
        if user.is_staff:
            cached |= set(ALL_ROLES)
        user._timbang_roles = cached
    return cached


def roles_set(user, names: Iterable[str]) -> None:
    """Remember ``names`` (the user's role groups, read with the user) as the user's roles."""
    roles = set(names) & set(ALL_ROLES)
    if user.is_staff:
        roles |= set(ALL_ROLES)
    user._timbang_roles = roles


def has_role(user, roles: str | Iterable[str]) -> bool:
    wanted = {roles} if isinstance(roles, str) else set(roles)
    return bool(user_roles(user) & wanted)

"""Role checks for pages (decorator) and the API (DRF permission)."""

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from rest_framework.permissions import BasePermission

from accounts.roles import has_role


def role_required(*roles: str) -> Callable:
    """Page decorator: anonymous users go to the login page, others without a role get 403."""

    def decorator(view):
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            if not has_role(request.user, roles):
                raise PermissionDenied
            return view(request, *args, **kwargs)

        return wrapper

    return decorator


def HasRole(*roles: str) -> type[BasePermission]:  # noqa: N802 - reads like a class in permission_classes
    """DRF permission class allowing authenticated users with any of ``roles``."""

    class _HasRole(BasePermission):
        message = "This operation needs one of the roles: " + ", ".join(roles) + "."

        def has_permission(self, request, view) -> bool:
            return bool(request.user and request.user.is_authenticated and has_role(request.user, roles))

    _HasRole.__name__ = "HasRole_" + "_".join(roles)
    return _HasRole

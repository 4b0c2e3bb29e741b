"""Views named by dotted path and imported on their first request, for URL modules of heavy pages.

The export pages and API need pandas, pyarrow and the Hub client; a URL module that imported them would
make every process pay for them at start-up (every command, every worker boot), exports or not.
``lazy_view("exports.views.export_list")`` stands in the URL pattern for the view; the module is
imported when a request reaches it, or when something asks the view for an attribute Django or DRF
reads off views (``csrf_exempt``, DRF's ``cls`` and ``initkwargs`` when the API schema is built).
Resolving and reversing URLs imports nothing.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from django.utils.module_loading import import_string


class LazyView:
    def __init__(self, path: str, *, api: bool = False) -> None:
        self.path = path
        self.api = api
        module, _, name = path.rpartition(".")
        # What Django's URL resolver reads for a pattern's lookup string: the path, not the view itself.
        self.__module__ = module
        self.__name__ = self.__qualname__ = name

    @cached_property
    def view(self):
        target = import_string(self.path)
        return target.as_view() if self.api else target

    def __call__(self, request, *args: Any, **kwargs: Any):
        return self.view(request, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        # Only attributes the instance lacks reach here. ``view_class`` would make the resolver import the
        # view to name the pattern: the path names it already.
        if name.startswith("__") or name in ("view_class", "view"):
            raise AttributeError(name)
        return getattr(self.view, name)

    def __repr__(self) -> str:
        return f"<lazy view {self.path}>"


def lazy_view(path: str) -> LazyView:
    """A function view by dotted path."""
    return LazyView(path)


def lazy_api(path: str) -> LazyView:
    """A DRF ``APIView`` class by dotted path (its ``as_view()`` on first use)."""
    return LazyView(path, api=True)

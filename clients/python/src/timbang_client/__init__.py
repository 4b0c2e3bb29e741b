"""Python client of the Timbang API: ``Timbang`` (timbang_client.client), its exceptions
(timbang_client.errors) and the list of operations it calls (timbang_client.operations)."""

from timbang_client.client import Timbang

__all__ = ["Timbang"]

"""The Redis cache backend keeps one redis-py client per connection pool."""

from django.core.cache import caches
from django.test import override_settings

# Nothing listens there: building a client connects to nothing.
UNREACHABLE = {"default": {"BACKEND": "config.cache.RedisCache", "LOCATION": "redis://127.0.0.1:9/0"}}


def test_every_call_gets_the_same_client_of_its_pool():
    with override_settings(CACHES=UNREACHABLE):
        backend = caches.create_connection("default")
        client = backend._cache.get_client("a")
        assert backend._cache.get_client("b") is client
        assert backend._cache.get_client("a", write=True) is client  # one server: one pool
        assert client.connection_pool is backend._cache._get_connection_pool(write=False)

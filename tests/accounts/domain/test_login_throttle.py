"""Client address resolution and throttle keys, on plain values (no database, no Django)."""

import pytest

from accounts.domain.login_throttle import (
    UNKNOWN_ADDRESS,
    address_scope,
    client_address,
    header_meta_key,
    retry_after_seconds,
    throttle_keys,
)


def test_header_meta_key_is_the_wsgi_name():
    assert header_meta_key("X-Forwarded-For") == "HTTP_X_FORWARDED_FOR"
    assert header_meta_key(" x-real-ip ") == "HTTP_X_REAL_IP"


def test_without_a_configured_header_the_connecting_address_is_the_client():
    assert client_address(remote_addr="198.51.100.7", forwarded=None, trusted_proxies=1) == "198.51.100.7"


@pytest.mark.parametrize(
    ("forwarded", "proxies", "expected"),
    [
        ("203.0.113.5", 1, "203.0.113.5"),
        # The client wrote the first entry itself; the one proxy appended what it saw.
        ("1.2.3.4, 203.0.113.5", 1, "203.0.113.5"),
        ("1.2.3.4,203.0.113.5", 1, "203.0.113.5"),
        # Two proxies: the outer one saw the client, the inner one saw the outer proxy.
        ("1.2.3.4, 203.0.113.5, 10.0.0.9", 2, "203.0.113.5"),
        # Fewer entries than proxies: the request did not come through them all.
        ("203.0.113.5", 2, "10.0.0.2"),
        ("", 1, "10.0.0.2"),
        # What is not an address does not become one.
        ("1.2.3.4, not-an-address", 1, "10.0.0.2"),
        ("1.2.3.4, 203.0.113.5:51234", 1, "203.0.113.5"),
        ("[2001:db8::5]:443", 1, "2001:db8::5"),
        ("2001:DB8:0:0::5", 1, "2001:db8::5"),
        ("::ffff:203.0.113.5", 1, "203.0.113.5"),
    ],
)
def test_the_trusted_entry_of_the_forwarding_header_is_the_client(forwarded, proxies, expected):
    assert client_address(remote_addr="10.0.0.2", forwarded=forwarded, trusted_proxies=proxies) == expected


def test_a_missing_connecting_address_is_named_unknown():
    assert client_address(remote_addr="", forwarded=None, trusted_proxies=1) == UNKNOWN_ADDRESS


def test_ipv6_clients_are_counted_by_their_slash_64():
    assert address_scope("2001:db8:1:2::5") == address_scope("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    assert address_scope("2001:db8:1:3::5") != address_scope("2001:db8:1:2::5")
    assert address_scope("203.0.113.5") == "203.0.113.5"


def test_account_keys_are_per_username_and_client_and_address_keys_per_client():
    ani_here = throttle_keys(username="ani", address="203.0.113.5")
    assert throttle_keys(username=" Ani ", address="203.0.113.5") == ani_here
    budi_here = throttle_keys(username="budi", address="203.0.113.5")
    ani_there = throttle_keys(username="ani", address="198.51.100.7")
    assert len({ani_here.account, budi_here.account, ani_there.account}) == 3
    assert ani_here.address == budi_here.address != ani_there.address
    assert "ani" not in ani_here.account


def test_retry_after_rounds_up_to_whole_seconds():
    assert retry_after_seconds(locked_until=1000.0, now=400.2) == 600
    assert retry_after_seconds(locked_until=1000.0, now=999.99) == 1
    assert retry_after_seconds(locked_until=1000.0, now=1000.0) == 1

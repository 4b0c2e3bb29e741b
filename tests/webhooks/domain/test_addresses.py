import pytest

from webhooks.domain.addresses import Target, WebhookUrlRefused, address_refusal, host_allowed, url_target


def test_url_target_reads_scheme_host_and_default_ports():
    assert url_target("https://Hooks.Example.org./x") == Target("https", "hooks.example.org", 443)
    assert url_target("http://example.org:8080/x") == Target("http", "example.org", 8080)


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("ftp://example.org/", "must start with http:// or https://"),
        ("https:///path", "no host"),
        ("https://user:pw@example.org/", "user name or password"),
        ("https://example.org:99999/", "cannot be read"),
        ("https://" + "a" * 500 + ".org/", "longer than 500"),
    ],
)
def test_bad_urls_say_what_is_wrong(url, says):
    with pytest.raises(WebhookUrlRefused, match=says):
        url_target(url)


def test_https_only_and_the_host_allow_list():
    with pytest.raises(WebhookUrlRefused, match="https://"):
        url_target("http://example.org/", https_only=True)
    allowed = ["hooks.example.org", ".partner.id", "ci.example.org:8443"]
    assert url_target("https://a.b.partner.id/", allowed_hosts=allowed).host == "a.b.partner.id"
    assert url_target("https://ci.example.org:8443/", allowed_hosts=allowed).port == 8443
    with pytest.raises(WebhookUrlRefused, match="ci.example.org:443 is not in the site's list"):
        url_target("https://ci.example.org/", allowed_hosts=allowed)
    assert not host_allowed("evilpartner.id", 443, allowed)


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "0.0.0.0",
        "::1",
        "fd00::1",
        "fe80::1%eth0",
        "::ffff:127.0.0.1",
        "100.64.0.1",
        "224.0.0.1",
    ],
)
def test_private_loopback_and_reserved_addresses_are_refused(address):
    refusal = address_refusal([address])
    assert "private, loopback or reserved" in str(refusal)
    # The reason keeps its text and values apart, for a page to translate.
    assert refusal.message == "%(address)s is a private, loopback or reserved address"
    assert refusal.params == {"address": address}


def test_every_address_is_checked_and_allowed_networks_let_some_through():
    assert address_refusal(["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"]) is None
    assert (
        str(address_refusal(["93.184.215.14", "10.0.0.5"]))
        == "10.0.0.5 is a private, loopback or reserved address"
    )
    assert address_refusal(["127.0.0.1", "::1"], allowed_networks=["127.0.0.0/8", "::1/128"]) is None
    assert str(address_refusal([])) == "the host has no address"
    with pytest.raises(WebhookUrlRefused, match="not a network"):
        address_refusal(["127.0.0.1"], allowed_networks=["localhost"])


def test_a_refused_urls_english_text_joins_alternatives_and_keeps_the_values_apart():
    with pytest.raises(WebhookUrlRefused) as refused:
        url_target("gopher://example.org/")
    assert str(refused.value) == "the URL must start with http:// or https://"
    assert refused.value.message == "the URL must start with %(schemes)s"
    assert refused.value.params == {"schemes": ["http://", "https://"]}
    with pytest.raises(WebhookUrlRefused) as refused:
        url_target("https://ci.example.org/", allowed_hosts=["hooks.example.org"])
    assert refused.value.params == {"host": "ci.example.org", "port": 443}

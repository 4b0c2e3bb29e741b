import pytest

from webhooks.domain.signing import (
    SignatureError,
    message_id_from_bytes,
    secret_from_bytes,
    secret_key,
    signature,
    signed_headers,
    verify,
)

# The example of the Standard Webhooks specification's reference libraries (secret, id, timestamp, body and
# the signature they publish for it).
SPEC_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
SPEC_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
SPEC_TS = 1614265330
SPEC_BODY = b'{"test": 2432232314}'
SPEC_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def test_signature_equals_the_published_example():
    assert (
        signature(secret=SPEC_SECRET, message_id=SPEC_ID, timestamp=SPEC_TS, body=SPEC_BODY) == SPEC_SIGNATURE
    )


def test_headers_carry_one_signature_per_secret_and_verify_with_either():
    other = secret_from_bytes(bytes(range(32)))
    headers = signed_headers(
        secrets=[other, SPEC_SECRET], message_id=SPEC_ID, timestamp=SPEC_TS, body=SPEC_BODY
    )
    assert headers["webhook-id"] == SPEC_ID and headers["webhook-timestamp"] == str(SPEC_TS)
    assert headers["webhook-signature"].split(" ")[1] == SPEC_SIGNATURE
    verify(secret=SPEC_SECRET, headers=headers, body=SPEC_BODY, now=SPEC_TS + 10)
    verify(secret=other, headers={k.upper(): v for k, v in headers.items()}, body=SPEC_BODY, now=SPEC_TS)


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"body": b'{"test": 2432232315}'}, "no v1 signature"),
        ({"now": SPEC_TS + 301}, "more than 300 s"),
        ({"secret": secret_from_bytes(b"x" * 24)}, "no v1 signature"),
    ],
)
def test_verify_refuses_a_changed_body_an_old_timestamp_or_another_secret(change, says):
    headers = signed_headers(secrets=[SPEC_SECRET], message_id=SPEC_ID, timestamp=SPEC_TS, body=SPEC_BODY)
    arguments = {"secret": SPEC_SECRET, "headers": headers, "body": SPEC_BODY, "now": SPEC_TS} | change
    with pytest.raises(SignatureError, match=says):
        verify(**arguments)


def test_missing_headers_and_malformed_secrets_are_named():
    with pytest.raises(SignatureError, match="webhook-id, webhook-signature"):
        verify(secret=SPEC_SECRET, headers={"webhook-timestamp": "1"}, body=b"", now=1)
    with pytest.raises(SignatureError, match="starts with 'whsec_'"):
        secret_key("abc")
    with pytest.raises(SignatureError, match="not base64"):
        secret_key("whsec_***")
    with pytest.raises(SignatureError, match="24 to 64 bytes"):
        secret_from_bytes(b"short")


def test_secret_and_message_id_formats():
    key = bytes(range(32))
    assert secret_key(secret_from_bytes(key)) == key
    assert message_id_from_bytes(b"\x01\xff") == "msg_01ff"

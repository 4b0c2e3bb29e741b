import pytest

from webhooks.domain.retries import payload, retry_after_seconds, retry_delay_s


def test_delays_double_from_the_base_up_to_the_cap():
    # jitter 0.5 gives exactly the doubled delay (75% + 50% * 0.5 = 100%)
    delays = [retry_delay_s(n, base_s=30, cap_s=3600, jitter=0.5) for n in range(1, 10)]
    assert delays == [30, 60, 120, 240, 480, 960, 1920, 3600, 3600]
    assert retry_delay_s(2, base_s=30, cap_s=3600, jitter=0.0) == 45
    assert retry_delay_s(2, base_s=30, cap_s=3600, jitter=0.99) == pytest.approx(
        74.7
    )  # 60 * (0.75 + 0.5 * 0.99)


def test_retry_after_lengthens_the_wait_but_never_past_the_cap():
    assert retry_delay_s(1, base_s=30, cap_s=3600, jitter=0.5, retry_after_s=120) == 120
    assert retry_delay_s(1, base_s=30, cap_s=3600, jitter=0.5, retry_after_s=5) == 30
    assert retry_delay_s(1, base_s=30, cap_s=100, jitter=0.5, retry_after_s=7200) == 100
    with pytest.raises(ValueError, match="start at 1"):
        retry_delay_s(0, base_s=30, cap_s=100, jitter=0)


def test_retry_after_header_in_seconds_only():
    assert retry_after_seconds("17") == 17
    assert retry_after_seconds("Wed, 21 Oct 2026 07:28:00 GMT") is None
    assert retry_after_seconds(None) is None and retry_after_seconds("-3") is None


def test_payload_shape():
    assert payload(event="run.finished", timestamp_iso="2026-01-01T00:00:00+00:00", data={"run": 1}) == {
        "type": "run.finished",
        "timestamp": "2026-01-01T00:00:00+00:00",
        "data": {"run": 1},
    }

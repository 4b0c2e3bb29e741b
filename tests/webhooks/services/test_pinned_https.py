"""A delivery goes to the address that was checked: a host whose DNS answer changes after the check (to a
private address, say) is still reached at the checked one, over TLS with the host's own name checked
against its certificate."""

import socket
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from webhooks.models import WebhookDelivery, WebhookEndpoint
from webhooks.services import delivery_attempt, webhook_create

pytestmark = pytest.mark.django_db

HOST = "hooks.timbang.test"


@pytest.fixture
def https_receiver(tmp_path):
    """An https server on 127.0.0.1 with a self-signed certificate for HOST (its own CA)."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            f"/CN={HOST}",
            "-addext",
            f"subjectAltName=DNS:{HOST}",
        ],
        check=True,
        capture_output=True,
    )
    seen = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            self.rfile.read(int(self.headers["Content-Length"]))
            seen.append(self.headers["Host"])
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1], cert, seen
    server.shutdown()
    server.server_close()


@pytest.fixture
def rebinding_dns(monkeypatch):
    """HOST resolves to 127.0.0.1 once, then to a private address (a DNS-rebinding attempt)."""
    real = socket.getaddrinfo
    answers = iter(["127.0.0.1"])

    def getaddrinfo(host, port, *args, **kwargs):
        if host == HOST:
            address = next(answers, "10.9.9.9")
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def test_the_checked_address_is_the_one_reached_with_the_hosts_certificate_checked(
    https_receiver, rebinding_dns, settings
):
    port, cert, seen = https_receiver
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    settings.WEBHOOK_CA_BUNDLE = str(cert)
    # saved without a resolution of its own: the attempt below resolves once
    hook = WebhookEndpoint.objects.create(
        url=f"https://{HOST}:{port}/in", events=["run.finished"], secret="whsec_" + "QUFB" * 8
    )
    delivery = WebhookDelivery.objects.create(
        endpoint=hook, event="run.finished", message_id="msg_tls", payload={}
    )
    outcome = delivery_attempt(delivery=delivery)
    assert outcome.delivery.status == "succeeded", outcome.delivery.last_error
    assert seen == [f"{HOST}:{port}"]


def test_a_certificate_for_another_name_is_refused(https_receiver, settings, monkeypatch):
    port, cert, seen = https_receiver
    real = socket.getaddrinfo
    monkeypatch.setattr(
        socket,
        "getaddrinfo",
        lambda host, p, *a, **k: (
            [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", p))]
            if host == "other.timbang.test"
            else real(host, p, *a, **k)
        ),
    )
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    settings.WEBHOOK_CA_BUNDLE = str(cert)
    settings.WEBHOOK_MAX_ATTEMPTS = 1
    hook = webhook_create(project=None, url=f"https://other.timbang.test:{port}/in", events=["run.finished"])
    delivery = WebhookDelivery.objects.create(
        endpoint=hook, event="run.finished", message_id="msg_x", payload={}
    )
    outcome = delivery_attempt(delivery=delivery)
    assert outcome.delivery.status == "failed" and "certificate" in outcome.delivery.last_error.lower()
    assert seen == []

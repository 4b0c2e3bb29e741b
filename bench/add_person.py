"""Adding a person on the people page: seconds per submit, in process, with the production password hasher.

    python bench/add_person.py [--submits 10]

A fresh SQLite database in a scratch folder (``TIMBANG_VAR_DIR``), the embedded settings
(``config.settings.local``: Django's default PBKDF2 hasher and its iterations, not the tests' MD5 one), a
project manager logged in with Django's test client, then ``--submits`` POSTs of the add-person form to
``/people/`` (a new person each, two groups, an e-mail address), each timed from the request to the redirect; the
first (which also loads templates and translations) is reported apart from the median and maximum of the rest.
The set-password e-mail goes to Django's in-memory outbox (``setup_test_environment``), so an SMTP server's
own latency is not in the figure. Also times one ``make_password`` of a random password with the configured
hasher, for comparison. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--submits", type=int, default=10)
    args = parser.parse_args()
    for name in ("DATABASE_URL", "REDIS_URL", "CELERY_TASK_ALWAYS_EAGER"):
        os.environ.pop(name, None)
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.local"
    os.environ["TIMBANG_VAR_DIR"] = tempfile.mkdtemp(prefix="timbang-add-person-")

    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import get_hasher, make_password
    from django.contrib.auth.models import Group
    from django.core import mail
    from django.core.management import call_command
    from django.test import Client
    from django.test.utils import setup_test_environment

    setup_test_environment()
    call_command("migrate", "--noinput", verbosity=0)
    manager = get_user_model().objects.create(username="bench-manager")
    manager.groups.set(Group.objects.filter(name="project_manager"))
    client = Client()
    client.force_login(manager)
    groups = list(Group.objects.filter(name__in=("annotator", "reviewer")).values_list("pk", flat=True))

    seconds = []
    for n in range(args.submits):
        data = {
            "username": f"orang{n}",
            "first_name": "Orang",
            "last_name": str(n),
            "email": f"orang{n}@example.org",
            "language": "ind",
            "groups": groups,
        }
        started = time.perf_counter()
        response = client.post("/people/", data)
        seconds.append(time.perf_counter() - started)
        if response.status_code != 302:
            raise SystemExit(f"submit {n} answered {response.status_code}, not the redirect")
    if len(mail.outbox) != args.submits:
        raise SystemExit(f"{len(mail.outbox)} set-password e-mails for {args.submits} submits")

    hasher = get_hasher()
    started = time.perf_counter()
    make_password("x" * 43)
    hash_s = time.perf_counter() - started
    print(
        json.dumps(
            {
                "submits": args.submits,
                "first_s": round(seconds[0], 4),
                "median_s": round(statistics.median(seconds[1:] or seconds), 4),
                "max_s": round(max(seconds[1:] or seconds), 4),
                "hasher": f"{hasher.algorithm}, {getattr(hasher, 'iterations', '-')} iterations",
                "one_make_password_s": round(hash_s, 4),
                "email_backend": settings.EMAIL_BACKEND,
                "load_average_1m": round(os.getloadavg()[0], 2),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

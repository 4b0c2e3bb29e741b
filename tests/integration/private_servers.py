"""Private PostgreSQL and Redis servers that a fault test may stop, kill and restart.

The shared servers other tests use are never touched: each server here runs on a free port with its
data in a temporary folder, and is stopped (and its folder removed) by the fixture that started it.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _wait(predicate, *, timeout: float, what: str, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    tail = log.read_text(errors="replace")[-3000:] if log and log.exists() else ""
    raise RuntimeError(f"timed out after {timeout}s waiting for {what}\n{tail}")


class PrivateRedis:
    """``redis-server`` on a free port. ``appendonly`` keeps queued messages across a restart."""

    def __init__(self, *, appendonly: bool = False) -> None:
        self.binary = shutil.which("redis-server")
        if self.binary is None:
            raise FileNotFoundError("redis-server")
        self.port = free_port()
        self.appendonly = appendonly
        self.dir = Path(tempfile.mkdtemp(prefix="timbang-redis-"))
        self.log = self.dir / "redis.log"
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 20) -> PrivateRedis:
        args = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir)]
        args += ["--save", "", "--appendonly", "yes" if self.appendonly else "no", "--daemonize", "no"]
        if self.appendonly:
            # Every write reaches the file before Redis answers, so a SIGKILL loses no queued message.
            args += ["--appendfsync", "always"]
        with open(self.log, "a") as log:
            self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        _wait(self.ping, timeout=timeout, what=f"redis on port {self.port}", log=self.log)
        return self

    def ping(self) -> bool:
        if self.proc is None or self.proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    def kill(self) -> None:
        """SIGKILL: no shutdown save, connections dropped at once."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)

    def close(self) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def system_user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def postgres_bindir() -> Path | None:
    """The newest installed PostgreSQL server binaries, or None."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3].split(".")[0])
    )
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


class PrivatePostgres:
    """A throw-away PostgreSQL cluster (trust auth, superuser ``postgres``) on a free port.

    PostgreSQL refuses to run as root, so under root the cluster belongs to the ``postgres`` system user
    and its commands run through ``runuser``.
    """

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.port = free_port()
        self.as_user: str | None = None
        if os.geteuid() == 0:
            self.as_user = "postgres"
        self.root = Path(tempfile.mkdtemp(prefix="timbang-pg-"))
        self.data = self.root / "data"
        self.socket_dir = self.root / "socket"
        self.log = self.root / "postgres.log"
        self.socket_dir.mkdir()
        if self.as_user:
            owner = pwd.getpwnam(self.as_user)
            for path in (self.root, self.socket_dir):
                os.chown(path, owner.pw_uid, owner.pw_gid)
        self.started = False

    def url(self, dbname: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{dbname}"

    def _run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        command = [str(a) for a in args]
        if self.as_user:
            command = ["runuser", "-u", self.as_user, "--", *command]
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=True)

    def _ctl(self, action: str, *extra: str) -> None:
        options = f"-p {self.port} -k {self.socket_dir} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(
            self.bindir / "pg_ctl", "-D", self.data, "-l", self.log, "-o", options, "-w", "-t", "60",
            action, *extra,
        )  # fmt: skip

    def init(self) -> PrivatePostgres:
        self._run(self.bindir / "initdb", "-D", self.data, "-U", "postgres", "--auth=trust", "-E", "UTF8")
        return self

    def start(self) -> None:
        self._ctl("start")
        self.started = True
        _wait(lambda: port_open(self.port), timeout=30, what="postgres to accept connections", log=self.log)

    def stop(self) -> None:
        """A fast shutdown: open sessions are ended and their transactions rolled back."""
        self._ctl("stop", "-m", "fast")
        self.started = False

    def restart(self) -> None:
        self._ctl("restart", "-m", "fast")
        self.started = True
        _wait(lambda: port_open(self.port), timeout=30, what="postgres to accept connections", log=self.log)

    def createdb(self, name: str) -> None:
        self._run(self.bindir / "createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", name)

    def close(self) -> None:
        if self.data.exists():
            try:
                self._ctl("stop", "-m", "immediate")
            except subprocess.CalledProcessError:
                pass  # not running
        shutil.rmtree(self.root, ignore_errors=True)

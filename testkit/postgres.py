"""A throwaway PostgreSQL server that a test may stop and start (restart tests).

Started with the binaries of Debian's ``postgresql`` package (``initdb``, ``pg_ctl`` under
``/usr/lib/postgresql/<version>/bin``) in a data folder of its own, on a free port of
127.0.0.1, never through the machine's clusters: other tests and processes keep theirs.
As root (CI) the server runs as the ``postgres`` user, which PostgreSQL requires.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from testkit.server import free_port

BINARIES = Path("/usr/lib/postgresql")


def postgres_binaries() -> Path | None:
    """The newest installed PostgreSQL's ``bin`` folder holding ``pg_ctl``, if any."""
    found = sorted(
        (path.parent for path in BINARIES.glob("*/bin/pg_ctl")),
        key=lambda path: int(path.parent.name) if path.parent.name.isdigit() else 0,
    )
    return found[-1] if found else None


def _server_user() -> str | None:
    """Who runs the server: ``postgres`` as root (it refuses root), else the caller."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        return None
    return "postgres"


class ThrowawayPostgres:
    """One server: ``start``, ``stop`` (fast: sessions are ended) and ``start`` again."""

    def __init__(self, binaries: Path, root: Path, user: str | None) -> None:
        self.port = free_port()
        self.url = f"postgresql+asyncpg://eval@127.0.0.1:{self.port}/postgres"
        self._bin = binaries
        self._data = root / "data"
        self._log = root / "server.log"
        self._user = user

    def _run(self, *command: str) -> None:
        subprocess.run(
            [str(self._bin / command[0]), *command[1:]],
            check=True,
            user=self._user,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=60,
        )

    def init(self) -> None:
        """Create the cluster: superuser ``eval``, trusted on 127.0.0.1 only."""
        self._run("initdb", "-D", str(self._data), "-U", "eval", "--auth=trust", "-E", "UTF8")

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories="
            " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        )
        data, log = str(self._data), str(self._log)
        self._run("pg_ctl", "-D", data, "-l", log, "-o", options, "-w", "start")

    def stop(self) -> None:
        """Stop the server now (``-m fast``: open sessions are ended, as in a restart)."""
        self._run("pg_ctl", "-D", str(self._data), "-m", "fast", "-w", "stop")

    def running(self) -> bool:
        """Whether the server is up (``pg_ctl status``)."""
        status = subprocess.run(
            [str(self._bin / "pg_ctl"), "-D", str(self._data), "status"],
            user=self._user,
            capture_output=True,
            check=False,
        )
        return status.returncode == 0


@contextmanager
def throwaway_postgres() -> Iterator[ThrowawayPostgres | None]:
    """A started server (None when PostgreSQL's binaries are not installed); removed after."""
    binaries = postgres_binaries()
    user = _server_user()
    if binaries is None or (os.geteuid() == 0 and user is None):
        yield None
        return
    # Not under pytest's tmp_path: as root that is private to root, and the server runs as
    # ``postgres``.
    root = Path(tempfile.mkdtemp(prefix="eval-pg-"))
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(root, entry.pw_uid, entry.pw_gid)
    server = ThrowawayPostgres(binaries, root, user)
    try:
        server.init()
        server.start()
        yield server
    finally:
        if server.running():
            server.stop()
        shutil.rmtree(root, ignore_errors=True)

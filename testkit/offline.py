"""A network with nothing but loopback: a Linux network namespace held open by a process.

Programs started in it (``network.command(argv)``) reach 127.0.0.1 of the namespace and
nothing else: no other host, no name server. Two programs in it (a service and a browser)
reach each other over loopback. Needs root and util-linux's ``unshare`` and ``nsenter``.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

# Brings the namespace's loopback up (SIOCGIFFLAGS / SIOCSIFFLAGS on "lo"), then waits.
_HOLD = """
import fcntl, signal, socket, struct
with socket.socket() as sock:
    request = struct.pack("16sH22x", b"lo", 0)
    flags = struct.unpack("16sH22x", fcntl.ioctl(sock, 0x8913, request))[1]
    fcntl.ioctl(sock, 0x8914, struct.pack("16sH22x", b"lo", flags | 0x1))
print("ready", flush=True)
signal.pause()
"""
_POLL = """
import sys, time, urllib.request
url, deadline = sys.argv[1], time.monotonic() + float(sys.argv[2])
while True:
    try:
        urllib.request.urlopen(url + "/healthz", timeout=1).close()
        break
    except OSError:
        if time.monotonic() > deadline:
            sys.exit(f"{url} did not become healthy")
        time.sleep(0.1)
"""
CLEAN_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}


@dataclass(frozen=True)
class LoopbackNetwork:
    """A network namespace whose only interface is loopback."""

    holder_pid: int

    @property
    def path(self) -> str:
        """The namespace's file, for ``nsenter --net=``."""
        return f"/proc/{self.holder_pid}/ns/net"

    def command(self, argv: Sequence[str] = ()) -> list[str]:
        """``argv`` run inside the namespace (with no ``argv``: the prefix alone)."""
        return ["nsenter", f"--net={self.path}", *argv]

    def wait_until_healthy(
        self, url: str, process: subprocess.Popen[bytes], timeout: float = 30.0
    ) -> None:
        """Poll ``url``'s ``/healthz`` from inside the namespace until it answers."""
        poll = [sys.executable, "-c", _POLL, url, str(timeout)]
        result = subprocess.run(self.command(poll), env=CLEAN_ENV, capture_output=True, check=False)
        if result.returncode != 0:
            state = f"exited with {process.returncode}" if process.poll() is not None else "alive"
            raise RuntimeError(f"server {state}: {result.stderr.decode(errors='replace')}")


@contextmanager
def loopback_network() -> Iterator[LoopbackNetwork]:
    """A new loopback-only network namespace, removed on exit.

    Raises:
        RuntimeError: the namespace cannot be made (not root, or no ``unshare``).
    """
    holder = subprocess.Popen(
        ["unshare", "--net", sys.executable, "-c", _HOLD],
        env=CLEAN_ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert holder.stdout is not None
    assert holder.stderr is not None
    try:
        if holder.stdout.readline().strip() != b"ready":
            holder.wait(timeout=10)
            raise RuntimeError(f"no network namespace: {holder.stderr.read().decode().strip()}")
        yield LoopbackNetwork(holder.pid)
    finally:
        if holder.poll() is None:
            holder.terminate()
            holder.wait(timeout=10)
        holder.stdout.close()
        holder.stderr.close()

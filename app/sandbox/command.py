"""The ``prlimit ... -- bwrap ... -- program`` command line of one sandboxed program.

Namespaces: its own PID, mount, IPC, UTS, network and cgroup namespaces (``bwrap``), a new
session, and death with the service (``--die-with-parent``; the PID namespace's init dying
kills every process left in it). File system: a fresh root holding only the read-only
runtime (``/usr``, ``/lib*``, ``/bin``, a few files of ``/etc``), a private ``/proc`` (its
own processes only), a minimal ``/dev``, a private ``/tmp`` (tmpfs), the folders it may read
and its scratch and case folders (writable), each at its own path. What a container may not
allow is a ``Features`` flag the sandbox's probe turns off, least needed first: the host name
``sandbox`` (``sethostname`` refused by the container's seccomp profile: the UTS namespace
stays, with the container's name), a fresh ``/proc`` (``/proc`` stays empty where parts of the
container's own are masked) and refusing nested user namespaces (``/proc/sys`` read-only).

Run by root, ``bwrap`` sets the sandbox up and ``setpriv`` drops to an unprivileged user
with no capabilities before the program starts (root is exempt from ``RLIMIT_NPROC``); run
by another user, the sandbox is also a user namespace where further ones are refused.
"""

from __future__ import annotations

import functools
import itertools
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.sandbox.limits import Limits

PROXY_SOCKET = "/run/eval/target-proxy.sock"
"""Where the target proxy's Unix socket appears inside the sandbox."""
FORWARDER = "/run/eval/forwarder.py"
"""Where the TCP-to-socket forwarder appears inside the sandbox."""
PROXY_PORT = 8765
"""The port the forwarder listens on, on the sandbox's own loopback."""
PROXY_URL = f"http://127.0.0.1:{PROXY_PORT}"
"""The target proxy's URL as a sandboxed program sees it."""
FORWARDER_SOURCE = Path(__file__).with_name("forwarder.py")


@dataclass(frozen=True)
class Mounts:
    """What one program sees besides the runtime.

    Attributes:
        workdir: Its scratch folder: working directory, ``HOME`` and ``TMPDIR`` (writable).
        writable: Other folders it may change (a case's workspace).
        read_only: Folders it may read (the grader's own folder).
        proxy_socket: The target proxy's Unix socket, forwarded to ``127.0.0.1:PROXY_PORT``.
    """

    workdir: Path
    writable: tuple[Path, ...] = ()
    read_only: tuple[Path, ...] = ()
    proxy_socket: Path | None = None


@dataclass(frozen=True)
class Features:
    """What bwrap is asked for beyond the namespaces; each is on unless the probe finds it refused.

    Attributes:
        hostname: Name the UTS namespace ``sandbox`` (else it keeps the host's name).
        fresh_proc: Mount a ``/proc`` of the sandbox's own processes (else an empty folder).
        no_nested_userns: Refuse user namespaces inside the sandbox (``--disable-userns``;
            only where the sandbox is itself a user namespace).
    """

    hostname: bool = True
    fresh_proc: bool = True
    no_nested_userns: bool = True

    def missing(self) -> list[str]:
        """What is off, in words (for the log)."""
        words = {
            "hostname": "the host name 'sandbox' (the UTS namespace keeps the host's)",
            "fresh_proc": "a fresh /proc (it is empty)",
            "no_nested_userns": "refusing nested user namespaces",
        }
        return [text for name, text in words.items() if not getattr(self, name)]


FEATURES_TRIED = tuple(
    Features(hostname=hostname, fresh_proc=proc, no_nested_userns=userns)
    for userns, proc, hostname in itertools.product((True, False), repeat=3)
)
"""Every combination, the most confining first (the host name matters least)."""


@dataclass(frozen=True)
class Identity:
    """Who runs the program: the service's user, or (for root) an unprivileged one."""

    as_root: bool = field(default_factory=lambda: os.geteuid() == 0)
    uid: int = 65534
    gid: int = 65534


def runtime_binds(runtime: Sequence[str]) -> list[str]:
    """Read-only binds of the runtime paths that exist (symlinks such as ``/bin`` kept)."""
    options: list[str] = []
    for entry in runtime:
        path = Path(entry)
        if path.is_symlink():
            options += ["--symlink", os.readlink(path), entry]
        elif path.exists():
            options += ["--ro-bind", entry, entry]
    return options


def _created_parents(bound: Sequence[str], mounted: Sequence[str]) -> list[str]:
    """The folders bwrap makes to hold ``bound`` (those of the runtime's files: ``/etc``, 0700).

    Each is made traversable, so the program's user reaches what is bound below it (run by
    root, a program not reaching ``/etc/ld.so.cache`` made every dynamic binary search the
    library folders one by one); a folder inside one of ``mounted`` is the host's own and left
    alone. Paths are absolute and normalised: plain string work, as this runs for every program.
    """
    parents: list[str] = []
    for path in bound:
        parts = path.rstrip("/").split("/")
        for depth in range(2, len(parts)):
            parent = "/".join(parts[:depth])
            if parent == "/tmp" or parent in parents:
                continue
            if any(parent == other or parent.startswith(other + "/") for other in mounted):
                continue
            parents.append(parent)
    return parents


@functools.lru_cache(maxsize=64)
def _prefix(
    limits: Limits, runtime: tuple[str, ...], identity: Identity, tools: Tools, features: Features
) -> tuple[str, ...]:
    """The command up to the program's own folders: the same for every program of a sandbox.

    Built once per process and sandbox (the runtime is looked at on disk then: a runtime path
    made later is seen after a restart).
    """
    command = [tools.prlimit, *limits.prlimit(), "--", tools.bwrap, "--die-with-parent"]
    command += ["--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-net"]
    command += ["--unshare-uts", "--unshare-cgroup-try"]
    if features.hostname:
        command += ["--hostname", "sandbox"]
    if not identity.as_root:
        command += ["--unshare-user"]
        if features.no_nested_userns:
            command += ["--disable-userns"]
    # The private /tmp first: a runtime path under /tmp (a tool folder of a checkout there)
    # is bound over it, not hidden by it.
    command += ["--dev", "/dev", "--size", str(limits.tmp_bytes)]
    command += ["--tmpfs", "/tmp", "--chmod", "1777", "/tmp"]
    command += runtime_binds(runtime)
    command += ["--proc", "/proc"] if features.fresh_proc else ["--dir", "/proc"]
    present = [entry for entry in runtime if os.path.lexists(entry)]
    for folder in _created_parents(present, runtime):
        command += ["--chmod", "0755", folder]
    return tuple(command)


def bwrap_command(
    argv: Sequence[str],
    mounts: Mounts,
    *,
    limits: Limits,
    runtime: Sequence[str],
    identity: Identity,
    tools: Tools,
    features: Features = Features(),
) -> list[str]:
    """The whole command line that runs ``argv`` confined (``features``: what is asked for)."""
    command = list(_prefix(limits, tuple(runtime), identity, tools, features))
    bound: list[str] = []
    for folder in mounts.read_only:
        bound.append(str(folder))
        command += ["--ro-bind", bound[-1], bound[-1]]
    for folder in (*mounts.writable, mounts.workdir):
        bound.append(str(folder))
        command += ["--bind", bound[-1], bound[-1]]
    inner = list(argv)
    if mounts.proxy_socket is not None:
        command += ["--bind", str(mounts.proxy_socket), PROXY_SOCKET]
        command += ["--ro-bind", str(FORWARDER_SOURCE), FORWARDER]
        bound += [PROXY_SOCKET, FORWARDER]
        inner = ["python3", "-I", "-S", FORWARDER, PROXY_SOCKET, str(PROXY_PORT), "--", *inner]
    for parent in _created_parents(bound, [*bound, *runtime]):
        command += ["--chmod", "0755", parent]
    command += ["--chdir", str(mounts.workdir)]
    if identity.as_root:
        command += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--", tools.setpriv]
        command += [f"--reuid={identity.uid}", f"--regid={identity.gid}", "--clear-groups"]
        command += ["--inh-caps=-all", "--bounding-set=-all"]
    return [*command, "--", *inner]


@dataclass(frozen=True)
class Tools:
    """Where the programs the sandbox is built with are (``bwrap``, ``prlimit``, ``setpriv``)."""

    bwrap: str
    prlimit: str
    setpriv: str

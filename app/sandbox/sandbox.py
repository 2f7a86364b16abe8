"""``Sandbox.run``: the one way this service runs a program a suite names.

Code graders, composite code aggregators, judge prompt programs, workspace hooks and the
``/v1`` ``python`` grader all come here. A program runs only inside ``bwrap`` (see
``command``) under the resource limits of ``limits``; where the sandbox cannot start
(``bwrap``, ``prlimit`` or ``setpriv`` missing, user namespaces not allowed) every program is
refused with ``SandboxUnavailable`` naming what is missing: nothing ever runs unconfined.
What a program wrote is returned with every configured secret scrubbed out.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.sandbox.command import FEATURES_TRIED, Features, Identity, Mounts, Tools, bwrap_command
from app.sandbox.limits import Limits
from app.sandbox.process import OutputTooLarge, run_command
from app.sandbox.scrub import scrub

DEFAULT_RUNTIME = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc/alternatives",
    "/etc/ld.so.cache",
    "/etc/localtime",
)
"""Read-only runtime every program sees: interpreters and libraries, no host data.

Each path is a bind (two mounts) set up and torn down for every program, so only what running
needs: the dynamic linker reads ``/etc/ld.so.cache``, never ``ld.so.conf`` (``ldconfig`` does).
"""
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
PROBE_SECONDS = 10.0


class SandboxError(Exception):
    """A program could not run confined, or did not finish (the message says why)."""


class SandboxUnavailable(SandboxError):
    """The sandbox cannot start here: the message names the missing tool or kernel feature."""


class SandboxTimeout(SandboxError):
    """The program ran past its time limit (its whole process tree was killed)."""


class SandboxOutputTooLarge(SandboxError):
    """The program wrote more than the output cap to one stream (it was killed)."""


@dataclass(frozen=True)
class Finished:
    """A confined program that ran to its end: its exit status and scrubbed output."""

    code: int
    stdout: str
    stderr: str
    elapsed_ms: float


_probed: dict[tuple[str, ...], Features] = {}
"""Sandboxes that started, by tools and identity: what they could be asked for."""
logger = logging.getLogger("app.sandbox")


@dataclass(frozen=True)
class Sandbox:
    """Runs programs confined (bubblewrap), under ``limits``.

    Attributes:
        limits: Resource limits of every process of a program.
        runtime: Read-only paths every program sees (interpreters, libraries).
        identity: Who the program runs as.
        secrets: Values scrubbed from everything a program wrote.
        path: The ``PATH`` inside the sandbox.
    """

    limits: Limits = field(default_factory=Limits)
    runtime: tuple[str, ...] = DEFAULT_RUNTIME
    identity: Identity = field(default_factory=Identity)
    secrets: tuple[str, ...] = ()
    path: str = SANDBOX_PATH
    _found: list[Tools] = field(default_factory=list, init=False, compare=False, repr=False)

    def tools(self) -> Tools:
        """Where ``bwrap``, ``prlimit`` and ``setpriv`` are; ``SandboxUnavailable`` if not.

        Looked up on ``PATH`` until found, then kept (a sandbox lives as long as its runner).
        """
        if self._found:
            return self._found[0]
        found = {name: shutil.which(name) for name in ("bwrap", "prlimit", "setpriv")}
        needed = ("bwrap", "prlimit", "setpriv") if self.identity.as_root else ("bwrap", "prlimit")
        missing = [name for name in needed if found[name] is None]
        if missing:
            raise SandboxUnavailable(
                "programs run only in the sandbox, which cannot start here: "
                f"{', '.join(missing)} not found (install bubblewrap and util-linux)"
            )
        self._found.append(
            Tools(found["bwrap"] or "", found["prlimit"] or "", found["setpriv"] or "")
        )
        return self._found[0]

    def visible(self, path: str) -> bool:
        """Whether an absolute program path lies in the runtime the sandbox shows."""
        return any(path == root or path.startswith(root.rstrip("/") + "/") for root in self.runtime)

    def hand_over(self, folder: Path) -> None:
        """Let the program's user write in ``folder`` (and everything in it) when run by root."""
        if not self.identity.as_root:
            return
        uid, gid = self.identity.uid, self.identity.gid
        os.chown(folder, uid, gid)
        for parent, folders, files in os.walk(folder):
            for name in (*folders, *files):
                with contextlib.suppress(FileNotFoundError):  # removed meanwhile: nothing to do
                    os.chown(os.path.join(parent, name), uid, gid, follow_symlinks=False)

    async def run(
        self,
        argv: Sequence[str],
        stdin: bytes,
        mounts: Mounts,
        *,
        env: Mapping[str, str] | None = None,
        timeout_seconds: float,
        max_output_bytes: int,
    ) -> Finished:
        """Run ``argv`` confined in ``mounts`` and return its exit status and output.

        Raises:
            SandboxUnavailable: The sandbox cannot start here (names what is missing).
            SandboxTimeout: The time limit ran out.
            SandboxOutputTooLarge: stdout or stderr passed ``max_output_bytes``.
            SandboxError: The sandbox could not start the program.
        """
        tools = self.tools()
        features = await self._probe(tools, mounts.workdir)
        command = bwrap_command(
            argv,
            mounts,
            limits=self.limits,
            runtime=self.runtime,
            identity=self.identity,
            tools=tools,
            features=features,
        )
        workdir = str(mounts.workdir)
        environment = {"PATH": self.path, "LANG": "C.UTF-8", "HOME": workdir, "TMPDIR": workdir}
        started = time.perf_counter()
        try:
            exited = await run_command(
                command,
                stdin,
                cwd=mounts.workdir,
                env={**environment, **(env or {})},
                timeout_seconds=timeout_seconds,
                max_output_bytes=max_output_bytes,
            )
        except TimeoutError:
            raise SandboxTimeout(f"timed out after {timeout_seconds:g} s") from None
        except OutputTooLarge as exc:
            raise SandboxOutputTooLarge(
                f"wrote more than {max_output_bytes} bytes to {exc.stream}"
            ) from None
        except OSError as exc:
            raise SandboxError(f"the sandbox could not start: {exc}") from None
        elapsed = (time.perf_counter() - started) * 1000
        stdout = scrub(exited.stdout.decode("utf-8", "replace"), self.secrets)
        stderr = scrub(exited.stderr.decode("utf-8", "replace"), self.secrets)
        return Finished(exited.code, stdout, stderr, elapsed)

    async def _probe(self, tools: Tools, workdir: Path) -> Features:
        """Start an empty sandbox once per process and tools; what it could be asked for.

        The most confining ``Features`` that start win; what had to be given up is logged
        with bwrap's words for it.

        Raises:
            SandboxUnavailable: It cannot start (the message holds bwrap's own words).
        """
        key = (tools.bwrap, str(self.identity.as_root))
        if key in _probed:
            return _probed[key]
        refused: list[str] = []
        for features in FEATURES_TRIED:
            if self.identity.as_root and not features.no_nested_userns:
                continue  # as root the sandbox is no user namespace: nothing to refuse
            said = await self._try(tools, workdir, features)
            if not said:
                if features.missing() and key not in _probed:
                    logger.warning(
                        "the program sandbox runs without %s (%s)",
                        ", ".join(features.missing()),
                        "; ".join(dict.fromkeys(refused)),
                    )
                _probed[key] = features
                return features
            refused.append(said)
        raise SandboxUnavailable(
            f"the program sandbox cannot start here ({refused[-1]}): bubblewrap needs user "
            "namespaces (see docs/operations.md, 'Security model')"
        )

    async def _try(self, tools: Tools, workdir: Path, features: Features) -> str:
        """Run ``true`` in a sandbox; what bwrap refused, or an empty string.

        Raises:
            SandboxUnavailable: It did not finish or could not be started at all: nothing
                to learn about ``features`` (a loaded machine must not cost confinement).
        """
        command = bwrap_command(
            ["true"],
            Mounts(workdir),
            limits=self.limits,
            runtime=self.runtime,
            identity=self.identity,
            tools=tools,
            features=features,
        )
        try:
            exited = await run_command(
                command,
                b"",
                cwd=workdir,
                env={"PATH": self.path},
                timeout_seconds=PROBE_SECONDS,
                max_output_bytes=65536,
            )
        except (TimeoutError, OSError, OutputTooLarge) as exc:
            raise SandboxUnavailable(
                f"the program sandbox could not be tried here: {exc!r}"
            ) from None
        if exited.code == 0:
            return ""
        said = exited.stderr.decode("utf-8", "replace").strip()[-500:]
        return said or f"exit code {exited.code}"

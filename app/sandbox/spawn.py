"""Start a program without the event loop's own spawn, then watch it from the loop.

uvloop's spawn runs Python's at-fork hooks in the child (uvloop issue #749). In a process with
other threads (mini-racer's V8 threads, worker threads), a hook that takes a lock another
thread held at fork time (logging's, threading's) blocks the child forever before ``exec``,
and libuv blocks the loop waiting to hear that the ``exec`` happened. ``subprocess.Popen``
(``_posixsubprocess``: vfork/fork and exec in C) runs no Python in the child when no
``preexec_fn`` is given, so every program is started here and its pipes are then attached to
the running loop. Its exit is learned from a pidfd the loop watches (no thread per program).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

PIPE = subprocess.PIPE
DEVNULL = subprocess.DEVNULL
STDOUT = subprocess.STDOUT


class Child:
    """A started program: its pid, its pipes as streams, its exit status once it exits."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen
        self.pid = popen.pid
        self.stdin: asyncio.StreamWriter | None = None
        self.stdout: asyncio.StreamReader | None = None
        self.stderr: asyncio.StreamReader | None = None
        self._transports: list[asyncio.BaseTransport] = []
        self._exited: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    @property
    def returncode(self) -> int | None:
        """The exit status once the program has been reaped, else None."""
        return self._popen.returncode

    async def wait(self) -> int:
        """The exit status (negative: the signal that ended it)."""
        return await asyncio.shield(self._exited)

    def kill(self) -> None:
        """SIGKILL the program (nothing if it has been reaped already)."""
        if self._popen.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self._popen.kill()

    def close(self) -> None:
        """Close every pipe still open (idempotent)."""
        for transport in self._transports:
            transport.close()

    async def _attach(self) -> None:
        loop = asyncio.get_running_loop()
        popen = self._popen
        if popen.stdin is not None:
            transport, protocol = await loop.connect_write_pipe(
                asyncio.streams.FlowControlMixin, popen.stdin
            )
            self._transports.append(transport)
            self.stdin = asyncio.StreamWriter(transport, protocol, None, loop)
        self.stdout = await self._reader(popen.stdout)
        self.stderr = await self._reader(popen.stderr)
        self._watch_exit(loop)

    async def _reader(self, pipe: IO[bytes] | None) -> asyncio.StreamReader | None:
        if pipe is None:
            return None
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe
        )
        self._transports.append(transport)
        return reader

    def _watch_exit(self, loop: asyncio.AbstractEventLoop) -> None:
        pidfd = os.pidfd_open(self.pid)

        def exited() -> None:
            code = self._popen.poll()
            if code is None:  # not yet (a spurious wake-up)
                return
            loop.remove_reader(pidfd)
            os.close(pidfd)
            if not self._exited.done():
                self._exited.set_result(code)

        loop.add_reader(pidfd, exited)


async def spawn(
    command: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdin: int = PIPE,
    stdout: int = PIPE,
    stderr: int = PIPE,
    start_new_session: bool = False,
) -> Child:
    """Start ``command`` (``OSError`` if it cannot be) with its pipes on the running loop."""
    # Popen returns once the child has exec'd (vfork), as the loop's own spawn does.
    popen = subprocess.Popen(  # noqa: ASYNC220 - the point: see the module docstring
        list(command),
        cwd=cwd,
        env=dict(env),
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        bufsize=0,
        start_new_session=start_new_session,
    )
    child = Child(popen)
    try:
        await child._attach()
    except BaseException:
        child.kill()
        child.close()
        popen.wait()
        raise
    return child

"""Start a sandboxed command, feed its stdin, read its output under a cap, kill it on time.

The command runs in a new session (its own process group); the group is killed when the
time limit runs out, when stdout or stderr pass the cap, or when the caller is cancelled.
Output is read in chunks and the read stops at the cap, so no more than the cap (plus one
chunk) is ever held in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.sandbox.spawn import Child, spawn

CHUNK = 65536
REAP_SECONDS = 5.0
"""Longest wait for a killed program's pipes to close."""


class OutputTooLarge(Exception):
    """A stream of the program passed the output cap."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.stream = stream


@dataclass(frozen=True)
class Exited:
    """A finished command: its exit status and what it wrote (raw bytes)."""

    code: int
    stdout: bytes
    stderr: bytes


def _kill(process: Child) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)


async def _reap(process: Child) -> None:
    """Wait for a killed command, draining its pipes (the time limit guards the wait)."""
    with contextlib.suppress(TimeoutError, ProcessLookupError, OSError):
        async with asyncio.timeout(REAP_SECONDS):
            for stream in (process.stdout, process.stderr):
                if stream is not None:
                    while await stream.read(CHUNK):
                        pass
            await process.wait()


async def read_capped(stream: asyncio.StreamReader, limit: int, name: str) -> bytes:
    """Everything ``stream`` holds; ``OutputTooLarge`` as soon as it passes ``limit`` bytes."""
    data = bytearray()
    while chunk := await stream.read(CHUNK):
        data.extend(chunk)
        if len(data) > limit:
            raise OutputTooLarge(name)
    return bytes(data)


async def run_command(
    command: Sequence[str],
    stdin: bytes,
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_seconds: float,
    max_output_bytes: int,
) -> Exited:
    """Run ``command`` to its end; ``TimeoutError``, ``OutputTooLarge`` or ``OSError`` if not."""
    process = await spawn(command, cwd=cwd, env=env, start_new_session=True)
    try:
        async with asyncio.timeout(timeout_seconds):
            stdout, stderr = await _communicate(process, stdin, max_output_bytes)
            code = await process.wait()
    finally:
        _kill(process)
        await asyncio.shield(_reap(process))
        process.close()
    return Exited(code, stdout, stderr)


async def _communicate(process: Child, stdin: bytes, limit: int) -> tuple[bytes, bytes]:
    assert process.stdout is not None
    assert process.stderr is not None

    async def feed() -> None:
        # A program may exit (or close its stdin) before reading: the loop may then have the
        # pipe closed already and refuses the write with a RuntimeError, so look first (nothing
        # can close it between the look and the write: both run in this one callback).
        assert process.stdin
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            if stdin and not process.stdin.is_closing():
                process.stdin.write(stdin)
                await process.stdin.drain()
        process.stdin.close()

    try:
        async with asyncio.TaskGroup() as group:
            group.create_task(feed())
            out = group.create_task(read_capped(process.stdout, limit, "stdout"))
            err = group.create_task(read_capped(process.stderr, limit, "stderr"))
    except BaseExceptionGroup as failed:
        raise failed.exceptions[0] from None
    return out.result(), err.result()

"""CPU-heavy Python work of a request in processes of their own: the loop never waits for it.

A worker thread keeps the event loop turning but shares the GIL with it: checking a 4.8 MB
JSONL upload of 400,000 lines in one held ``/healthz`` 0.2-0.5 s at a time (the garbage
collector's full passes over the objects the check builds hold the GIL throughout), and
grader templates rendering for their whole time limit held it 130-330 ms on a loaded
machine. In a process of its own such work costs the service only the copy of its input and
result, both small (a file's bytes in, a count out; a template's scope in, text out).

``PROCESSES`` processes, shared by everything in the OS process that holds them: a service
takes a hold as it starts (``start``; ``spawn``: the service's threads are not forked) and
lets go as it shuts down (``stop``); the processes stop when the last hold goes. A server
process builds one app, so its shutdown stops them (under uvicorn a SIGTERM'd process ends
right after its lifespan, with no interpreter exit to rely on). A process that builds many
apps in turn (the test session) takes a hold of its own (``hold``) for its whole life, so
they are started once rather than per app (0.2 s of CPU each time), and lets go at its real
end. Each also ends on its own when the service is killed outright, which never stops them.
One that died (killed for memory) is replaced at the next call. What runs there must be
importable, and take and return picklable values.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import TypeVar

import anyio.to_thread

T = TypeVar("T")
PROCESSES = 2
"""Processes for CPU-heavy work: a large upload being checked leaves one for templates."""
NICENESS = 10
"""Their scheduling priority below the service's: on a busy machine the kernel serves the
event loop before them."""


def lower_priority() -> None:
    """Give the calling thread ``NICENESS`` (Linux: a thread's own; elsewhere nothing).

    For threads that only burn CPU (V8 searches, checks): on a busy machine the kernel then
    runs the event loop's thread before them. The GIL is not the matter here (those let go
    of it); the cores are.
    """
    if sys.platform == "linux":
        os.setpriority(os.PRIO_PROCESS, 0, NICENESS)  # 0: this thread, on Linux


_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None
_holds = 0
"""Services (and ``hold`` callers) using the processes: the last to let go stops them."""


PARENT_POLL_SECONDS = 1.0
"""How often a CPU process looks whether the service that started it is still there."""


def _exit_with(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_SECONDS)
    os._exit(0)


def _initialize(niceness: int, parent: int) -> None:
    """In each CPU process: lower its priority, and end it when the service ends.

    A service killed outright (kill -9, a crash) never shuts its pool down, and the processes
    would wait on their queue for ever (each holds both ends of it); so each one watches for
    its parent to change (it is re-parented when the service dies) and exits then.
    """
    os.nice(niceness)
    threading.Thread(
        target=_exit_with, args=(parent,), name="exit-with-parent", daemon=True
    ).start()


def _executor() -> ProcessPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ProcessPoolExecutor(
                PROCESSES,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_initialize,
                initargs=(NICENESS, os.getpid()),
            )
        return _pool


def _discard(broken: ProcessPoolExecutor) -> None:
    global _pool
    with _lock:
        if _pool is broken:
            _pool = None
    broken.shutdown(wait=False, cancel_futures=True)


async def run_in_process(function: Callable[..., T], *args: object) -> T:
    """``function(*args)`` in one of the CPU processes; its result (or its exception)."""
    pool = _executor()
    try:
        # Submitted from a thread: submitting may start a process.
        future = await anyio.to_thread.run_sync(pool.submit, function, *args)
        return await asyncio.wrap_future(future)
    except BrokenProcessPool:
        _discard(pool)  # the process died: the next call starts another one
        raise


def start() -> None:
    """Take a hold, and start the processes now if they are not running (blocking: thread).

    Now rather than at a request's first use: starting one costs the service a fork; a
    request that had to wait for it stalled ``/healthz`` 150-280 ms on a loaded machine.
    """
    global _holds
    with _lock:
        _holds += 1
    pool = _executor()
    for _ in range(PROCESSES):
        pool.submit(os.getpid)


def stop() -> None:
    """Let go of a hold; the last one stops the processes (blocking: call it from a thread).

    A service lets go as it shuts down. Left to the interpreter's exit, the pool held a
    graceful shutdown past its time limit and left its queue's semaphores to the resource
    tracker (uvicorn ends a SIGTERM'd process by the signal, right after the lifespan).
    """
    global _pool, _holds
    with _lock:
        _holds = max(_holds - 1, 0)
        if _holds:
            return
        pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)


@contextmanager
def hold() -> Iterator[None]:
    """Keep the processes for a block in which services start and stop several times.

    For a process that builds app after app (the tests): each app's start then finds them
    running, and its shutdown leaves them; they stop as the block ends.
    """
    start()
    try:
        yield
    finally:
        stop()

"""CPU-heavy Python work of a request in processes of their own: the loop never waits for it.

A worker thread keeps the event loop turning but shares the GIL with it: checking a 4.8 MB
JSONL upload of 400,000 lines in one held ``/healthz`` 0.2-0.5 s at a time (the garbage
collector's full passes over the objects the check builds hold the GIL throughout), and
grader templates rendering for their whole time limit held it 130-330 ms on a loaded
machine. In a process of its own such work costs the service only the copy of its input and
result, both small (a file's bytes in, a count out; a template's scope in, text out).

``PROCESSES`` processes, started with the service (``start``; ``spawn``: the service's
threads are not forked) and stopped as the service shuts down (``stop``; an app built
again in the same process, as tests do, starts new ones); each also ends on its own when
the service is killed outright, which never stops them. One that died
(killed for memory) is replaced at the next call. What runs there must be importable, and
take and return picklable values.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
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
    """Start the processes now (blocking: call it from a thread), not at a request's first use.

    Starting one costs the service a fork; a request that had to wait for it stalled
    ``/healthz`` 150-280 ms on a loaded machine.
    """
    pool = _executor()
    for _ in range(PROCESSES):
        pool.submit(os.getpid)


def stop() -> None:
    """Stop the processes (blocking: call it from a thread), as the service shuts down.

    Left to the interpreter's exit, the pool held a graceful shutdown past its time limit
    and left its queue's semaphores to the resource tracker; the next ``start`` (an app
    built again in the same process) starts new ones.
    """
    global _pool
    with _lock:
        pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)

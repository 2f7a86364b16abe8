"""How long a probe holds a real service: ``/healthz`` polled from a process of its own.

The poller is a separate Python process, so neither the test's own work (building a large
body holds this process's GIL) nor its threads count as the service's stall. It asks for
``/healthz`` every ``interval`` seconds and reports each answer's latency; the slowest
answer while a probe runs is the stall the probe caused. The answers of a quiet moment just
before the probe measure the machine's own noise (a loaded 2-core machine answers in up to a
few hundred ms with no probe at all), which a bound may allow on top of its own.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

POLLER = """
import json, sys, time
import httpx
url, interval = sys.argv[1], float(sys.argv[2])
with httpx.Client(timeout=120) as client:
    while True:
        started = time.perf_counter()
        status = client.get(url).status_code
        print(json.dumps([time.perf_counter(), time.perf_counter() - started, status]), flush=True)
        time.sleep(interval)
"""


@dataclass(frozen=True)
class Stall:
    """The slowest ``/healthz`` answers: while the probe ran, and in the quiet moment before."""

    during: float
    quiet: float

    def within(self, bound: float) -> bool:
        """Whether the probe held the service less than ``bound`` beyond the machine's noise."""
        return self.during < bound + self.quiet


def probe_stall(
    url: str, probe: Callable[[], T], *, interval: float = 0.05, quiet_seconds: float = 1.0
) -> tuple[T, Stall]:
    """Run ``probe`` while another process polls ``url``'s ``/healthz``; its result and stall.

    The quiet moments are ``quiet_seconds`` before the probe and as long as the probe took
    after it (at least ``quiet_seconds``, at most 10 s): a long probe meets more of the
    machine's noise than a short one. Every answer must be a 200; answers are collected
    until one asked after the quiet moment, so one held by the probe counts its whole wait.
    """
    poller = subprocess.Popen(
        [sys.executable, "-c", POLLER, f"{url}/healthz", str(interval)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert poller.stdout is not None
    try:
        first = json.loads(poller.stdout.readline())  # the poller is up and answered once
        assert first[2] == 200, first
        time.sleep(quiet_seconds)
        started = time.perf_counter()
        result = probe()
        ended = time.perf_counter()
        time.sleep(min(max(ended - started, quiet_seconds), 10.0))
        quiet_ended = time.perf_counter()
        answers: list[tuple[float, float]] = []
        while True:
            line = poller.stdout.readline()
            at, took, status = json.loads(line)
            assert status == 200, line
            answers.append((at, took))
            if at - took > quiet_ended:
                break
    finally:
        poller.kill()
        poller.wait()
        poller.stdout.close()
    # An answer pending at any moment of the probe counts as the probe's.
    during = [took for at, took in answers if at - took <= ended and at >= started]
    quiet = [took for at, took in answers if at - took > ended or at < started]
    return result, Stall(during=max(during, default=0.0), quiet=max(quiet, default=0.0))

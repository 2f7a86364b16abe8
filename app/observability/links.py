"""The state of a process's long-lived database links, for ``/readyz`` and ``/metrics``.

A link is a connection or loop that lives as long as the process: the case queue's
connection, the fleet limits' listener, the renewal of slots, the sweep of runs. Each
reports ``up`` when it works and ``down`` (with the error) when it does not; while any is
down the process is not ready, and the metrics say which and how often it failed.
``Backoff`` spaces their attempts to reconnect.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass


@dataclass
class LinkState:
    """One link: working or not, since when, the last error, how often it went down."""

    up: bool
    since: float
    error: str = ""
    failures: int = 0


class Links:
    """The links of one process, by name (``case_queue``, ``fleet_listener``...)."""

    def __init__(self) -> None:
        self._states: dict[str, LinkState] = {}

    def up(self, name: str) -> None:
        """The link works (again)."""
        state = self._states.get(name)
        if state is None:
            self._states[name] = LinkState(up=True, since=time.monotonic())
        elif not state.up:
            state.up, state.since, state.error = True, time.monotonic(), ""

    def down(self, name: str, error: BaseException | str) -> None:
        """The link failed with ``error``; counted once per outage."""
        reason = error if isinstance(error, str) else type(error).__name__
        state = self._states.setdefault(name, LinkState(up=True, since=time.monotonic()))
        if state.up:
            state.up, state.since = False, time.monotonic()
            state.failures += 1
        state.error = reason

    def states(self) -> dict[str, LinkState]:
        """Every link reported so far, by name."""
        return dict(self._states)

    def checks(self) -> dict[str, str]:
        """Readiness checks: ``ok``, or ``down for N s: <error>, reconnecting``."""
        now = time.monotonic()
        return {
            name: "ok"
            if state.up
            else f"down for {now - state.since:.0f} s: {state.error}, reconnecting"
            for name, state in sorted(self._states.items())
        }


class Backoff:
    """Delays between attempts: doubling from ``first`` up to ``ceiling``, with jitter."""

    def __init__(self, first: float = 0.25, ceiling: float = 5.0) -> None:
        self.first = first
        self.ceiling = ceiling
        self._next = first

    def delay(self) -> float:
        """The delay before the next attempt (each one about twice the last)."""
        delay = self._next
        self._next = min(self.ceiling, self._next * 2)
        return delay * random.uniform(0.8, 1.2)  # the jitter spreads processes apart

    def reset(self) -> None:
        """An attempt succeeded: the next outage starts from ``first`` again."""
        self._next = self.first

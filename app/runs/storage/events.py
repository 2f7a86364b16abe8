"""Server-sent events of a run, read from the database.

Every event has the run-local number stored with it as its SSE ``id``; a client that
reconnects with ``Last-Event-ID: N`` gets exactly the events numbered above N. The stream
ends after ``run_completed`` (or at once when the run has finished and nothing is left).
Between reads the stream wakes on this process's next commit, else every ``POLL_SECONDS``
(writes of other processes sharing the database).
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator

from app.errors import RunNotFound
from app.runs.models import StoredEvent
from app.runs.storage.store import RunStore

POLL_SECONDS = 0.5
MAX_EVENT_NUMBER = 2**63 - 1
_EVENT_NUMBER = re.compile(r"[0-9]{1,19}")
EVENT_TYPES = ("case_completed", "progress", "run_completed")


def parse_last_event_id(value: str | None) -> int:
    """The event number a client last saw (0 for none or a value this service never sent).

    Event numbers are ASCII digits within the database's 64-bit range; anything else (a
    word, a negative or fractional number, other scripts' digits, a number past the range)
    cannot be one the service sent, so the stream starts from the first event.
    """
    text = (value or "").strip()
    if not _EVENT_NUMBER.fullmatch(text) or int(text) > MAX_EVENT_NUMBER:
        return 0
    return int(text)


async def stream_run_events(
    store: RunStore, run_id: str, *, after: int, poll_seconds: float = POLL_SECONDS
) -> AsyncGenerator[StoredEvent, None]:
    """Yield the run's events numbered above ``after``, following it until it completes."""
    await store.get_run(run_id)
    last = after
    while True:
        events = await store.events_after(run_id, last)
        for event in events:
            last = event.seq
            yield event
            if event.type == "run_completed":
                return
        if events:
            continue
        try:
            run = await store.get_run(run_id)
        except RunNotFound:
            return
        if run.finished and not await store.events_after(run_id, last, limit=1):
            return
        await store.wait_for_commit(poll_seconds)

"""Server-Sent Events read from a streamed HTTP body (the parts of the format the service sends).

Fields ``id``, ``event`` and ``data`` (several ``data`` lines joined by newlines); comment lines
(``:`` pings) are skipped; a blank line ends an event.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Event:
    """One event of the stream."""

    id: str | None
    type: str
    data: str


async def parse_events(lines: AsyncIterator[str]) -> AsyncIterator[Event]:
    """The events of a stream of lines (as ``httpx.Response.aiter_lines`` gives them)."""
    event_id: str | None = None
    event_type, data = "message", list[str]()
    async for line in lines:
        if not line:
            if data:
                yield Event(event_id, event_type, "\n".join(data))
            event_id, event_type, data = None, "message", []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "id":
            event_id = value
        elif name == "event":
            event_type = value
        elif name == "data":
            data.append(value)

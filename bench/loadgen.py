"""A minimal keep-alive HTTP/1.1 load generator over asyncio streams (lean on client CPU)."""

from __future__ import annotations

import asyncio
import json
import time
from urllib.parse import urlsplit


def build_request(host: str, method: str, path: str, body: object | None) -> bytes:
    payload = b"" if body is None else json.dumps(body).encode()
    head = f"{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {len(payload)}\r\n"
    if body is not None:
        head += "Content-Type: application/json\r\n"
    return (head + "\r\n").encode() + payload


async def _read_response(reader: asyncio.StreamReader) -> int:
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    if length:
        await reader.readexactly(length)
    return status


async def requests_per_second(
    url: str, method: str, path: str, body: object | None, seconds: float, connections: int
) -> float:
    """Keep ``connections`` connections busy for ``seconds``; return completed requests/s."""
    parts = urlsplit(url)
    request = build_request(parts.netloc, method, path, body)
    done = 0
    deadline = time.perf_counter() + seconds

    async def connection() -> None:
        nonlocal done
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        try:
            while time.perf_counter() < deadline:
                writer.write(request)
                status = await _read_response(reader)
                if status >= 400:
                    raise RuntimeError(f"{method} {path} answered {status}")
                done += 1
        finally:
            writer.close()

    start = time.perf_counter()
    await asyncio.gather(*(connection() for _ in range(connections)))
    return done / (time.perf_counter() - start)

"""A webhook receiver on 127.0.0.1 for tests: records every POST, can fail or be down."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    """One POST the receiver got: its headers (lower-case names) and body."""

    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """What a running receiver got; ``fail_next`` answers 503 to that many POSTs first."""

    url: str
    received: list[Received] = field(default_factory=list)
    answered: list[int] = field(default_factory=list)
    fail_next: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


@contextmanager
def webhook_receiver(port: int = 0) -> Iterator[Receiver]:
    """Serve on 127.0.0.1:``port`` (0: a free one) until the block ends."""
    state: list[Receiver] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            receiver = state[0]
            with receiver.lock:
                receiver.received.append(
                    Received({k.lower(): v for k, v in self.headers.items()}, body)
                )
                failing = receiver.fail_next > 0
                receiver.fail_next -= 1 if failing else 0
                code = 503 if failing else 200
                receiver.answered.append(code)
            self.send_response(code)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *_: object) -> None:
            return  # quiet

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    state.append(Receiver(url=f"http://127.0.0.1:{server.server_address[1]}/hooks"))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state[0]
    finally:
        server.shutdown()
        server.server_close()

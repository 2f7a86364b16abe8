"""A TCP proxy on 127.0.0.1 that cuts the first event stream through it after some bytes.

Every other connection is passed through untouched. What clients sent is kept (the
``Last-Event-ID`` of each request for a run's events, in order), so a test sees where a
client resumed.
"""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field

EVENTS_REQUEST = re.compile(rb"GET /runs/[^ ]+/events HTTP/1\.1\r\n(.*?)\r\n\r\n", re.DOTALL)
LAST_EVENT_ID = re.compile(rb"^last-event-id: *(\S+)", re.IGNORECASE | re.MULTILINE)


@dataclass
class CuttingProxy:
    """Forwards to ``upstream``; the first event stream is closed after ``cut_after`` bytes."""

    upstream: int
    cut_after: int
    port: int = 0
    resumed_from: list[str | None] = field(default_factory=list)
    cuts: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _serve(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=self._connection, args=(client,), daemon=True).start()

    def _connection(self, client: socket.socket) -> None:
        upstream = socket.create_connection(("127.0.0.1", self.upstream))
        streaming = threading.Event()
        threading.Thread(
            target=self._requests, args=(client, upstream, streaming), daemon=True
        ).start()
        sent = 0
        cut_here = False
        try:
            while data := upstream.recv(65536):
                if streaming.is_set() and not cut_here:
                    with self._lock:
                        cut_here = self.cuts == 0
                        self.cuts += cut_here
                if cut_here:
                    if sent + len(data) >= self.cut_after:
                        client.sendall(data[: self.cut_after - sent])
                        break
                    sent += len(data)
                client.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (client, upstream):
                with suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()

    def _requests(
        self, client: socket.socket, upstream: socket.socket, streaming: threading.Event
    ) -> None:
        try:
            while data := client.recv(65536):
                request = EVENTS_REQUEST.search(data)
                if request:
                    header = LAST_EVENT_ID.search(request[1])
                    self.resumed_from.append(header[1].decode() if header else None)
                    streaming.set()
                upstream.sendall(data)
        except OSError:
            pass


@contextmanager
def cutting_proxy(upstream: int, cut_after: int) -> Iterator[CuttingProxy]:
    """A running proxy to ``127.0.0.1:upstream``; its port is ``proxy.port``."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    proxy = CuttingProxy(upstream, cut_after, port=listener.getsockname()[1])
    threading.Thread(target=proxy._serve, args=(listener,), daemon=True).start()
    try:
        yield proxy
    finally:
        listener.close()

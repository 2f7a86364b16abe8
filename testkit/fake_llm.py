"""A fake LLM server: OpenAI (chat, Responses, embeddings, moderations), Azure, Anthropic, Gemini.

It is a real HTTP server on 127.0.0.1 (uvicorn running a bare ASGI app) so adapters are tested
over real sockets. It records every request (wire, path, headers, JSON body), counts requests
in flight (and the peak), notices clients that drop a request, and can inject latency, error
statuses with ``Retry-After``, hangs and malformed bodies, per request (``script``) or through
a ``responder`` function.

Default replies: a judge call (structured output requested, or ``[[ ## candidate_answer ## ]]``
in the prompt) gets a verdict JSON (an instance of the requested schema if there is one); any
other call gets the last user message echoed. A forced OpenAI function tool is answered with a
tool call. ``POST .../embeddings`` (OpenAI's) gets one deterministic vector per input, from
the input's hashed words (``app.providers.adapters.hashed_embeddings``): similar texts are close.
``POST .../moderations`` flags each input by ``fake_wire.MODERATION_MARKERS`` ("kill yourself":
self-harm and S10). ``POST .../models/<model>`` (Hugging Face text classification) scores
``hate`` and ``nothate`` (``fake_wire.classification_body``).

Modes of real servers (``MODES``, or ``--mode`` standalone): ``refuse-json-schema`` answers
``response_format: json_schema`` as llama-cpp-python does (500, "Input should be 'text' or
'json_object'"); ``refuse-response-format`` refuses any ``response_format`` (400);
``runaway`` generates until the request's output-token budget and stops there (finish reason
``length``), or, with no budget, streams a reply that never ends; ``runaway-unbounded``
ignores the budget and never ends.

Use in tests through the ``fake_llm`` fixture (``serve_fake_llm``); run standalone for
benchmarks with ``python -m testkit.fake_llm --port 8900 --latency-ms 50``.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar

import uvicorn

from testkit.fake_wire import (
    JUDGE_MARKER,
    RecordedRequest,
    Reply,
    error,
    output_budget,
    record_request,
    render,
    reply_usage,
    request_body,
    runaway_text,
)
from testkit.wire_shapes import shape_problems

__all__ = [
    "JUDGE_MARKER",
    "MODES",
    "FakeLLM",
    "RecordedRequest",
    "Reply",
    "error",
    "serve_fake_llm",
]

HANG_LIMIT_SECONDS = 30.0

Responder = Callable[[RecordedRequest], Reply | None]

LLAMA_CPP_PYTHON_REFUSAL = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
    "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
    "'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File \"llama_cpp/server/app.py\", "
    "line 376, in create_chat_completion\n    POST /v1/chat/completions"
)
"""What llama-cpp-python's server answers (with status 500) to ``type: json_schema``."""


def refuse_json_schema(recorded: RecordedRequest) -> Reply | None:
    """Refuse ``response_format: {type: json_schema}`` as llama-cpp-python does."""
    response_format = request_body(recorded).get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        error = {"message": LLAMA_CPP_PYTHON_REFUSAL, "type": "internal_server_error",
                 "param": None, "code": None}  # fmt: skip
        return Reply(status=500, body={"error": error})
    return None


def refuse_response_format(recorded: RecordedRequest) -> Reply | None:
    """Refuse any ``response_format``, as a server that does not implement it."""
    if "response_format" in request_body(recorded):
        error = {"message": "response_format is not supported by this server",
                 "type": "invalid_request_error", "param": "response_format",
                 "code": None}  # fmt: skip
        return Reply(status=400, body={"error": error})
    return None


MODES: dict[str, Responder] = {
    "refuse-json-schema": refuse_json_schema,
    "refuse-response-format": refuse_response_format,
    "runaway": lambda _: Reply(runaway=True),
    "runaway-unbounded": lambda _: Reply(runaway=True, ignore_budget=True),
}
"""Behaviours of real servers, by name (``responder`` values)."""


class FakeLLM:
    """State and controls of one running fake server."""

    def __init__(self, *, latency: float = 0.0) -> None:
        self.url = ""
        self.requests: list[RecordedRequest] = []
        self.in_flight = 0
        self.peak_in_flight = 0
        self.completed = 0
        self.disconnects = 0
        self.latency = latency
        self.responder: Responder | None = None
        self._script: deque[Reply] = deque()
        self.record = True
        self.check_shapes = True
        """Answer 400 to a body its API would refuse (``testkit.wire_shapes``)."""
        self.shape_errors: list[str] = []

    def script(self, *replies: Reply) -> None:
        """Answer the next requests with these replies, in order, then by default."""
        self._script.extend(replies)

    def reset(self) -> None:
        """Forget recorded requests and counters (the script too)."""
        self.requests.clear()
        self.shape_errors.clear()
        self._script.clear()
        self.peak_in_flight = self.in_flight
        self.completed = 0
        self.disconnects = 0

    def next_reply(self, recorded: RecordedRequest) -> Reply:
        """400 to a body its API would refuse, else scripted, responder's or default."""
        problems = shape_problems(recorded.wire, recorded.json) if self.check_shapes else []
        if problems:
            self.shape_errors += problems
            return error(400, "invalid request body: " + "; ".join(problems[:5]))
        if self._script:
            return self._script.popleft()
        if self.responder is not None:
            reply = self.responder(recorded)
            if reply is not None:
                return reply
        return Reply()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """The ASGI application."""
        if scope["type"] != "http":
            return
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            await self._handle(scope, receive, send)
        finally:
            self.in_flight -= 1

    async def _handle(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        chunks = []
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                self.disconnects += 1
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        recorded = record_request(scope, b"".join(chunks))
        if self.record:
            self.requests.append(recorded)
        reply = self.next_reply(recorded)
        if reply.hang:
            await self._wait_for_disconnect(receive)
            return
        budget = None if reply.ignore_budget else output_budget(recorded)
        if reply.runaway and budget is None:
            await self._stream_forever(receive, send, reply.token_seconds)
            return
        if reply.runaway and budget is not None:
            await asyncio.sleep(budget * reply.token_seconds)
            reply = Reply(text=runaway_text(budget))
        delay = reply.delay or self.latency
        if delay:
            await asyncio.sleep(delay)
        status, headers, payload = render(recorded, reply)
        recorded.status, recorded.usage = status, reply_usage(payload)
        # A content-length (not chunked) reply goes out in one write: no delayed-ACK stalls.
        headers.append((b"content-length", str(len(payload)).encode()))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": payload})
        self.completed += 1

    async def _stream_forever(self, receive: Any, send: Any, token_seconds: float) -> None:
        """Start a JSON reply and add a token to it until the client goes away."""
        gone = asyncio.Event()

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            gone.set()

        watcher = asyncio.create_task(watch())
        start = {"type": "http.response.start", "status": 200,
                 "headers": [(b"content-type", b"application/json")]}  # fmt: skip
        await send(start)
        chunk = b'{"choices": [{"message": {"content": "'
        try:
            async with asyncio.timeout(HANG_LIMIT_SECONDS):
                while not gone.is_set():
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                    chunk = b"very "
                    await asyncio.sleep(token_seconds)
        except TimeoutError:
            pass
        finally:
            watcher.cancel()
        if gone.is_set():
            self.disconnects += 1

    async def _wait_for_disconnect(self, receive: Any) -> None:
        try:
            async with asyncio.timeout(HANG_LIMIT_SECONDS):
                while (await receive())["type"] != "http.disconnect":
                    pass
            self.disconnects += 1
        except TimeoutError:
            pass


class Served(Protocol):
    """What ``RunningServer`` serves: an ASGI app told its address (``url``)."""

    url: str

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None: ...


ServedT = TypeVar("ServedT", bound=Served)


class FakeLLMs:
    """One server for fake LLMs used one after another (the tests', one each).

    Starting and stopping a server per test cost each test 0.2 s. Each ``serving`` block
    gets a fresh ``FakeLLM`` at the same address; between blocks requests get a 503, so one
    that arrives after its test has ended is never taken for the next test's.
    """

    def __init__(self) -> None:
        self.url = ""
        self._current: FakeLLM | None = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """The ASGI application: the current fake's, else a 503."""
        fake = self._current
        if fake is not None:
            await fake(scope, receive, send)
        elif scope["type"] == "http":
            payload = b"no test is using the fake LLM now"
            headers = [(b"content-type", b"text/plain"), (b"content-length", b"%d" % len(payload))]
            await send({"type": "http.response.start", "status": 503, "headers": headers})
            await send({"type": "http.response.body", "body": payload})

    @contextmanager
    def serving(self) -> Iterator[FakeLLM]:
        """A fresh fake served at ``url`` while the block runs."""
        fake = FakeLLM()
        fake.url = self.url
        self._current = fake
        try:
            yield fake
        finally:
            self._current = None


class RunningServer:
    """A ``FakeLLM`` (or ``FakeLLMs``) served by uvicorn in a background thread."""

    def __init__(self, fake: Served, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.fake = fake
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((host, port))
        bound_port = self._socket.getsockname()[1]
        fake.url = f"http://{host}:{bound_port}"
        config = uvicorn.Config(
            fake, lifespan="off", log_level="warning", access_log=False, ws="none",
            timeout_graceful_shutdown=1, loop="asyncio",
        )  # fmt: skip
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, name="fake-llm", daemon=True)

    def _run(self) -> None:
        asyncio.run(self._server.serve(sockets=[self._socket]))

    def start(self) -> None:
        """Start serving; return once the server accepts connections."""
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("fake LLM server did not start")
            time.sleep(0.005)

    def stop(self) -> None:
        """Stop serving and wait for the thread."""
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._socket.close()


@contextmanager
def serve_fake_llm() -> Iterator[FakeLLM]:
    """A fake LLM server on 127.0.0.1 and a free port, while the block runs."""
    with _serving(FakeLLM()) as fake:
        yield fake


@contextmanager
def serve_fake_llms() -> Iterator[FakeLLMs]:
    """One server on 127.0.0.1 and a free port for fake LLMs in turn (``FakeLLMs.serving``)."""
    with _serving(FakeLLMs()) as fakes:
        yield fakes


@contextmanager
def _serving(app: ServedT) -> Iterator[ServedT]:
    server = RunningServer(app)
    server.start()
    try:
        yield app
    finally:
        server.stop()


def main() -> None:
    """Serve the fake LLM in the foreground (for benchmarks)."""
    parser = argparse.ArgumentParser(description="Fake OpenAI/Azure/Anthropic/Gemini server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8900)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--mode", choices=sorted(MODES), help="behave as such a server does")
    args = parser.parse_args()
    fake = FakeLLM(latency=args.latency_ms / 1000)
    fake.responder = MODES[args.mode] if args.mode else None
    fake.record = False  # a long benchmark must not grow memory
    uvicorn.run(
        fake, host=args.host, port=args.port, lifespan="off", log_level="warning",
        access_log=False, ws="none",
    )  # fmt: skip


if __name__ == "__main__":
    main()

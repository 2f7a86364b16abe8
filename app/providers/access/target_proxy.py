"""A code grader's door to the targets: an HTTP server on a Unix socket for one program's run.

A code grader given ``target: {max_calls: N}`` (``target: true``: 50 calls) may ask the
service's targets while its program runs, the way AgentV's SDK does (``createTargetClient``):
the program finds the server's URL and a random token in ``AGENTV_TARGET_PROXY_URL`` and
``AGENTV_TARGET_PROXY_TOKEN`` (the later SDK names ``AGENTV_PROVIDER_PROXY_*`` hold the
same), and sends ``Authorization: Bearer <token>``.

- ``GET /info``: ``{targetName, maxCalls, callCount, availableTargets}``.
- ``POST /invoke``: ``{question, systemPrompt?, target?, attempt?}`` ->
  ``{output, outputMessages, rawText, tokenUsage}`` (the calls carry the case's own id).
- ``POST /invokeBatch``: ``{requests: [...]}`` -> ``{responses: [...]}``, asked in order; a
  request that fails answers ``rawText: "Error: ..."`` in its place.

Calls go to the grader's judge unless ``target`` names another configured target; they are
the case's judge calls (limited, retried and counted like the judge's own); every call sent
counts against ``max_calls``, a failed one too. Refusals answer ``{error}``: 401 without the
token, 429 past ``max_calls`` (a batch is refused whole before any call), 400 for a request
without ``question`` or naming an unknown target (not sent, not counted), 502 when the
target's call failed. Calls are counted before they are sent, so concurrent requests never
pass ``max_calls`` together. The server listens on a Unix socket that the sandbox forwards
its own ``127.0.0.1`` port to (``app.sandbox``), and closes when the program ends.
"""

from __future__ import annotations

import secrets
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Protocol

from aiohttp import web

from app.formatting.messages import ChatMessage
from app.providers.base import CallRole, ProviderRequest, ProviderResponse
from app.providers.errors import ProviderError
from app.sandbox.folders import new_folder

MAX_REQUEST_BYTES = 4 * 1024 * 1024
URL_VARIABLES = ("AGENTV_TARGET_PROXY_URL", "AGENTV_PROVIDER_PROXY_URL")
TOKEN_VARIABLES = ("AGENTV_TARGET_PROXY_TOKEN", "AGENTV_PROVIDER_PROXY_TOKEN")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class ProxiedTarget(Protocol):
    """A target the proxy calls (an evaluator's judge client): a name and one call."""

    @property
    def name(self) -> str:
        """The target's configured name."""
        ...

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """Ask the target; raises ``ProviderError`` once its retries are spent."""
        ...


class _Refused(Exception):
    """A request the proxy answers with ``status`` and ``{error: message}``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class TargetProxy:
    """Counts and forwards one program's calls; ``serving`` gives the program's environment."""

    def __init__(
        self,
        judge: ProxiedTarget,
        *,
        max_calls: int,
        case_id: str,
        resolve: Callable[[str], ProxiedTarget] | None = None,
        target_names: Sequence[str] = (),
    ) -> None:
        self.judge = judge
        self.max_calls = max_calls
        self.calls = 0
        self._case_id = case_id
        self._resolve = resolve
        self._names = tuple(dict.fromkeys([judge.name, *target_names]))
        self._token = secrets.token_hex(32)

    @asynccontextmanager
    async def serving(self, url: str) -> AsyncIterator[tuple[dict[str, str], Path]]:
        """Listen on a Unix socket until the block ends; yields the variables and the socket.

        ``url`` is where the program reaches the socket (the sandbox forwards its own
        ``127.0.0.1`` port to it): the host's loopback is never opened to the program.
        """
        app = web.Application(client_max_size=MAX_REQUEST_BYTES, middlewares=[self._guard])
        app.router.add_get("/info", self._info)
        app.router.add_post("/invoke", self._invoke)
        app.router.add_post("/invokeBatch", self._invoke_batch)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        folder = new_folder("proxy")
        socket_path = folder / "proxy.sock"
        await runner.setup()
        try:
            site = web.UnixSite(runner, str(socket_path))
            await site.start()
            socket_path.chmod(0o666)  # the program may run as another user; the token guards
            yield (
                {
                    **dict.fromkeys(URL_VARIABLES, url),
                    **dict.fromkeys(TOKEN_VARIABLES, self._token),
                },
                socket_path,
            )
        finally:
            await runner.cleanup()
            shutil.rmtree(folder, ignore_errors=True)

    def facts(self) -> dict[str, int]:
        """What the record keeps of the proxy: calls made and allowed."""
        return {"call_count": self.calls, "max_calls": self.max_calls}

    @web.middleware
    async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        given = request.headers.get("Authorization", "")
        if not secrets.compare_digest(given.encode(), f"Bearer {self._token}".encode()):
            return _error(401, "unauthorized: send the token of AGENTV_TARGET_PROXY_TOKEN")
        try:
            return await handler(request)
        except _Refused as refused:
            return _error(refused.status, refused.message)

    async def _info(self, _: web.Request) -> web.Response:
        return web.json_response(
            {
                "targetName": self.judge.name,
                "maxCalls": self.max_calls,
                "callCount": self.calls,
                "availableTargets": list(self._names),
            }
        )

    async def _invoke(self, request: web.Request) -> web.Response:
        target, asked = self._request(await _object(request))
        self._reserve(1)
        return web.json_response(await self._send(target, asked))

    async def _invoke_batch(self, request: web.Request) -> web.Response:
        listed = (await _object(request)).get("requests")
        if not isinstance(listed, list):
            raise _Refused(400, "'requests' must be a list of requests")
        self._reserve(len(listed))
        responses = []
        for item in listed:
            try:
                if not isinstance(item, dict):
                    raise _Refused(400, "a request must be an object")
                asked = self._request(item)
            except _Refused as refused:
                self.calls -= 1  # reserved, never sent: not counted
                responses.append(_failed(refused))
                continue
            try:
                responses.append(await self._send(*asked))
            except _Refused as refused:
                responses.append(_failed(refused))
        return web.json_response({"responses": responses})

    def _reserve(self, count: int) -> None:
        """Count ``count`` calls before any is sent; 429 when they do not fit.

        Nothing awaits between the check and the count, so concurrent requests can never
        pass ``max_calls`` together.
        """
        if self.calls + count > self.max_calls:
            raise _Refused(429, f"max calls exceeded (limit: {self.max_calls})")
        self.calls += count

    def _request(self, body: dict[str, Any]) -> tuple[ProxiedTarget, ProviderRequest]:
        """The target a request names and what it is asked; 400 for a request that is not one."""
        question = body.get("question")
        if not isinstance(question, str) or not question:
            raise _Refused(400, "'question' is required: the text to send")
        system = body.get("systemPrompt")
        if system is not None and not isinstance(system, str):
            raise _Refused(400, "'systemPrompt' must be text")
        target = self._target(body.get("target"))
        chat = (
            *([ChatMessage(role="system", content=system)] if system else []),
            ChatMessage(role="user", content=question),
        )
        attempt = body.get("attempt")
        request = ProviderRequest(
            question=question,
            chat_prompt=chat,
            role=CallRole.JUDGE,
            case_id=self._case_id,
            attempt=attempt if isinstance(attempt, int) and attempt >= 0 else 0,
        )
        return target, request

    async def _send(self, target: ProxiedTarget, request: ProviderRequest) -> dict[str, Any]:
        """Send one call, already counted by ``_reserve`` (a call that fails still counts)."""
        try:
            response = await target.complete(request)
        except ProviderError as exc:
            raise _Refused(502, f"target {target.name!r} failed: {exc}") from None
        messages = [{"role": "assistant", "content": response.text}]
        return {
            "output": messages,
            "outputMessages": messages,
            "rawText": response.text,
            "tokenUsage": {
                "input": response.usage.input_tokens,
                "output": response.usage.output_tokens,
            },
        }

    def _target(self, name: Any) -> ProxiedTarget:
        if name is None or name == self.judge.name:
            return self.judge
        if isinstance(name, str) and name in self._names and self._resolve is not None:
            return self._resolve(name)
        available = ", ".join(self._names)
        raise _Refused(400, f"unknown target {name!r}: available targets are {available}")


async def _object(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        raise _Refused(400, "the body must be a JSON object") from None
    if not isinstance(body, dict):
        raise _Refused(400, "the body must be a JSON object")
    return body


def _failed(refused: _Refused) -> dict[str, Any]:
    """A batch entry in place of a request that was refused or failed."""
    return {"output": [], "outputMessages": [], "rawText": f"Error: {refused.message}"}


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)

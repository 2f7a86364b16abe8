"""What every HTTP adapter shares: its client, one attempt, and the upstream error mapping."""

from __future__ import annotations

import os
import re
import ssl
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import Any, Generic, Protocol, TypeVar
from urllib.parse import urlsplit

import aiohttp
import httpx
import orjson
from pydantic import BaseModel, SecretStr, ValidationError

from app.providers.base import (
    CallRole,
    ModelOptions,
    ProviderKind,
    ProviderRequest,
    ProviderResponse,
)
from app.providers.errors import (
    ProviderError,
    ProviderQuotaExhausted,
    ProviderRateLimited,
    ProviderRejected,
    ProviderReplyTooLarge,
    ProviderResponseInvalid,
    ProviderTimeout,
    ProviderUnavailable,
    looks_like_key,
    redact,
)
from app.providers.preview import ProviderPreview
from app.providers.retry import parse_retry_after
from app.settings.hosted_tools import HostedApi
from app.settings.tools import merged_tools

# Error codes and phrases that mean money or quota ran out: retrying cannot help.
QUOTA_MARKERS = (
    "insufficient_quota",
    "billing_hard_limit",
    "billing_not_active",
    "enforced_spend_limit",
    "credit balance",
    "credit_balance",
    "spend limit",
)


class UpstreamError(BaseModel):
    """An error as read from an upstream body: its message and machine code, if any."""

    message: str
    code: str | None = None
    retry_after: float | None = None
    quota_exhausted: bool = False


_PLAIN_SECRET = re.compile(r"[A-Za-z0-9._~+=:-]+")
"""Characters JSON writes as they are (or as a unicode escape): a secret of them shows."""


def scrubbed(payload: Any, content: bytes, secrets: Sequence[str]) -> Any:
    """``scrub(payload)``, or ``payload`` itself when its raw bytes hold nothing to scrub.

    Nothing in a string of the parsed body can be a secret or look like a key unless the
    same characters stand in the body as sent: a plain secret, or a key-like word, is
    written verbatim unless with a unicode escape (then the body is scrubbed as parsed).
    Scrubbing every string costs more than a reply's other handling.
    """
    if (
        b"\\u" in content
        or not all(_PLAIN_SECRET.fullmatch(secret) for secret in secrets)
        or any(secret.encode() in content for secret in secrets)
        or looks_like_key(content.decode("utf-8", "replace"))
    ):
        return scrub(payload, secrets)
    return payload


def scrub(value: Any, secrets: Sequence[str]) -> Any:
    """A copy of a JSON value with every secret removed from its strings."""
    if isinstance(value, dict):
        return {key: scrub(item, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [scrub(item, secrets) for item in value]
    if isinstance(value, str):
        return redact(value, secrets)
    return value


def is_quota_error(error: UpstreamError) -> bool:
    """Whether an upstream error says the quota or budget is exhausted."""
    text = f"{error.code or ''} {error.message}".lower()
    return error.quota_exhausted or any(marker in text for marker in QUOTA_MARKERS)


def upstream_error(
    target: str, api: str, status: int, headers: Mapping[str, str], error: UpstreamError
) -> ProviderError:
    """The ``ProviderError`` for an upstream error status, retryable or not."""
    detail = f"target {target!r}: {api} answered {status}: {error.message}"
    said = error.message
    if status == 402 or (400 <= status < 500 and is_quota_error(error)):
        return ProviderQuotaExhausted(
            detail, target=target, upstream_status=status, upstream_message=said
        )
    retry_after = parse_retry_after(headers)
    if retry_after is None:
        retry_after = error.retry_after
    if status == 429:
        return ProviderRateLimited(
            detail, target=target, retry_after=retry_after, upstream_message=said
        )
    kind: type[ProviderError] = ProviderRejected
    if status == 408:
        kind = ProviderTimeout
    elif status == 409 or status >= 500:
        kind = ProviderUnavailable
    return kind(
        detail, target=target, upstream_status=status, retry_after=retry_after,
        upstream_message=said,
    )  # fmt: skip


class KeyedTarget(Protocol):
    """What every HTTP target has: a name and (maybe) an API key."""

    @property
    def name(self) -> str:
        """The target's name."""
        ...

    @property
    def api_key(self) -> SecretStr | None:
        """The target's API key, if it needs one."""
        ...


TargetT = TypeVar("TargetT", bound=KeyedTarget)


DEFAULT_MAX_REPLY_BYTES = 16 * 1024 * 1024


ConnectorFactory = Callable[[], aiohttp.BaseConnector]
"""Builds an adapter's connection pool (its first call does, inside the event loop)."""

MAX_CONNECTIONS = 1000
KEEPALIVE_SECONDS = 30.0


@cache
def tls_context() -> ssl.SSLContext:
    """The process's TLS settings for calls to targets: certificates checked against certifi's CAs.

    Built once and shared by every connection pool (an ``SSLContext`` may be): loading the CA
    bundle takes about 25 ms of CPU, which each new adapter, and each request's inline
    target, used to spend on the event loop.
    """
    return httpx.create_ssl_context()


def default_connector() -> aiohttp.BaseConnector:
    """An adapter's connection pool: TCP and TLS (``tls_context``)."""
    return aiohttp.TCPConnector(
        limit=MAX_CONNECTIONS, keepalive_timeout=KEEPALIVE_SECONDS, ssl=tls_context()
    )


def client_session(
    connector: aiohttp.BaseConnector, timeout_seconds: float
) -> aiohttp.ClientSession:
    """The aiohttp session of one adapter.

    aiohttp rather than httpx: httpx's own async pool costs several ms of CPU per request
    under concurrency, and even over aiohttp its request and response models took about a
    third of each call's CPU at hundreds of calls/s. No cookies are kept (a provider's cookie
    must not follow later calls), proxies are not taken from the environment, and a reply is
    decompressed in bounded steps (``_read_capped`` counts what comes out).
    """
    return aiohttp.ClientSession(
        connector=connector,
        cookie_jar=aiohttp.DummyCookieJar(),
        timeout=aiohttp.ClientTimeout(
            total=None,
            connect=timeout_seconds,  # a free connection, or a new one
            sock_connect=min(10.0, timeout_seconds),
            sock_read=timeout_seconds,
        ),
        trust_env=False,
    )


class HttpAdapter(ABC, Generic[TargetT]):
    """One wire format over one long-lived ``aiohttp.ClientSession``; one attempt per call."""

    hosted_tools_api: HostedApi | None = None
    """The API whose hosted tools (web search, MCP...) the target sends; None: none."""

    kind: ProviderKind = "api"
    api: str = "provider"

    def __init__(
        self,
        target: TargetT,
        *,
        connector: ConnectorFactory | None,
        timeout_seconds: float,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
    ) -> None:
        self.target = target
        self._max_reply_bytes = max_reply_bytes
        self.name = target.name
        self._key = target.api_key.get_secret_value() if target.api_key else ""
        self._secrets = [self._key] if self._key else []
        self._connector = connector or default_connector
        self._timeout_seconds = timeout_seconds
        self._session: aiohttp.ClientSession | None = None
        self._endpoint: tuple[str, dict[str, str]] | None = None

    @abstractmethod
    def build_body(self, request: ProviderRequest) -> tuple[dict[str, Any], list[str]]:
        """The JSON body for ``request`` and the rewrites applied (pure; used by preview)."""

    @abstractmethod
    def url(self) -> str:
        """Where the call goes."""

    @abstractmethod
    def headers(self) -> dict[str, str]:
        """Request headers, authentication included (never logged or echoed)."""

    @abstractmethod
    def parse_reply(self, payload: Any, request: ProviderRequest) -> ProviderResponse:
        """Read text, usage, model and finish reason from a success body."""

    @abstractmethod
    def parse_error(self, payload: Any) -> UpstreamError | None:
        """Read the message (and code) of an error body; ``None`` if it has none."""

    def with_target_tools(self, request: ProviderRequest) -> ProviderRequest:
        """A candidate request with its target's tool and structured-output settings.

        The target's ``tools``, ``tool_choice`` and ``response_format``; the request's own
        win (tools by name).
        """
        tools = getattr(self.target, "tools", ())
        choice = getattr(self.target, "tool_choice", None)
        shape = getattr(self.target, "response_format", None)
        if request.role != CallRole.CANDIDATE or not (tools or choice or shape):
            return request
        update: dict[str, Any] = {
            "tools": merged_tools(tools, request.tools),
            "tool_choice": request.tool_choice or choice,
        }
        if shape is not None and request.options.json_schema is None:
            update["options"] = request.options.model_copy(
                update={"json_schema": shape.schema_, "json_schema_name": shape.name}
            )
        return request.model_copy(update=update)

    def preview(self, request: ProviderRequest) -> ProviderPreview:
        """What ``complete`` would send, without sending it."""
        body, rewrites = self.build_body(self.with_target_tools(request))
        return ProviderPreview(body=scrub(body, self._secrets), rewrites=rewrites)

    def _client(self) -> tuple[aiohttp.ClientSession, str, dict[str, str]]:
        """The session, URL and headers; made on the first call, in the event loop."""
        if self._session is None or self._endpoint is None:
            self._session = client_session(self._connector(), self._timeout_seconds)
            self._endpoint = (self.url(), {**self.headers(), "content-type": "application/json"})
        return self._session, *self._endpoint

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """Send one request; map every failure into the ``ProviderError`` tree."""
        request = self.with_target_tools(request)
        body, _ = self.build_body(request)
        session, url, headers = self._client()
        started = time.perf_counter()
        try:
            async with session.post(
                url, data=orjson.dumps(body), headers=headers, allow_redirects=False
            ) as response:
                content = await self._read_capped(response)
        except TimeoutError as exc:  # aiohttp's timeouts (connect, read) are TimeoutErrors
            raise ProviderTimeout(
                f"target {self.name!r}: no answer in time ({type(exc).__name__})",
                target=self.name,
            ) from exc
        except aiohttp.ClientError as exc:
            raise ProviderUnavailable(
                f"target {self.name!r}: no connection ({self._cause(exc)})", target=self.name
            ) from exc
        latency_ms = (time.perf_counter() - started) * 1000
        payload = self._json(content)
        if response.status >= 400:
            raise self._error_for(response, payload)
        if payload is None:
            raise self._invalid(f"answered {response.status} with a body that is not JSON")
        try:
            reply = self.parse_reply(payload, request)
        except (ValidationError, ValueError, KeyError, IndexError, TypeError) as exc:
            raise self._invalid(
                f"reply does not match the wire format ({exc.__class__.__name__})"
            ) from exc
        return reply.model_copy(
            update={
                "latency_ms": latency_ms,
                "raw": scrubbed(payload, content, self._secrets),
                "status": response.status,
            }
        )

    async def aclose(self) -> None:
        """Close the session and its connections."""
        if self._session is not None:
            await self._session.close()

    async def _read_capped(self, response: aiohttp.ClientResponse) -> bytes:
        """The decoded body, read as a stream and given up past ``max_reply_bytes``.

        Counting decoded bytes is what bounds memory: a small compressed reply can inflate
        to hundreds of megabytes.
        """
        limit = self._max_reply_bytes
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.content.iter_any():
            size += len(chunk)
            if size > limit:
                raise ProviderReplyTooLarge(
                    f"target {self.name!r}: {self.api} sent a reply larger than {limit} bytes "
                    "(decoded); the limit is EVAL_PROVIDER_MAX_REPLY_BYTES",
                    target=self.name,
                    upstream_status=response.status,
                )
            chunks.append(chunk)
        return b"".join(chunks)

    def _json(self, content: bytes) -> Any:
        try:
            return orjson.loads(content)
        except orjson.JSONDecodeError:
            return None

    def _error_for(self, response: aiohttp.ClientResponse, payload: Any) -> ProviderError:
        try:
            error = self.parse_error(payload) if payload is not None else None
        except (ValidationError, ValueError, KeyError, TypeError):
            error = None
        if error is None:
            error = UpstreamError(message=response.reason or "no error message")
        error = error.model_copy(update={"message": redact(error.message, self._secrets)[:500]})
        return upstream_error(self.name, self.api, response.status, response.headers, error)

    def _cause(self, exc: aiohttp.ClientError) -> str:
        """The client's error, named and explained (``ClientConnectorError: ...``).

        The target's address is left out (callers see the target's name, never where it
        is): ``Cannot connect to host 10.0.0.5:8000`` reads ``Cannot connect to host
        (the target's address)``.
        """
        if isinstance(exc, aiohttp.ClientConnectorError):  # its text names host and address
            failure, number = exc.os_error, exc.os_error.errno
            reason = os.strerror(number) if number is not None and number > 0 else failure.strerror
            return f"{type(exc).__name__}: cannot connect ({reason or type(failure).__name__})"
        text = hide_address(redact(str(exc).strip(), self._secrets), self.url())
        return f"{type(exc).__name__}: {text}"[:300] if text else type(exc).__name__

    def _invalid(self, problem: str) -> ProviderResponseInvalid:
        return ProviderResponseInvalid(
            f"target {self.name!r}: {self.api} {problem}", target=self.name
        )


_HIDDEN = "(the target's address)"


def hide_address(text: str, url: str) -> str:
    """``text`` without ``url``, its origin, or its host (with or without its port)."""
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    host = parts.hostname or ""
    candidates = [url, origin, parts.netloc]
    if parts.port is None and host:
        candidates.append(f"{host}:{443 if parts.scheme == 'https' else 80}")
    candidates.append(host)
    for candidate in sorted(filter(None, candidates), key=len, reverse=True):
        text = text.replace(candidate, _HIDDEN)
    return text


# Sampling options each provider's API takes, besides temperature and the token limit (which
# every API provider takes); the mock takes all and ignores them, agent CLIs take none.
_CHAT = {"temperature", "max_output_tokens", "top_p", "seed", "reasoning_effort"}
_CHAT |= {"stop", "frequency_penalty", "presence_penalty", "extra_body"}
SAMPLING_OPTIONS: dict[str, frozenset[str]] = {
    "openai": frozenset(_CHAT),
    "azure": frozenset(_CHAT),
    # The Responses API takes no seed, stop sequences or penalties.
    "openai-responses": frozenset(
        {"temperature", "max_output_tokens", "top_p", "reasoning_effort", "extra_body"}
    ),
    "gemini": frozenset(
        {"temperature", "max_output_tokens", "top_p", "seed", "top_k", "stop"}
        | {"frequency_penalty", "presence_penalty", "extra_body"}
    ),
    "anthropic": frozenset(
        {"temperature", "max_output_tokens", "top_p", "top_k", "stop", "extra_body"}
    ),
    "mock": frozenset(ModelOptions.model_fields) - {"json_schema", "json_schema_name"},
}


def options_api(target: Any) -> str:
    """The ``SAMPLING_OPTIONS`` key of a target's config: its provider, or its OpenAI API."""
    if getattr(target, "api_format", "chat") == "responses":
        return "openai-responses"
    return str(target.provider)


def untaken_options(api: str, options: ModelOptions) -> list[str]:
    """The options set in ``options`` that the ``api`` (an ``options_api``) does not take.

    Only sampling options count (not a judge's schema, nor the structured-output form).
    """
    taken = SAMPLING_OPTIONS.get(api, frozenset())
    given = options.model_dump(
        exclude_none=True, exclude={"json_schema", "json_schema_name", "structured_output"}
    )
    return sorted(key for key in given if key not in taken)


def sampling_fields(request: ProviderRequest, **names: str) -> dict[str, Any]:
    """The body fields of the request's sampling options in ``names``, under the API's names."""
    options = request.options.model_dump(include=set(names), exclude_none=True)
    return {names[key]: list(v) if key == "stop" else v for key, v in options.items()}


def with_extra_body(body: dict[str, Any], request: ProviderRequest) -> dict[str, Any]:
    """``body`` with the request's ``extra_body`` fields added where the body has none.

    A field the adapter wrote (the model, the messages, a judge's schema...) is never
    replaced: a mapping is merged into its own, key by key, the same way.
    """
    return _added(body, request.options.extra_body or {})


def _added(own: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    for key, value in extra.items():
        if key not in own:
            own[key] = value
        elif isinstance(own[key], dict) and isinstance(value, dict):
            own[key] = _added(dict(own[key]), value)
    return own


def model_options(
    request: ProviderRequest, temperature: float | None, max_output_tokens: int | None
) -> tuple[float | None, int | None]:
    """Temperature and output-token limit: the request's, else the target's."""
    options = request.options
    return (
        options.temperature if options.temperature is not None else temperature,
        options.max_output_tokens if options.max_output_tokens is not None else max_output_tokens,
    )

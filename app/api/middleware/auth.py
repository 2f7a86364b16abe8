"""Optional API keys, the per-key request rate, and CORS, as ASGI middleware.

With keys configured (``EVAL_API_KEYS`` or ``EVAL_API_KEYS_FILE``), every route but the
public ones needs ``Authorization: Bearer <key>``. Keys are kept only as SHA-256 digests and
compared in constant time; a caller is known by a stable, non-secret id (the first 16 hex
digits of its key's digest) that runs are scoped by. Routes read it through ``CallerDep``.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from fastapi import Depends, FastAPI, Request
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from app.api.middleware.ratelimit import RequestRateLimiter
from app.api.openapi_docs.docs import ASSETS_PATH, DOCS_PATH, OAUTH2_REDIRECT_PATH, REDOC_PATH
from app.api.problems import send_problem
from app.api.ui.paths import is_public_ui
from app.errors import ApiKeysFileError, ServiceError, Unauthorized
from app.observability.logging import bind_log_context
from app.settings import Settings

PUBLIC_PATHS = frozenset(
    {
        "/healthz",
        "/readyz",
        "/metrics",
        DOCS_PATH,
        OAUTH2_REDIRECT_PATH,
        REDOC_PATH,
        "/openapi.json",
    }
)
CALLER_ID_LENGTH = 16
CHALLENGE = 'Bearer realm="eval-execution"'
_DIGEST = re.compile(r"[0-9a-fA-F]{64}")
SECURITY_SCHEME_NAME = "HTTPBearer"
SECURITY_SCHEME = {
    "type": "http",
    "scheme": "bearer",
    "description": "An API key from EVAL_API_KEYS or EVAL_API_KEYS_FILE; needed by every "
    "operation but the health, metrics and documentation routes once the operator sets keys "
    "(without keys, none is needed).",
}


def public_paths(settings: Settings) -> frozenset[str]:
    """The paths served without a key: ``/metrics`` too unless the operator protects it."""
    return PUBLIC_PATHS - {"/metrics"} if settings.metrics_require_key else PUBLIC_PATHS


def is_public(path: str, public: frozenset[str] = PUBLIC_PATHS) -> bool:
    """Whether ``path`` is served without a key.

    Health, metrics (unless protected), the docs and the viewer's page shells, with their
    assets; the viewer's data (``/ui/fragments``) needs the key.
    """
    return path in public or path.startswith(ASSETS_PATH + "/") or is_public_ui(path)


@dataclass(frozen=True)
class Caller:
    """Who sent the request: a stable non-secret id, or ``None`` when authentication is off."""

    id: str | None = None


def digest_key(key: str) -> bytes:
    """The SHA-256 digest of an API key."""
    return hashlib.sha256(key.encode("utf-8")).digest()


def read_key_digests(path: Path) -> list[bytes]:
    """Digests from a file of SHA-256 hex digests, one per line (``sha256sum`` output works).

    Raises:
        ApiKeysFileError: the file is unreadable or a line is not a digest.
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ApiKeysFileError(f"cannot read the API keys file {path}: {exc.strerror}") from exc
    digests = []
    for number, line in enumerate(lines, start=1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if not _DIGEST.fullmatch(words[0]):
            raise ApiKeysFileError(f"{path}, line {number}: expected a SHA-256 hex digest")
        digests.append(bytes.fromhex(words[0]))
    return digests


class ApiKeys:
    """The accepted keys, as digests; empty means authentication is off."""

    def __init__(self, digests: list[bytes]) -> None:
        self.digests = tuple(dict.fromkeys(digests))

    @classmethod
    def from_settings(cls, settings: Settings) -> ApiKeys:
        """Keys from ``api_keys`` and ``api_keys_file``."""
        digests = [digest_key(key.get_secret_value()) for key in settings.api_keys]
        if settings.api_keys_file is not None:
            digests += read_key_digests(settings.api_keys_file)
        return cls(digests)

    @property
    def enabled(self) -> bool:
        """Whether callers must present a key."""
        return bool(self.digests)

    def identify(self, key: str) -> Caller | None:
        """The caller owning ``key``, or ``None``; every digest is compared, in constant time."""
        presented = digest_key(key)
        matched = False
        for digest in self.digests:
            matched |= hmac.compare_digest(presented, digest)
        return Caller(id=presented.hex()[:CALLER_ID_LENGTH]) if matched else None


def bearer_token(scope: Scope) -> str | None:
    """The token of an ``Authorization: Bearer`` header, if any."""
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            header: str = value.decode("latin-1")
            scheme, _, token = header.partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
    return None


class AccessControl:
    """Authenticate (when keys are set), then apply the per-key request rate."""

    def __init__(
        self,
        app: ASGIApp,
        keys: ApiKeys,
        limiter: RequestRateLimiter,
        public: frozenset[str] = PUBLIC_PATHS,
    ) -> None:
        self.app = app
        self.keys = keys
        self.limiter = limiter
        self.public = public

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse with 401 or 429, or pass the request on with its caller in the state."""
        if scope["type"] != "http" or is_public(scope["path"], self.public):
            await self.app(scope, receive, send)
            return
        try:
            caller = self._authenticate(scope)
            await self.limiter.check(caller.id or f"client:{_client_host(scope)}")
        except ServiceError as error:
            await send_problem(scope, send, error)
            return
        scope.setdefault("state", {})["caller"] = caller
        with bind_log_context(caller=caller.id):
            await self.app(scope, receive, send)

    def _authenticate(self, scope: Scope) -> Caller:
        if not self.keys.enabled:
            return Caller()
        token = bearer_token(scope)
        if token is None:
            raise Unauthorized(
                "this route needs an API key: send 'Authorization: Bearer <key>'",
                headers={"WWW-Authenticate": CHALLENGE},
            )
        caller = self.keys.identify(token)
        if caller is None:
            raise Unauthorized(
                "the API key is not valid",
                headers={"WWW-Authenticate": f'{CHALLENGE}, error="invalid_token"'},
            )
        return caller


def _client_host(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


async def get_caller(request: Request) -> Caller:
    """The authenticated caller (``Caller(id=None)`` when authentication is off).

    Raises:
        Unauthorized: no caller was established (a public route, or no ``AccessControl``);
            failing closed keeps an unidentified request from seeing every owner's runs.
    """
    caller = request.scope.get("state", {}).get("caller")
    if not isinstance(caller, Caller):
        raise Unauthorized("this route could not identify its caller")
    return caller


CallerDep = Annotated[Caller, Depends(get_caller)]


def install_access_control(app: FastAPI, settings: Settings) -> None:
    """Add authentication and the request rate, and CORS around them when origins are set.

    CORS sits outside authentication so that browsers' preflight requests (which carry no
    key) are answered, and refusals still carry the CORS headers a browser needs to read them.
    """
    app.state.rate_limiter = RequestRateLimiter(settings.rate_limit_per_minute)
    app.add_middleware(
        AccessControl,
        keys=ApiKeys.from_settings(settings),
        limiter=app.state.rate_limiter,
        public=public_paths(settings),
    )
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["*"],
            allow_headers=["*"],
            expose_headers=["X-Request-ID", "Retry-After", "Location"],
            max_age=600,
        )

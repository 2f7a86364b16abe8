"""The outermost ASGI middleware: request id, one access log line and HTTP metrics per request."""

from __future__ import annotations

import logging
import re
import time
import uuid

from fastapi import FastAPI
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.observability.logging import bind_log_context, configure_logging
from app.observability.metrics import Metrics
from app.settings import Settings

REQUEST_ID_HEADER = "X-Request-ID"
UNMATCHED_ROUTE = "<unmatched>"
# A caller's id is reused only if it is short and plain, so it cannot forge log content.
_SAFE_REQUEST_ID = re.compile(r"[A-Za-z0-9._:\-]{1,128}")
access_logger = logging.getLogger("app.access")


def request_id_from(scope: Scope) -> str:
    """The caller's ``X-Request-ID`` when it is safe to reuse, else a new random id."""
    for name, value in scope.get("headers", []):
        if name == b"x-request-id":
            candidate: str = value.decode("latin-1")
            if _SAFE_REQUEST_ID.fullmatch(candidate):
                return candidate
    return uuid.uuid4().hex


def route_template(scope: Scope) -> str:
    """The matched route's path template (``/runs/{run_id}``), so labels stay few."""
    path = getattr(scope.get("route"), "path", None)
    return path if isinstance(path, str) else UNMATCHED_ROUTE


class RequestContext:
    """Give each request an id (echoed as ``X-Request-ID``), log it once and count it."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one request inside its log context, then record and log it."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = request_id_from(scope)
        scope.setdefault("state", {})["request_id"] = request_id
        status = 500
        started = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                MutableHeaders(scope=message)[REQUEST_ID_HEADER] = request_id
            await send(message)

        context = bind_log_context(request_id=request_id)
        self.metrics.http_in_flight.inc()
        try:
            await self.app(scope, receive, send_with_id)
        finally:
            self.metrics.http_in_flight.dec()
            self._finish(scope, status, time.perf_counter() - started)
        # Only on success: an exception goes on to Starlette's outermost error middleware,
        # whose log line should still carry the request id (each request has its own task).
        context.close()

    def _finish(self, scope: Scope, status: int, seconds: float) -> None:
        route = route_template(scope)
        self.metrics.record_http_request(scope["method"], route, status, seconds)
        caller = getattr(scope.get("state", {}).get("caller"), "id", None)
        client = scope.get("client")
        access_logger.info(
            "%s %s %d",
            scope["method"],
            scope["path"],
            status,
            extra={
                "method": scope["method"],
                "path": scope["path"],
                "route": route,
                "status": status,
                "duration_ms": round(seconds * 1000, 2),
                "client": client[0] if client else None,
                "caller": caller,
            },
        )


def install_observability(app: FastAPI, settings: Settings) -> Metrics:
    """Configure JSON logging, give the app its metrics, and add ``RequestContext`` outermost.

    Call it after every other ``add_middleware``: the middleware added last runs first.
    """
    configure_logging(
        settings.log_level, secrets=[key.get_secret_value() for key in settings.api_keys]
    )
    metrics = Metrics()
    app.state.metrics = metrics
    app.add_middleware(RequestContext, metrics=metrics)
    return metrics

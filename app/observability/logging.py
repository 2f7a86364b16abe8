"""Structured logs: one JSON object per line on stderr, with context and secrets scrubbed.

Every line carries ``ts``, ``level``, ``logger`` and ``message``, plus the ids bound in the
current context (``request_id``, ``run_id``, ``case_id``, ``caller``) and any ``extra=``
fields. A redaction filter on the handler removes configured secrets and anything that looks
like an API key or bearer token from the message, the exception text and string extras.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import traceback
from collections.abc import Iterable
from contextvars import ContextVar, Token
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, TextIO

REDACTED = "[redacted]"
# Provider key shapes (OpenAI/Anthropic `sk-...`, Google `AIza...`), bearer tokens and
# `api_key=...`-style pairs; configured secrets are matched literally on top of these.
_KEY_LIKE = re.compile(
    r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{8,}"
    r"|\bAIza[0-9A-Za-z_\-]{20,}"
    r"|(?i:bearer)\s+[A-Za-z0-9._~+/\-]{8,}=*"
    r"|(?i:(?:api[_-]?key|x-api-key|access[_-]?token|password|secret)[\"']?\s*[:=]\s*[\"']?)"
    r"[^\s\"',;}]{4,}"
)
_CONTEXT_FIELDS = ("request_id", "run_id", "case_id", "caller")
_context: dict[str, ContextVar[str | None]] = {
    name: ContextVar(f"log_{name}", default=None) for name in _CONTEXT_FIELDS
}
# Attributes every LogRecord has; anything else on a record came from ``extra=``
# (uvicorn's ``color_message`` duplicates the message with terminal colour codes).
_RECORD_ATTRIBUTES = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
    "message",
    "asctime",
    "taskName",
    "color_message",
}


class LogContext:
    """Ids bound to the current context by ``bind_log_context``; restores them on exit."""

    def __init__(self, values: dict[str, str | None]) -> None:
        self._tokens: list[tuple[ContextVar[str | None], Token[str | None]]] = [
            (_context[name], _context[name].set(value))
            for name, value in values.items()
            if value is not None
        ]

    def __enter__(self) -> LogContext:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Restore the values bound before (once)."""
        while self._tokens:
            variable, token = self._tokens.pop()
            variable.reset(token)


def bind_log_context(
    *,
    request_id: str | None = None,
    run_id: str | None = None,
    case_id: str | None = None,
    caller: str | None = None,
) -> LogContext:
    """Put ids on every log line of the current context (task).

    Binding happens at once, so a plain call binds for the rest of the current task (asyncio
    tasks copy the context when created, so their bindings stay their own); used as a
    context manager it restores the previous values on exit. ``None`` leaves a field as is.

    Example:
        ``with bind_log_context(run_id=run.id, case_id=case.eval_id): ...``
    """
    return LogContext(
        {"request_id": request_id, "run_id": run_id, "case_id": case_id, "caller": caller}
    )


def log_context() -> dict[str, str]:
    """The ids bound in the current context."""
    values = {name: variable.get() for name, variable in _context.items()}
    return {name: value for name, value in values.items() if value is not None}


class RedactSecrets(logging.Filter):
    """Scrub secrets from a record before any handler formats it."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self.secrets: set[str] = set()
        self.add(secrets)

    def add(self, secrets: Iterable[str]) -> None:
        """Also scrub these literal values (empty or very short ones are ignored)."""
        self.secrets.update(secret for secret in secrets if len(secret) >= 4)

    def redact(self, text: str) -> str:
        """``text`` with every known secret and key-like value replaced."""
        for secret in sorted(self.secrets, key=len, reverse=True):
            text = text.replace(secret, REDACTED)
        return _KEY_LIKE.sub(REDACTED, text)

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite the message, exception text and string extras in place; keep the record."""
        record.msg = self.redact(record.getMessage())
        record.args = None
        if record.exc_info:
            record.exc_text = self.redact("".join(traceback.format_exception(*record.exc_info)))
            record.exc_info = None
        elif record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        for name, value in list(record.__dict__.items()):
            if name not in _RECORD_ATTRIBUTES and isinstance(value, str):
                setattr(record, name, self.redact(value))
        return True


class JsonFormatter(logging.Formatter):
    """Format a record as one line of JSON."""

    def format(self, record: logging.LogRecord) -> str:
        """The record, its context ids and its extras as a JSON object."""
        line: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update(log_context())
        for name, value in record.__dict__.items():
            if name not in _RECORD_ATTRIBUTES and name not in line:
                line[name] = value
        if record.exc_info:
            line["exc"] = "".join(traceback.format_exception(*record.exc_info))
        elif record.exc_text:
            line["exc"] = record.exc_text
        return json.dumps(line, ensure_ascii=False, default=str)


class StderrHandler(logging.StreamHandler[TextIO]):
    """A stream handler that looks ``sys.stderr`` up on every write (it may be replaced)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self) -> TextIO:
        """The current ``sys.stderr``."""
        return sys.stderr

    @stream.setter
    def stream(self, _value: TextIO) -> None:
        """Ignore the stream given at construction."""


def configure_logging(level: str = "INFO", secrets: Iterable[str] = ()) -> RedactSecrets:
    """Send every log record, uvicorn's included, through one JSON handler on stderr.

    Idempotent: a second call reuses the handler, adds ``secrets`` and sets the level.
    Uvicorn's own access log is silenced, since the request middleware writes one line per
    request with its id, route and duration.

    Returns:
        The handler's redaction filter, to add secrets learnt later (provider keys).
    """
    root = logging.getLogger()
    handler = next((h for h in root.handlers if isinstance(h, StderrHandler)), None)
    if handler is None:
        handler = StderrHandler()
        handler.setFormatter(JsonFormatter())
        handler.addFilter(RedactSecrets())
        root.addHandler(handler)
    redaction = next(f for f in handler.filters if isinstance(f, RedactSecrets))
    redaction.add(secrets)
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error"):
        logging.getLogger(name).handlers.clear()
        logging.getLogger(name).propagate = True
    access = logging.getLogger("uvicorn.access")
    access.handlers.clear()
    access.propagate = False
    return redaction


def add_log_secrets(secrets: Iterable[str]) -> None:
    """Scrub these values from every later log line (e.g. provider keys from the targets)."""
    for handler in logging.getLogger().handlers:
        for log_filter in handler.filters:
            if isinstance(log_filter, RedactSecrets):
                log_filter.add(secrets)

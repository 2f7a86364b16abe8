"""The viewer's Jinja2 environment (autoescaped) and its HTML responses under a strict CSP."""

from __future__ import annotations

import json
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.responses import HTMLResponse

TEMPLATES = Path(__file__).parent / "templates"
# No inline script or style: the pages run only /ui/assets/ui.js and its stylesheet.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'self'"
)


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.0f}%"


def _number(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _milliseconds(value: float | None) -> str:
    """A latency: whole milliseconds, with a decimal below 10 ms (a mock answers in 0.2 ms)."""
    if value is None:
        return "–"
    return f"{value:.1f}" if value < 10 else f"{value:.0f}"


def _signed(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:+.{digits}f}"


def _moment(value: datetime | str | None) -> str:
    if value is None:
        return "–"
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


@cache
def environment() -> Environment:
    """The templates' environment (autoescaping HTML, undefined attributes are falsy)."""
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        percent=_percent,
        number=_number,
        milliseconds=_milliseconds,
        signed=_signed,
        moment=_moment,
        pretty=_pretty,
    )
    return env


def render(template: str, **context: Any) -> HTMLResponse:
    """``template`` rendered as an HTML response held to its own origin."""
    page = HTMLResponse(environment().get_template(template).render(**context))
    page.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    page.headers["Cache-Control"] = "no-store"
    return page

"""Failures the command reports and the exit codes they mean."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

EXIT_PASSED = 0
EXIT_GATE_FAILED = 1
"""The run finished but missed its bar (pass rate, thresholds) or regressed."""
EXIT_RUN_FAILED = 2
"""The run failed, was cancelled or refused, or the service could not be reached."""
EXIT_INTERRUPTED = 130
"""Stopped by Ctrl-C (SIGINT) or SIGTERM; the run was cancelled or left to the server."""


@dataclass
class ClientError(Exception):
    """Something that stops the command: its message and its exit code."""

    message: str
    exit_code: int = EXIT_RUN_FAILED

    def __str__(self) -> str:
        return self.message


def problem_message(response: httpx.Response) -> str:
    """The message of an error response: the problem's detail and the fields it names."""
    try:
        body: Any = response.json()
    except ValueError:
        text = response.text.strip()[:500]
        return f"HTTP {response.status_code}: {text or response.reason_phrase}"
    if not isinstance(body, dict):
        return f"HTTP {response.status_code}: {body}"
    title = body.get("title") or response.reason_phrase
    detail = body.get("detail") or ""
    lines = [f"{title} (HTTP {response.status_code}): {detail}".rstrip(": ")]
    for error in (body.get("errors") or [])[:20]:
        if isinstance(error, dict):
            where = error.get("path") or ""
            place = f" (line {error['line']})" if error.get("line") else ""
            lines.append(f"  - {where}{place}: {error.get('message')}")
    return "\n".join(lines)

"""Secrets removed from what a program wrote, before anything of it is kept or shown."""

from __future__ import annotations

from collections.abc import Iterable

REDACTED = "[redacted]"
MIN_SECRET_CHARS = 6
"""Shorter values are not treated as secrets (they would blank out ordinary words)."""


def secret_list(values: Iterable[str]) -> tuple[str, ...]:
    """The distinct secrets worth scrubbing, longest first (a key that holds another wins)."""
    kept = {value for value in values if len(value) >= MIN_SECRET_CHARS}
    return tuple(sorted(kept, key=len, reverse=True))


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret replaced by ``[redacted]``."""
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text

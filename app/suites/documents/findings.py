"""Collects every problem found while checking a suite, each located in the document."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from app.errors import FieldError, validation_message
from app.suites.documents.document import DocumentPath, NodePositions, render_path

MISSING: Any = object()
"""Marks a key the document does not have."""


class Findings:
    """Errors (the suite cannot run) and warnings (it runs, but look) found so far."""

    def __init__(self, positions: NodePositions | None = None) -> None:
        """Start empty; ``positions`` locates paths in YAML text."""
        self.positions = positions
        self.errors: list[FieldError] = []
        self.warnings: list[str] = []
        self._seen: set[tuple[str, str]] = set()

    def snapshot(self) -> Findings:
        """A copy of what was found so far (to read a document again from this point)."""
        copy = Findings(self.positions)
        copy.errors = list(self.errors)
        copy.warnings = list(self.warnings)
        copy._seen = set(self._seen)
        return copy

    def error(self, path: DocumentPath, message: str) -> None:
        """Record an error at ``path`` (with its line and column when known)."""
        position = self.positions.locate(path) if self.positions else None
        line, column = position if position else (None, None)
        key = (render_path(path), message)
        if key in self._seen:  # the same problem met again (a shared default): once
            return
        self._seen.add(key)
        self.errors.append(FieldError(path=key[0], message=message, line=line, column=column))

    def warn(self, path: DocumentPath, message: str) -> None:
        """Record a warning, prefixed by its path (and line, for YAML)."""
        where = render_path(path)
        position = self.positions.locate(path) if self.positions and path else None
        if position:
            where += f" (line {position[0]})"
        warning = f"{where}: {message}" if where else message
        if ("", warning) not in self._seen:
            self._seen.add(("", warning))
            self.warnings.append(warning)

    def validation_error(self, path: DocumentPath, exc: ValidationError) -> None:
        """Record each error of a pydantic failure under ``path``."""
        for error in exc.errors():
            location = tuple(part for part in error.get("loc", ()) if isinstance(part, str | int))
            part_index = (error.get("ctx") or {}).get("part_index")
            if isinstance(part_index, int):
                location = (*location, part_index)
            self.error(path + location, validation_message(dict(error)))


def pick(
    mapping: Mapping[str, Any], names: Sequence[str], path: DocumentPath, findings: Findings
) -> tuple[str, Any]:
    """The first of several spellings present in ``mapping``: ``(key, value)``.

    Later spellings given as well are ignored with a warning. Returns ``(names[0],
    MISSING)`` when none is present, so errors name the canonical spelling.
    """
    present = [name for name in names if name in mapping]
    if not present:
        return names[0], MISSING
    for ignored in present[1:]:
        findings.warn((*path, ignored), f"ignored: '{present[0]}' is given as well and wins")
    return present[0], mapping[present[0]]


def describe(value: Any) -> str:
    """A short name of a value's type for messages ("a list", "a number")."""
    if value is None:
        return "empty (null)"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__}"


def text_field(
    mapping: Mapping[str, Any],
    names: Sequence[str],
    path: DocumentPath,
    findings: Findings,
    *,
    required: bool = False,
) -> str | None:
    """A string field (under any of ``names``); an error when wrong or required and absent."""
    key, value = pick(mapping, names, path, findings)
    if value is MISSING or value is None:
        if required:
            spellings = " or ".join(f"'{name}'" for name in names)
            findings.error((*path, key), f"is required: give {spellings} (a non-empty string)")
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        findings.error((*path, key), f"must be a non-empty string, not {describe(value)}")
        return None
    return value


def number_field(
    mapping: Mapping[str, Any], key: str, path: DocumentPath, findings: Findings
) -> float | None:
    """A number between 0 and 1, or None when absent (an error when wrong)."""
    value = mapping.get(key, MISSING)
    if value is MISSING or value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0 <= value <= 1
    ):
        findings.error((*path, key), "must be a number from 0 to 1")
        return None
    return float(value)


def warn_unknown_keys(
    mapping: Mapping[str, Any], known: frozenset[str], path: DocumentPath, findings: Findings
) -> None:
    """Warn about keys the service does not read (typos, features of other tools)."""
    for key in mapping:
        if key not in known:
            findings.warn((*path, str(key)), "unknown key, ignored")

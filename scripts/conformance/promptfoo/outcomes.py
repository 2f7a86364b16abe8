"""What each tool made of one config: its tests, in order, and each test's assertions."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class AssertOutcome:
    """One assertion's verdict (``None``: the tool gave none, an error)."""

    type: str
    passed: bool | None


@dataclass(frozen=True)
class TestOutcome:
    """One test (a test of the config run with one prompt)."""

    passed: bool | None
    output: str | None
    asserts: tuple[AssertOutcome, ...] = ()


@dataclass(frozen=True)
class ConfigOutcome:
    """A config's tests, or why the tool refused to run it."""

    tests: tuple[TestOutcome, ...] = ()
    refused: str | None = None
    ungraded: int | None = None
    notes: list[str] = field(default_factory=list)

"""Per-test and per-assertion agreement of two tools' outcomes, and the differences.

A difference has a key: ``<config>#<test>`` for a test's verdict, ``<config>#<test>.<assert>``
for an assertion's (1-based, in the order promptfoo lists them), ``<config>#tests`` when the
tools ran different numbers of tests, ``<config>`` when one refused the config. The keys
docs/design.md lists under "Where we knowingly differ from promptfoo" are deliberate.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from scripts.conformance.promptfoo.outcomes import ConfigOutcome

DESIGN = Path(__file__).resolve().parents[3] / "docs" / "design.md"
SECTION = "## Where we knowingly differ from promptfoo"
_KEYS = re.compile(r"^- ((?:`[^`]+`(?:, )?)+):")
_KEY = re.compile(r"`([^`]+)`")


def deliberate_keys(design: Path = DESIGN) -> set[str]:
    """The difference keys docs/design.md lists as deliberate (the bullets of its section)."""
    keys: set[str] = set()
    inside = False
    for line in design.read_text().splitlines():
        if line.startswith("## "):
            inside = line.strip() == SECTION
            continue
        found = _KEYS.match(line) if inside else None
        if found:
            keys.update(_KEY.findall(found.group(1)))
    return keys


@dataclass(frozen=True)
class Difference:
    """Where the tools disagree, what each said, and whether it is deliberate."""

    key: str
    peer: str
    ours: str
    deliberate: bool = False


@dataclass
class Tally:
    """Agreement counts over a corpus, and the differences found."""

    tests: int = 0
    tests_agreeing: int = 0
    asserts: int = 0
    asserts_agreeing: int = 0
    configs: int = 0
    configs_run: int = 0
    differences: list[Difference] = field(default_factory=list)

    def add(self, name: str, peer: ConfigOutcome, ours: ConfigOutcome, known: set[str]) -> None:
        """Count one config's outcomes."""
        self.configs += 1
        found = list(_differences(name, peer, ours, self))
        self.differences.extend(
            Difference(d.key, d.peer, d.ours, deliberate=d.key in known) for d in found
        )

    @staticmethod
    def ratio(part: int, whole: int) -> str:
        """``part/whole (xx.x%)``."""
        share = 100.0 * part / whole if whole else 100.0
        return f"{part}/{whole} ({share:.1f}%)"


def _verdict(passed: bool | None) -> str:
    return {True: "pass", False: "fail", None: "error"}[passed]


def _differences(
    name: str, peer: ConfigOutcome, ours: ConfigOutcome, tally: Tally
) -> Iterable[Difference]:
    if peer.refused or ours.refused:
        if peer.refused and ours.refused:
            return
        yield Difference(name, peer.refused or "ran", ours.refused or "ran")
        return
    tally.configs_run += 1
    if len(peer.tests) != len(ours.tests):
        yield Difference(f"{name}#tests", f"{len(peer.tests)} tests", f"{len(ours.tests)} tests")
    for index, (theirs, mine) in enumerate(zip(peer.tests, ours.tests, strict=False), start=1):
        tally.tests += 1
        if theirs.passed == mine.passed:
            tally.tests_agreeing += 1
        else:
            yield Difference(f"{name}#{index}", _verdict(theirs.passed), _verdict(mine.passed))
        if theirs.passed is None and mine.passed is None and not theirs.asserts:
            continue  # promptfoo keeps no assertion verdicts of a test in error
        for number, (a, b) in enumerate(zip(theirs.asserts, mine.asserts, strict=False), 1):
            tally.asserts += 1
            if a.passed == b.passed:
                tally.asserts_agreeing += 1
            else:
                key = f"{name}#{index}.{number}"
                yield Difference(key, f"{a.type} {_verdict(a.passed)}", _verdict(b.passed))
        if len(theirs.asserts) != len(mine.asserts):
            tally.asserts += abs(len(theirs.asserts) - len(mine.asserts))
            yield Difference(
                f"{name}#{index}.n", f"{len(theirs.asserts)} asserts", f"{len(mine.asserts)}"
            )

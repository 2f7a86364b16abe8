"""The four agreement figures and the differences behind them."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from typing import Any

from scripts.conformance.agentv.model import CaseRun, GraderRun, SuiteRun


@dataclass(frozen=True)
class Difference:
    """One disagreement: where, of which kind (``kind``), and what each side did."""

    suite: str
    case: str
    kind: str
    detail: str

    def __str__(self) -> str:
        return f"{self.kind:9} {self.suite} :: {self.case}: {self.detail}"


@dataclass(frozen=True)
class Deliberate:
    """A difference we keep on purpose; ``reason`` names its entry in docs/design.md.

    It covers differences of its ``kind`` in suites and cases matching its globs whose detail
    holds ``detail``; with ``whole_case`` every other difference of such a case too (a case
    that errs on purpose differs in everything).
    """

    kind: str
    suite: str
    case: str
    detail: str
    reason: str
    whole_case: bool = False

    def covers(self, difference: Difference) -> bool:
        return (
            self.kind == difference.kind
            and fnmatch.fnmatchcase(difference.suite, self.suite)
            and fnmatch.fnmatchcase(difference.case, self.case)
            and self.detail in difference.detail
        )


@dataclass
class Tally:
    """Agreements out of comparisons."""

    agree: int = 0
    total: int = 0

    def add(self, same: bool) -> None:
        self.agree += same
        self.total += 1

    def __str__(self) -> str:
        share = f" ({100 * self.agree / self.total:.0f}%)" if self.total else ""
        return f"{self.agree}/{self.total}{share}"


@dataclass
class Figures:
    """The issue's four figures, plus every difference found."""

    messages: Tally = field(default_factory=Tally)
    question: Tally = field(default_factory=Tally)
    graders: Tally = field(default_factory=Tally)
    cases: Tally = field(default_factory=Tally)
    not_run: int = 0
    differences: list[Difference] = field(default_factory=list)


_SPACE = re.compile(r"\s+")


def _squeezed(messages: list[dict[str, Any]] | None) -> list[tuple[str, str]] | None:
    if messages is None:
        return None
    return [
        (str(m.get("role")), _SPACE.sub(" ", str(m.get("content") or "")).strip()) for m in messages
    ]


def message_category(ours: list[dict[str, Any]] | None, theirs: list[dict[str, Any]] | None) -> str:
    """Why two candidate message lists differ, as a tag the deliberate list can name.

    ``whitespace``: the same once runs of whitespace are squeezed (we trim rendered text and
    join a message's parts with one newline); ``guidelines``: ours carries a guidelines
    block (AgentV 4.42.4 embeds guideline files as plain files); ``other`` otherwise.
    """
    if _squeezed(ours) == _squeezed(theirs):
        return "whitespace"
    if ours and "[[ ## Guidelines ## ]]" in str(ours[0].get("content")):
        return "guidelines"
    return "other"


_TRANSCRIPT = re.compile(r"^(system|user|assistant|tool): ", re.MULTILINE)


def question_category(ours: str, theirs: str) -> str:
    """Why two judge questions differ: ``whitespace``, ``guidelines`` (ours references a
    guideline file that AgentV embeds), ``conversation`` (ours is the marked question, AgentV
    quotes a live conversation as ``role: text`` lines), or ``other``."""
    if _SPACE.sub(" ", ours).strip() == _SPACE.sub(" ", theirs).strip():
        return "whitespace"
    if "<Attached: " in ours:
        return "guidelines"
    if ours.startswith("@[") and _TRANSCRIPT.match(theirs):
        return "conversation"
    return "other"


def _same_score(ours: float | None, theirs: float | None) -> bool:
    if ours is None or theirs is None:
        return ours is theirs
    return abs(ours - theirs) < 1e-3


_SAME_KIND = {"rubrics": "llm_judge", "llm_grader": "llm_judge", "code_grader": "code_judge"}


def _kind(grader: GraderRun) -> str:
    kind = grader.type.replace("-", "_")
    return _SAME_KIND.get(kind, kind)


def pair_graders(
    ours: list[GraderRun], theirs: list[GraderRun]
) -> list[tuple[GraderRun | None, GraderRun | None]]:
    """Graders matched by name, then the rest by type in order; unmatched ones alone."""
    left = list(ours)
    pairs: list[tuple[GraderRun | None, GraderRun | None]] = []
    unmatched: list[GraderRun] = []
    for grader in theirs:
        mine = next((g for g in left if g.name == grader.name), None)
        if mine is None:
            unmatched.append(grader)
            continue
        left.remove(mine)
        pairs.append((mine, grader))
    for grader in unmatched:
        mine = next((g for g in left if _kind(g) == _kind(grader)), None)
        if mine is not None:
            left.remove(mine)
        pairs.append((mine, grader))
    pairs.extend((mine, None) for mine in left)
    return pairs


def _grader_text(grader: GraderRun | None) -> str:
    if grader is None:
        return "absent"
    text = f"{grader.name}[{grader.type}] {grader.score} {'pass' if grader.passed else 'fail'}"
    return f"{text} ({grader.note[:120]})" if grader.note else text


def compare_case(suite: str, ours: CaseRun, theirs: CaseRun, figures: Figures) -> None:
    """Add one case run by both to the figures."""
    found: list[Difference] = []
    mine_messages, their_messages = ours.candidate_messages(), theirs.candidate_messages()
    if mine_messages is not None or their_messages is not None:
        same = mine_messages == their_messages
        figures.messages.add(same)
        if not same:
            category = message_category(mine_messages, their_messages)
            detail = f"[{category}] ours {mine_messages!r} AgentV {their_messages!r}"
            found.append(Difference(suite, ours.case_id, "messages", detail))
    mine_question, their_question = ours.judge_question(), theirs.judge_question()
    if mine_question is not None and their_question is not None:
        same = mine_question == their_question
        figures.question.add(same)
        if not same:
            category = question_category(mine_question, their_question)
            detail = f"[{category}] ours {mine_question!r} AgentV {their_question!r}"
            found.append(Difference(suite, ours.case_id, "question", detail))
    for mine, their in pair_graders(ours.graders, theirs.graders):
        same = (
            mine is not None
            and their is not None
            and _same_score(mine.score, their.score)
            and mine.passed == their.passed
        )
        figures.graders.add(same)
        if not same:
            named = their or mine
            detail = (
                f"{named.name if named else '?'}: ours {_grader_text(mine)}, "
                f"AgentV {_grader_text(their)}"
            )
            found.append(Difference(suite, ours.case_id, "grader", detail))
    same_verdict = (ours.verdict == "pass") == (theirs.verdict == "pass")
    figures.cases.add(same_verdict)
    if not same_verdict:
        detail = (
            f"ours {ours.verdict} ({ours.score}; {ours.error}), "
            f"AgentV {theirs.verdict} ({theirs.score}; {theirs.error})"
        )
        found.append(Difference(suite, ours.case_id, "verdict", detail))
    figures.differences.extend(found)


def compare_suite(suite: str, ours: SuiteRun, theirs: SuiteRun, figures: Figures) -> None:
    """Add one suite to the figures: every case AgentV ran."""
    if theirs.refused is not None:
        return
    for case_id, their_case in theirs.cases.items():
        mine = ours.cases.get(case_id)
        if mine is None:
            figures.not_run += 1
            why = ours.refused or "no record"
            figures.differences.append(Difference(suite, case_id, "not-run", why))
            continue
        compare_case(suite, mine, their_case, figures)


def split(
    differences: list[Difference], deliberate: tuple[Deliberate, ...]
) -> tuple[list[Difference], list[Deliberate]]:
    """Differences no deliberate entry covers, and deliberate entries that covered none.

    A case's verdict differing is covered when every other difference of the case is: it
    follows from them.
    """
    by_case: dict[tuple[str, str], list[Difference]] = {}
    for difference in differences:
        by_case.setdefault((difference.suite, difference.case), []).append(difference)
    covered: set[Difference] = set()
    used: set[Deliberate] = set()
    for found in by_case.values():
        for difference in found:
            for entry in deliberate:
                if entry.covers(difference):
                    used.add(entry)
                    covered.update(found if entry.whole_case else [difference])
        others = [d for d in found if d.kind != "verdict"]
        if others and all(d in covered for d in others):
            covered.update(found)
    unexplained = [d for d in differences if d not in covered]
    idle = [entry for entry in deliberate if entry not in used]
    return unexplained, idle

"""What the viewer shows that is worked out from records: percentiles, grader pass rates, CSV.

Presentation only: every figure is computed from the records the services return.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlencode

from app.api.ui import charts
from app.evaluation.arms import RunArm
from app.evaluators.catalog import find_type
from app.schemas.runs import RunObject
from app.schemas.viewer import NumberedRecord

PERCENTILES = (50, 90, 99)
ROWS_PER_PAGE = 500
"""Cases the run page lists at once; filters, sorting and paging are done by the service."""
SORT_KEYS = ("seq", "id", "status", "score", "verdict")
CSV_COLUMNS = (
    "seq", "eval_id", "arm", "status", "score", "verdict", "first_miss", "candidate_input_tokens",
    "candidate_output_tokens", "judge_input_tokens", "judge_output_tokens",
    "candidate_latency_ms", "judge_latency_ms", "error",
)  # fmt: skip


@dataclass(frozen=True)
class GraderRate:
    """How often one grader passed the cases it graded."""

    name: str
    passed: int
    graded: int

    @property
    def rate(self) -> float | None:
        """Share of graded cases with the verdict ``pass``."""
        return self.passed / self.graded if self.graded else None


def first_miss(record: dict[str, Any]) -> str:
    """The first miss of the case, or its error, or an empty string."""
    misses = record.get("misses") or []
    return str(misses[0]) if misses else str(record.get("error") or "")


def failing_reasons(record: dict[str, Any], most: int = 5) -> list[str]:
    """Why a case did not pass, from its graders: the misses of each grader that did not pass.

    Empty for a pass. A case can fail with a high score (a required item missed): this is
    what the top of its page says, so nobody has to read every grader to find out.
    """
    if record.get("verdict") == "pass" or record.get("status") == "passed":
        return []
    if record.get("error"):
        return [str(record["error"])]
    reasons: list[str] = []
    for result in record.get("evaluator_results") or []:
        details = result.get("details") or {}
        if result.get("verdict") == "pass" and not details.get("required_unmet"):
            continue
        misses = result.get("misses") or [result.get("reasoning") or result.get("status")]
        reasons.extend(f"{result.get('name')}: {miss}" for miss in misses if miss)
    return reasons[:most]


def percentiles(values: Sequence[float]) -> dict[int, float | None]:
    """The 50th, 90th and 99th percentiles of ``values`` (inclusive method)."""
    if not values:
        return dict.fromkeys(PERCENTILES)
    if len(values) == 1:
        return dict.fromkeys(PERCENTILES, values[0])
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return {p: cuts[p - 1] for p in PERCENTILES}


def latency_percentiles(records: Iterable[dict[str, Any]]) -> dict[str, dict[int, float | None]]:
    """Percentiles of each role's latency (ms) over the records that have one."""
    by_role: dict[str, list[float]] = {"candidate": [], "judge": []}
    for record in records:
        for role, values in by_role.items():
            value = (record.get("latency_ms") or {}).get(role)
            if value is not None:
                values.append(float(value))
    return {role: percentiles(values) for role, values in by_role.items()}


def cost_totals(records: Iterable[dict[str, Any]]) -> dict[str, float | None]:
    """US dollars per role over the records whose targets reported a cost (None: none did)."""
    totals: dict[str, float | None] = {"candidate": None, "judge": None}
    for record in records:
        for role, spent in (record.get("cost_usd") or {}).items():
            if spent is not None and role in totals:
                totals[role] = (totals[role] or 0.0) + float(spent)
    return totals


def grader_results(record: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """A record's graders' results by name; a live conversation's turns' as ``turn N: name``."""
    named = [(str(result.get("name")), result) for result in record.get("evaluator_results") or []]
    for turn in record.get("turns") or []:
        named += [
            (f"turn {turn.get('turn')}: {result.get('name')}", result)
            for result in turn.get("evaluator_results") or []
        ]
    return named


def grader_rates(records: Iterable[dict[str, Any]]) -> list[GraderRate]:
    """Per grader (by name, in first-seen order): cases it passed out of those it graded."""
    counts: dict[str, list[int]] = {}
    for record in records:
        for name, result in grader_results(record):
            tally = counts.setdefault(name, [0, 0])
            if result.get("verdict") is not None:
                tally[1] += 1
                tally[0] += result.get("verdict") == "pass"
    return [GraderRate(name, passed, graded) for name, (passed, graded) in counts.items()]


@dataclass(frozen=True)
class CaseQuery:
    """Which cases of a run the page lists: filters, order and page (the page's query)."""

    status: str = ""
    verdict: str = ""
    missed: str = ""
    text: str = ""
    review: str = ""
    cases: tuple[int, ...] = ()
    """Case numbers a person picked (a queue chosen by hand); none: every case."""
    sort: str = "seq"
    descending: bool = False
    page: int = 0

    def link(self, **change: Any) -> str:
        """The query string of this query with ``change`` applied (defaults left out)."""
        wanted = replace(self, **change)
        pairs = {
            "status": wanted.status,
            "verdict": wanted.verdict,
            "missed": wanted.missed,
            "text": wanted.text,
            "review": wanted.review,
            "cases": ",".join(map(str, wanted.cases)),
            "sort": "" if wanted.sort == "seq" else wanted.sort,
            "order": "desc" if wanted.descending else "",
            "page": str(wanted.page) if wanted.page else "",
        }
        return urlencode({key: value for key, value in pairs.items() if value})


@dataclass(frozen=True)
class CaseRow:
    """One line of the run page's table."""

    seq: int
    eval_id: str
    status: str
    score: float | None
    verdict: str | None
    missed: tuple[str, ...]
    first_miss: str
    answer: str
    reviewed: str | None = None
    """A person's verdict on the case, if one reviewed it."""
    reasons: frozenset[str] = frozenset()
    """Why a person should look (``REVIEW_REASONS``); empty: nothing doubtful."""
    arm: str | None = None
    """The target (and prompt) of the case's arm, in a run with arms."""

    def matches(self, query: CaseQuery) -> bool:
        """Whether the row passes every filter of ``query``."""
        text = query.text.lower()
        unreviewed = self.reviewed is None
        if query.review == "to_review":
            review = bool(self.reasons) and unreviewed
        elif query.review in REVIEW_REASONS:
            review = query.review in self.reasons and unreviewed
        else:
            review = {"reviewed": not unreviewed, "not_reviewed": unreviewed}.get(
                query.review, True
            )
        return (
            review
            and (not query.cases or self.seq in query.cases)
            and (not query.status or self.status == query.status)
            and (not query.verdict or self.verdict == query.verdict)
            and (not query.missed or query.missed in self.missed)
            and (not text or text in f"{self.eval_id} {self.first_miss} {self.answer}".lower())
        )

    def key(self, sort: str) -> tuple[bool, Any]:
        """The row's sort key for ``sort``: ``(no value, value)``."""
        value: Any = {
            "id": self.eval_id,
            "status": self.status,
            "score": self.score,
            "verdict": self.verdict,
        }.get(sort, self.seq)
        return (value is None, value if value is not None else 0)


def case_row(row: NumberedRecord) -> CaseRow:
    """The table line of one record."""
    record = row.record
    missed = tuple(
        name
        for name, result in grader_results(record)
        if result.get("verdict") and result.get("verdict") != "pass"
    )
    return CaseRow(
        seq=row.seq,
        eval_id=str(record.get("eval_id")),
        status=str(record.get("status")),
        score=record.get("score"),
        verdict=record.get("verdict"),
        missed=missed,
        first_miss=first_miss(record),
        answer=(record.get("candidate_answer") or "")[:500],
        reviewed=(record.get("review") or {}).get("verdict"),
        reasons=review_reasons(record),
        arm=RunArm.model_validate(record["arm"]).label if record.get("arm") else None,
    )


REVIEW_REASONS = {
    "judge_error": "judge error",
    "borderline": "borderline",
    "disagree": "judge and checks disagree",
    "low_confidence": "low judge confidence",
}
"""Why a case is worth a person's look (each a queue of its own)."""
REVIEW_FILTERS = {
    "to_review": "to review (any reason)",
    **{key: f"to review: {label}" for key, label in REVIEW_REASONS.items()},
    "reviewed": "reviewed",
    "not_reviewed": "not reviewed",
}
"""The run page's review queues: cases worth a look and not reviewed yet, and the rest."""


def _verdicts(record: dict[str, Any], judge: bool) -> set[str]:
    """The pass/fail verdicts of a record's judge graders (``judge``) or of its other ones."""
    found = set()
    for result in record.get("evaluator_results") or []:
        kind, _ = find_type(str(result.get("type") or ""))
        if (kind is not None and kind.family == "model") == judge:
            found.add(result.get("verdict"))
    return found & {"pass", "fail"}


def review_reasons(record: dict[str, Any]) -> frozenset[str]:
    """Why a person should look at a case (``REVIEW_REASONS``).

    ``disagree``: a judge passed what a check of the answer failed, or the other way round
    (graders of one kind that disagree count too when the case has no judge). ``low_confidence``:
    the judges return no confidence, so it is measured where it shows, in a case run several
    times (``repeat``) whose trials did not all come out the same.
    """
    reasons = set()
    if record.get("status") in {"judge_error", "borderline"}:
        reasons.add(str(record["status"]))
    judged, checked = _verdicts(record, judge=True), _verdicts(record, judge=False)
    if (judged and checked and judged != checked) or (not judged and checked == {"pass", "fail"}):
        reasons.add("disagree")
    trials = record.get("trials") or {}
    if trials.get("count") and 0 < trials.get("passed", 0) < trials["count"]:
        reasons.add("low_confidence")
    return frozenset(reasons)


def ordered(lines: Iterable[CaseRow], query: CaseQuery) -> list[CaseRow]:
    """``lines`` in the order of ``query`` (unfiltered)."""
    # Sorts are stable, even reversed: equal rows stay in case order, rows without a value last.
    result = sorted(lines, key=lambda line: line.key(query.sort), reverse=query.descending)
    result.sort(key=lambda line: line.key(query.sort)[0])
    return result


@dataclass(frozen=True)
class QueueStep:
    """Where a case stands in the run page's list it was opened from (the review queue)."""

    previous: int | None
    next: int | None
    position: int | None
    """1-based place of the case in the list; None once it has left it (reviewed)."""
    count: int
    query: str
    """The list's query string, which the case's links keep."""


def queue_step(rows: Sequence[NumberedRecord], query: CaseQuery, seq: int) -> QueueStep:
    """The cases before and after case ``seq`` in the list ``query`` shows (across its pages).

    ``n``/``p`` step through that list rather than by case number, and a case that left it
    once reviewed (the queue of cases to review) still leads on to the next one in it.
    """
    lines = ordered(map(case_row, rows), query)
    at = next((index for index, line in enumerate(lines) if line.seq == seq), None)
    matching = [line.seq for line in lines if line.matches(query)]
    if at is None:  # not run yet: neighbours by case number
        before = [s for s in matching if s < seq]
        after = [s for s in matching if s > seq]
        here = False
    else:
        before = [line.seq for line in lines[:at] if line.matches(query)]
        after = [line.seq for line in lines[at + 1 :] if line.matches(query)]
        here = lines[at].matches(query)
    return QueueStep(
        previous=before[-1] if before else None,
        next=after[0] if after else None,
        position=len(before) + 1 if here else None,
        count=len(matching),
        query=query.link(page=0),
    )


def run_view(
    run: RunObject, rows: Sequence[NumberedRecord], query: CaseQuery = CaseQuery()
) -> dict[str, Any]:
    """What the run page shows: the run, charts, grader rates, percentiles, one page of rows.

    The figures cover every record; the table lists the page of ``query`` among the rows
    that pass its filters, in its order.
    """
    records = [row.record for row in rows]
    summary = run.summary
    chosen = [line for line in ordered(map(case_row, rows), query) if line.matches(query)]
    pages = max(1, math.ceil(len(chosen) / ROWS_PER_PAGE))
    page = min(query.page, pages - 1)
    return {
        "run": run,
        "rows": chosen[page * ROWS_PER_PAGE : (page + 1) * ROWS_PER_PAGE],
        "matched": len(chosen),
        "first_shown": page * ROWS_PER_PAGE + 1,
        "listed": len(rows),
        "query": replace(query, page=page),
        "pages": pages,
        "histogram": charts.histogram_svg(summary.histogram if summary else []),
        "verdicts": charts.verdict_bar_svg(summary.counts if summary else {}),
        "graders": grader_rates(records),
        "latency": latency_percentiles(records),
        # Planned judges are shown until a record says none was called (a regrade with
        # deterministic graders only never calls one).
        "judge_called": not records
        or any((record.get("attempts") or {}).get("judge") for record in records),
        "cost": cost_totals(records),
    }


_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """A text cell a spreadsheet would read as a formula, quoted with ``'`` (OWASP's rule).

    A case id or error such as ``=HYPERLINK(...)`` is the text it was, not a live formula;
    numbers (a negative score) are left as they are.
    """
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


def csv_arm(arm: Any) -> str | None:
    """The ``arm`` cell: the arm's label (``target`` or ``target / prompt``), empty without."""
    return RunArm.model_validate(arm).label if arm else None


def records_csv(rows: Iterable[NumberedRecord]) -> str:
    """The records as CSV, one row per (case, arm) (``CSV_COLUMNS``), formulas neutralised."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        record = row.record
        usage, latency = record.get("usage") or {}, record.get("latency_ms") or {}
        candidate, judge = usage.get("candidate") or {}, usage.get("judge") or {}
        writer.writerow(
            csv_cell(cell) for cell in [
                row.seq, record.get("eval_id"), csv_arm(record.get("arm")),
                record.get("status"), record.get("score"), record.get("verdict"),
                first_miss(record), candidate.get("input_tokens"),
                candidate.get("output_tokens"), judge.get("input_tokens"),
                judge.get("output_tokens"), latency.get("candidate"), latency.get("judge"),
                record.get("error"),
            ]
        )  # fmt: skip
    return out.getvalue()


_FILE_BLOCK = re.compile(r'<file path="([^"]*)">\n(.*?)\n</file>', re.DOTALL)
GUIDELINES_HEADER = "[[ ## Guidelines ## ]]\n\n"


@dataclass(frozen=True)
class Piece:
    """A piece of a turn: ``text``, an ``attachment`` (path and text) or a ``json`` object."""

    kind: str
    text: str
    path: str | None = None


def turn_pieces(content: str, guidelines: str = "") -> list[Piece]:
    """A native turn's text with its ``<file>`` blocks as attachments, guidelines left out."""
    if guidelines and GUIDELINES_HEADER + guidelines in content:
        content = content.replace(GUIDELINES_HEADER + guidelines, "").strip()
    pieces, at = [], 0
    for match in _FILE_BLOCK.finditer(content):
        if content[at : match.start()].strip():
            pieces.append(Piece("text", content[at : match.start()].strip()))
        pieces.append(Piece("attachment", match.group(2), match.group(1)))
        at = match.end()
    if content[at:].strip():
        pieces.append(Piece("text", content[at:].strip()))
    return pieces


def message_pieces(content: Any) -> list[Piece]:
    """An input message's content as the case wrote it: text, file references, objects."""
    if isinstance(content, str):
        return [Piece("text", content)]
    if isinstance(content, dict):
        return [Piece("json", json.dumps(content, indent=2, ensure_ascii=False))]
    pieces = []
    for part in content or []:
        if isinstance(part, str):
            pieces.append(Piece("text", part))
        elif isinstance(part, dict) and part.get("type") == "file":
            pieces.append(Piece("file", "", str(part.get("value"))))
        elif isinstance(part, dict) and part.get("type") == "text":
            pieces.append(Piece("text", str(part.get("value", ""))))
        else:
            pieces.append(Piece("json", json.dumps(part, indent=2, ensure_ascii=False)))
    return pieces


def diff_lines(diff: str) -> list[tuple[str, str]]:
    """Each line of a unified diff with its kind: ``file``, ``hunk``, ``add``, ``del``, ``same``."""
    lines = []
    for line in diff.splitlines():
        if line.startswith(("diff --git ", "--- ", "+++ ", "new file mode", "deleted file mode")):
            kind = "file"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        else:
            kind = "same"
        lines.append((kind, line))
    return lines

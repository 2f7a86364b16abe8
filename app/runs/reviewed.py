"""People's verdicts over graders' results: summaries and records as a reviewer left them.

Pure: takes what the store read and returns new values; the stored records never change.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

from app.runs.models import ResultFacts, Review
from app.runs.storage.reviews_store import ReviewedOutcome

STATUS_OF_VERDICT = {"pass": "passed", "borderline": "borderline", "fail": "failed"}
"""The case status a person's verdict stands for."""


def reviewed_facts(facts: ResultFacts, outcomes: list[ReviewedOutcome]) -> ResultFacts:
    """``facts`` with each reviewed case counted under its person's verdict and score.

    A run with arms: each arm's facts too, with the reviews of that arm's cases.
    """
    counts: Counter[tuple[str, float | None, str | None]] = Counter()
    for status, score, graders, times in facts.outcomes:
        counts[(status, score, graders)] += times
    for review, status, score, graders, _ in outcomes:
        counts[(status, score, graders)] -= 1
        human_score = review.score if review.score is not None else score
        counts[(STATUS_OF_VERDICT[review.verdict], human_score, graders)] += 1
    outcomes_after = [(s, score, g, n) for (s, score, g), n in counts.items() if n > 0]
    arms = [
        (arm, reviewed_facts(arm_facts, [o for o in outcomes if o[4] == arm.index]))
        for arm, arm_facts in facts.arms
    ]
    return replace(facts, outcomes=outcomes_after, arms=arms, reviewed=len(outcomes))


def review_document(review: Review) -> dict[str, Any]:
    """A review as JSON, as records and the API show it."""
    return {
        "verdict": review.verdict,
        "score": review.score,
        "comment": review.comment,
        "reviewer": review.reviewer,
        "reviewed_at": review.reviewed_at.isoformat(),
    }


def with_review(record: dict[str, Any], review: Review | None) -> dict[str, Any]:
    """The record with the person's verdict beside the graders' (``review``), when there is one."""
    return {**record, "review": review_document(review)} if review is not None else record

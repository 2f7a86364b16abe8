"""The pure comparison: classification, ordering and the paired test (checked against scipy)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from app.evaluation.comparison import CaseOutcome, classify, compare_cases, paired_difference


def outcome(status: str, score: float | None) -> CaseOutcome:
    verdict = {"passed": "pass", "borderline": "borderline", "failed": "fail"}.get(status)
    return CaseOutcome.model_validate({"status": status, "score": score, "verdict": verdict})


@pytest.mark.parametrize(
    ("base", "head", "change"),
    [
        (outcome("passed", 0.9), outcome("passed", 0.8), "regression"),
        (outcome("passed", 0.9), outcome("passed", 0.9), "unchanged"),
        (outcome("failed", 0.1), outcome("borderline", 0.7), "improvement"),
        (outcome("passed", 1.0), outcome("error", None), "regression"),
        (outcome("judge_error", None), outcome("failed", 0.2), "improvement"),
        (outcome("error", None), outcome("judge_error", None), "unchanged"),
    ],
)
def test_classify(base: CaseOutcome, head: CaseOutcome, change: str) -> None:
    assert classify(base, head) == change


def test_regressions_worst_first_then_improvements_then_unchanged_in_order() -> None:
    base = {k: outcome("passed", 0.9) for k in "abcdef"}
    head = {
        "a": outcome("passed", 0.9),
        "b": outcome("passed", 0.85),
        "c": outcome("error", None),
        "d": outcome("passed", 1.0),
        "e": outcome("passed", 0.9),
        "f": outcome("failed", 0.1),
    }
    order = [row.eval_id for row in compare_cases(base, head, list("abcdef"))]
    assert order == ["c", "f", "b", "d", "a", "e"]


def test_a_consistent_drop_is_significant_and_matches_scipy() -> None:
    base = [0.9, 0.8, 1.0, 0.7, 0.9, 0.8]
    head = [0.6, 0.5, 0.8, 0.5, 0.7, 0.4]
    result = paired_difference(base, head)
    reference = stats.ttest_rel(head, base)
    assert result.significant is True
    assert result.p_value == pytest.approx(reference.pvalue)
    assert result.ci_low is not None
    assert result.ci_high is not None
    assert result.ci_low < result.mean_difference < result.ci_high < 0  # type: ignore[operator]


def test_noise_is_not_significant() -> None:
    base = [0.75, 1.0] * 6
    head = [1.0, 0.75, 1.0, 0.75, 1.0, 0.75, 1.0, 0.75, 1.0, 0.75, 1.0, 1.0]
    result = paired_difference(base, head)
    assert result.significant is False
    assert result.ci_low is not None
    assert result.ci_low < 0 < (result.ci_high or 0)


@pytest.mark.parametrize(
    ("base", "head", "p_value", "significant"),
    [([], [], None, False), ([0.5], [0.2], None, False), ([0.5, 0.5], [0.5, 0.5], 1.0, False),
     ([0.5, 0.6], [0.4, 0.5], 0.0, True)],
)  # fmt: skip
def test_degenerate_samples(
    base: list[float], head: list[float], p_value: float | None, significant: bool
) -> None:
    result = paired_difference(base, head)
    assert (result.p_value, result.significant) == (p_value, significant)


@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=2, max_size=40))
def test_the_interval_holds_the_mean_and_p_is_a_probability(
    pairs: list[tuple[float, float]],
) -> None:
    base, head = [b for b, _ in pairs], [h for _, h in pairs]
    result = paired_difference(base, head)
    assert result.mean_difference is not None
    assert math.isfinite(result.mean_difference)
    assert result.p_value is not None
    assert 0.0 <= result.p_value <= 1.0
    assert result.ci_low is not None
    assert result.ci_high is not None
    assert result.ci_low - 1e-9 <= result.mean_difference <= result.ci_high + 1e-9

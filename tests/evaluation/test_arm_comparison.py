"""Holm's correction and the per-pair verdicts of arms compared."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.evaluation.arm_comparison import compare_arms, holm
from app.evaluation.arms import RunArm
from app.evaluation.comparison import CaseOutcome


def test_holm_multiplies_the_ith_smallest_by_m_minus_i_and_stays_monotone() -> None:
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, None, 0.2]) == pytest.approx([0.5, None, 0.4])
    assert holm([0.9, 0.8]) == pytest.approx([1.0, 1.0])


@given(st.lists(st.floats(min_value=0, max_value=1), min_size=1, max_size=12))
def test_holm_never_lowers_a_p_value_and_keeps_the_order(p_values: list[float]) -> None:
    adjusted = holm(p_values)
    assert all(a is not None and p <= a <= 1 for p, a in zip(p_values, adjusted, strict=True))
    ranked = [a for _, a in sorted(zip(p_values, adjusted, strict=True))]
    assert ranked == sorted(ranked)  # type: ignore[type-var]


def test_a_difference_significant_alone_can_be_noise_after_the_correction() -> None:
    arms = [RunArm(index=i, target=t) for i, t in enumerate("xyz")]
    scores = {
        0: [0.5, 0.6, 0.7, 0.5, 0.6, 0.4, 0.5, 0.6],
        1: [0.6, 0.7, 0.7, 0.6, 0.7, 0.5, 0.5, 0.7],
        2: [0.5, 0.6, 0.7, 0.5, 0.6, 0.4, 0.5, 0.6],
    }
    outcomes = {
        arm: {f"c{i}": CaseOutcome(status="passed", score=s) for i, s in enumerate(values)}
        for arm, values in scores.items()
    }
    pairs = compare_arms(arms, outcomes)
    x_y = pairs[0]
    raw, adjusted = x_y.difference.p_value, x_y.p_holm
    assert raw is not None
    assert raw < 0.05
    assert adjusted is not None
    assert adjusted > raw
    assert [p.verdict for p in pairs][1] == "no_difference"

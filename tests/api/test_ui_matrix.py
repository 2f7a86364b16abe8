"""The matrix view of a run with arms: headers per arm, paged rows, the disagreement filter."""

from __future__ import annotations

from app.api.ui.matrix import ROWS_PER_PAGE, matrix_view
from app.evaluation.arms import RunArm
from app.schemas.viewer import NumberedRecord

ARMS = [RunArm(index=index, target=f"t{index}") for index in range(6)]
CASES = 2000


def record(case: int, arm: int) -> dict[str, object]:
    passed = arm != 5 or case % 10  # the last arm fails one case in ten
    return {
        "eval_id": f"c{case}",
        "status": "passed" if passed else "failed",
        "score": 1.0 if passed else 0.0,
        "arm": ARMS[arm].model_dump(),
        "latency_ms": {"candidate": float(case % 100 + arm)},
        "usage": {"candidate": {"input_tokens": 3, "output_tokens": 2}},
        "cost_usd": {"candidate": 0.001},
        "candidate_answer": f"answer {case}",
    }


ROWS = [
    NumberedRecord(seq=case * 6 + arm, record=record(case, arm))
    for case in range(CASES)
    for arm in range(6)
]


def test_2000_cases_by_6_arms_are_paged_with_each_arms_figures() -> None:
    view = matrix_view(ARMS, ROWS, disagree=False, page=3)
    assert (view["cases"], view["pages"], len(view["rows"])) == (CASES, 20, ROWS_PER_PAGE)
    assert view["rows"][0].eval_id == f"c{3 * ROWS_PER_PAGE}"
    assert view["rows"][0].cells[2].seq == 3 * ROWS_PER_PAGE * 6 + 2
    last = view["columns"][5]
    assert (last.cases, last.pass_rate, last.mean_score) == (CASES, 0.9, 0.9)
    assert last.tokens == CASES * 5
    assert last.cost is not None
    assert abs(last.cost - CASES * 0.001) < 1e-9
    assert last.latency[50] == 54.5


def test_the_disagreement_filter_keeps_the_rows_where_some_arm_failed() -> None:
    view = matrix_view(ARMS, ROWS, disagree=True, page=0)
    assert view["matched"] == view["disagreeing"] == CASES // 10
    assert all(row.disagrees for row in view["rows"])
    assert {row.eval_id for row in view["rows"]} == {f"c{case}" for case in range(0, 1000, 10)}


def test_a_page_past_the_end_shows_the_last_and_a_run_without_arms_has_no_columns() -> None:
    assert matrix_view(ARMS, ROWS, disagree=True, page=99)["page"] == 1
    view = matrix_view([], ROWS, disagree=False, page=0)
    assert (view["columns"], view["rows"], view["cases"]) == ([], [], 0)

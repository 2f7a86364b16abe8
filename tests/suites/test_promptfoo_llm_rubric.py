"""A promptfoo ``llm-rubric`` with a ``threshold`` is a scored criterion, whose score the
threshold judges as promptfoo's does (measured against promptfoo 0.123.1:
tests/conformance/promptfoo/llm_rubric.yaml, in the harness's fast subset); without one it
stays a checklist item."""

from __future__ import annotations

from tests.suites.helpers import check


async def test_a_threshold_makes_the_rubric_a_scored_criterion() -> None:
    report = await check(
        {
            "prompts": ["{{ q }}"],
            "providers": ["t"],
            "tests": [
                {
                    "vars": {"q": "x"},
                    "assert": [
                        {"type": "llm-rubric", "value": "Is polite", "threshold": 0.8},
                        {"type": "llm-rubric", "value": "Is short"},
                    ],
                }
            ],
        }
    )
    assert report.suite is not None, report.errors
    with_mark, without = report.suite.cases[0].evaluators
    assert with_mark.threshold == 0.8
    assert [item.scored for item in with_mark.rubrics] == [True]
    assert not with_mark.rubrics[0].required
    assert [item.scored for item in without.rubrics] == [False]

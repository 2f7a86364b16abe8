"""Every number in a suite is finite, and times and weights are bounded (issue 34).

Before, hook ``timeout_ms: .nan`` and grader ``weight: .inf`` were 500s at run time (NaN in
the score histogram), and ``timeout_ms: 1e12`` was accepted with no ceiling.
"""

from __future__ import annotations

import pytest

from app.errors import DocumentError
from app.suites.documents.parsing import parse_json
from tests.suites.helpers import check

CASE = """\
evalcases:
- id: a
  expected_outcome: x
  input_messages: [{role: user, content: hi}]
"""
GRADER = CASE + "  execution:\n    evaluators:\n    - {name: c, type: contains, value: hi, %s}\n"
HOOK = "workspace:\n  template: .\n  hooks:\n    before_each: {command: [echo], %s}\n" + CASE
WEIGHT = "evalcases[0].execution.evaluators[0].weight"
TIMEOUT = "workspace.hooks.before_each.timeout_ms"


@pytest.mark.parametrize(
    ("suite", "path", "message"),
    [
        (GRADER % "weight: .inf", WEIGHT, "must be a finite number, not inf"),
        (GRADER % "weight: .nan", WEIGHT, "must be a finite number, not nan"),
        (GRADER % "weight: 1e300", WEIGHT, "less than or equal to 1000000"),
        (HOOK % "timeout_ms: .nan", TIMEOUT, "must be a finite number, not nan"),
        (HOOK % "timeout_ms: .inf", TIMEOUT, "must be a finite number, not inf"),
        (HOOK % "timeout_ms: 1000000000000", TIMEOUT, "from 1 to 3600000, not 1000000000000"),
        ("budget_usd: .inf\n" + CASE, "budget_usd", "must be a finite number, not inf"),
        ("repeat: -.inf\n" + CASE, "repeat", "must be a finite number, not -inf"),
    ],
)
async def test_non_finite_and_unbounded_numbers_are_refused_by_field(
    suite: str, path: str, message: str
) -> None:
    report = await check(suite)
    messages = [error.message for error in report.errors if error.path == path]
    assert any(message in text for text in messages), report.errors


async def test_bounded_numbers_still_pass() -> None:
    report = await check(GRADER % "weight: 2.5")
    assert report.valid, report.errors


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_json_bodies_refuse_nan_and_infinity(constant: str) -> None:
    with pytest.raises(DocumentError, match=f"{constant} is not a JSON number"):
        parse_json(f'{{"budget_usd": {constant}}}')

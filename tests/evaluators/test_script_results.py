"""A ``python``/``ruby`` assert's result read as promptfoo reads it (``script_results``).

promptfoo reads a result that is neither a boolean nor an object with JavaScript's
``parseFloat``: V8 (the embedded engine) is the oracle for the texts here.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.evaluators.code.js_engine import literal, run_script_waiting
from app.evaluators.code.script_results import script_verdict
from app.evaluators.config import EvaluatorConfig

RUBY = EvaluatorConfig(name="r", type="ruby", value="x")
NUMERIC_TEXT = st.text(alphabet=" \t\n0123456789.+-eEInfityx,", max_size=12).filter(
    lambda text: text.lower() not in ("true", "false")
)


def parse_float(text: str) -> float:
    """JavaScript's ``parseFloat(text)``, from V8."""
    source = f"JSON.stringify(String(parseFloat({literal(text)})))"
    value = str(run_script_waiting(source, what="parseFloat"))
    return float(value.replace("Infinity", "inf"))


@settings(max_examples=60, deadline=None)
@given(NUMERIC_TEXT)
def test_text_scores_as_javascripts_parse_float_reads_it(text: str) -> None:
    held, score, reason = script_verdict(RUBY, text, "the Ruby assert")
    expected = parse_float(text)
    if math.isnan(expected):
        assert (held, score) == (False, 0.0)
        assert "must return a boolean, a number or" in reason
    else:
        assert (held, score) == (expected > 0, expected)


@pytest.mark.parametrize(
    ("result", "threshold", "expected"),
    [
        ("TRUE", None, (True, 1.0)),
        ("false", None, (False, 0.0)),
        ('{"pass": true, "score": 0.5, "reason": "r"}', None, (True, 0.5)),
        ('{"pass": true, "score": 0.5}', None, (False, 0.0)),
        ("{not json", None, (False, 0.0)),
        ({"pass_": True, "score": 1, "reason": ""}, None, (True, 1.0)),
        ({"pass": True, "score": True, "reason": "r"}, None, (False, 0.0)),
        ({"pass": True, "score": 0.3, "reason": "r"}, 0.5, (False, 0.3)),
        ({"pass": False, "score": 0.9, "reason": "r"}, 0.5, (False, 0.9)),
        ([1, 2], None, (False, 0.0)),
        (None, None, (False, 0.0)),
        ({"__undefined": True}, None, (False, 0.0)),
        (0.4, 0.5, (False, 0.4)),
        (0.5, 0.5, (True, 0.5)),
        (-1, None, (False, -1.0)),
    ],
)
def test_results_are_read_as_promptfoo_reads_them(
    result: Any, threshold: float | None, expected: tuple[bool, float]
) -> None:
    config = RUBY.model_copy(update={"threshold": threshold})
    assert script_verdict(config, result, "the Ruby assert")[:2] == expected

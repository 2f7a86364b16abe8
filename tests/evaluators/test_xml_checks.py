"""promptfoo's ``is-xml`` and ``contains-xml`` (measured against promptfoo 0.123.1:
tests/conformance/promptfoo/xml.yaml runs both tools)."""

from __future__ import annotations

from typing import Any

import pytest

from app.evaluators.checks.xml_checks import check_contains_xml, check_is_xml
from app.evaluators.config import EvaluatorConfig

BOMB = (
    '<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa">'
    '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><l>&b;</l>'
)


def grader(value: Any = None) -> EvaluatorConfig:
    return EvaluatorConfig(name="x", type="is_xml", value=value)


@pytest.mark.parametrize(
    ("answer", "value", "held"),
    [
        ("<root><a>1</a><b><c>x</c></b></root>", None, True),
        ("<root><a>1</a><b><c>x</c></b></root>", "root.a, root.b.c", True),
        ("<root><a>1</a></root>", "root.d", False),
        ("<root><b/></root>", {"requiredElements": ["root.b"]}, True),
        ("  <s><p/></s>  ", None, True),
        ("Here: <n>x</n>", None, False),
        ("<a><b></a>", None, False),
        ("<a>1</a><b>2</b>", None, False),
        (BOMB, None, False),
    ],
)
def test_is_xml(answer: str, value: Any, held: bool) -> None:
    assert check_is_xml(grader(value), answer).held is held


@pytest.mark.parametrize(
    ("answer", "value", "held"),
    [
        ("Here it is: <note><to>A</to></note> done", None, True),
        ("Here it is: <note><to>A</to></note> done", "note.to", True),
        ("Here it is: <note><to>A</to></note> done", "note.from", False),
        ("<a><b></a>", None, False),
        ("<a>1</a><b>2</b>", None, True),
        ("no markup", None, False),
        ("<x>" * 5000, None, False),
    ],
)
def test_contains_xml(answer: str, value: Any, held: bool) -> None:
    assert check_contains_xml(grader(value), answer).held is held

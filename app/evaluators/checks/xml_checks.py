"""promptfoo's ``is-xml`` and ``contains-xml``: the answer is (or holds) well-formed XML.

Parsed with ``defusedxml`` (no entity expansion, no external resources). ``value`` lists
required elements as dotted paths from the root (``analysis.summary``): a comma-separated
string, a list, or ``{requiredElements: [...]}``; each must be there. ``contains-xml``
looks for the first element written in the answer (from a start tag to its last end tag)
that parses and has them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from app.evaluators.checks.deterministic import CheckOutcome
from app.evaluators.config import EvaluatorConfig

_START_TAG = re.compile(r"<([A-Za-z_][\w.:-]*)[\s/>]")
_MAX_STARTS = 200
"""Most start tags ``contains-xml`` tries (bounded work on a hostile answer)."""


def required_elements(value: Any) -> list[str]:
    """The dotted element paths ``value`` requires."""
    if isinstance(value, dict):
        value = value.get("requiredElements")
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list):
        return [str(part).strip() for part in value if str(part).strip()]
    return []


def _parsed(text: str) -> Element | None:
    try:
        root: Element = fromstring(text)
    except (ParseError, DefusedXmlException, ValueError):
        return None
    return root


def _missing(root: Element, paths: list[str]) -> str | None:
    """The first required path the document lacks, or None."""
    for path in paths:
        parts = path.split(".")
        if parts[0] != root.tag:
            return path
        nodes = [root]
        for part in parts[1:]:
            nodes = [child for node in nodes for child in node if child.tag == part]
            if not nodes:
                return path
    return None


def check_is_xml(config: EvaluatorConfig, answer: str) -> CheckOutcome:
    """The whole answer is XML with the required elements."""
    root = _parsed(answer.strip())
    if root is None:
        return CheckOutcome(False, "answer is not well-formed XML")
    missing = _missing(root, required_elements(config.value))
    if missing is not None:
        return CheckOutcome(False, f"answer is XML without the element {missing!r}")
    return CheckOutcome(True, "answer is XML")


def _fragments(answer: str) -> Iterator[str]:
    for count, found in enumerate(_START_TAG.finditer(answer)):
        if count >= _MAX_STARTS:
            return
        end = answer.rfind(f"</{found.group(1)}>")
        if end > found.start():
            yield answer[found.start() : end + len(found.group(1)) + 3]
        tail = answer.find("/>", found.start())
        if tail >= 0 and "<" not in answer[found.start() + 1 : tail]:
            yield answer[found.start() : tail + 2]


def check_contains_xml(config: EvaluatorConfig, answer: str) -> CheckOutcome:
    """Some element written in the answer is XML with the required elements."""
    paths = required_elements(config.value)
    for fragment in _fragments(answer):
        root = _parsed(fragment)
        if root is not None and _missing(root, paths) is None:
            return CheckOutcome(True, "answer contains XML")
    return CheckOutcome(
        False, "answer contains no well-formed XML" + (" with the elements" if paths else "")
    )

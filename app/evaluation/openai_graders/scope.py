"""The namespace grader templates see: ``item`` and ``sample``, rendered by the suite sandbox."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from app.suites.templates import TemplateProblem, render


class GraderProblem(Exception):
    """A grader that could not grade this item (the message says why)."""

    def __init__(self, message: str, *, judge: bool = False) -> None:
        super().__init__(message)
        self.judge = judge


def sample_scope(output_text: str, given: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``sample`` as templates read it: ``output_text``, ``output_json`` and the given keys.

    ``output_json`` is the output parsed as JSON, or an empty object when it is not JSON.
    """
    sample: dict[str, Any] = dict(given or {})
    text = sample.get("output_text")
    text = text if isinstance(text, str) else output_text
    try:
        parsed: Any = json.loads(text)
    except ValueError:
        parsed = {}
    sample.update(output_text=text, output_json=parsed)
    return sample


def render_text(template: str, scope: Mapping[str, Any], where: str) -> str:
    """``template`` rendered over ``scope``; a failure names ``where`` it was.

    Raises:
        GraderProblem: An undefined name, a syntax error or a refused construct.
    """
    try:
        return render(template, scope)
    except TemplateProblem as exc:
        raise GraderProblem(f"{where}: {exc}") from None

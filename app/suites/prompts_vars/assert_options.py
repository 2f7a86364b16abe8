"""promptfoo's judge options written on an assert: ``rubricPrompt`` and ``config``.

An ``llm-rubric`` assert's own ``rubricPrompt`` (text, messages, or a ``file://`` YAML, JSON
or text file) is its judge prompt, over a test's or ``defaultTest``'s ``options.rubricPrompt``
(read as ``rubric_prompt`` reads those). Its ``config`` (temperature, tokens) is not given to
the grading provider by promptfoo 0.123.1 (measured: the grading call keeps its settings), so
it is not read here either, with a warning saying so; a grading provider object's own
``config`` is read (``provider_config.grading_settings``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.evaluators.catalog import find_type
from app.evaluators.config import EvaluatorConfig
from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import Findings
from app.suites.prompts_vars.rubric_prompt import prompted_one, read_rubric_prompt

ASSERT_OPTIONS = ("rubricPrompt", "config")


def split_assert_options(raw: Any) -> tuple[Any, dict[int, dict[str, Any]]]:
    """The asserts without their judge options, and those options by the assert's index.

    Only a model grader's: another assert's ``config`` is its own (a program's, say).
    """
    if not isinstance(raw, list):
        return raw, {}
    asserts: list[Any] = []
    options: dict[int, dict[str, Any]] = {}
    for index, item in enumerate(raw):
        if _judged(item) and any(key in item for key in ASSERT_OPTIONS):
            options[index] = {key: item[key] for key in ASSERT_OPTIONS if key in item}
            item = {key: value for key, value in item.items() if key not in ASSERT_OPTIONS}
        asserts.append(item)
    return asserts, options


def with_assert_options(
    graders: tuple[EvaluatorConfig, ...],
    options: Mapping[int, Mapping[str, Any]],
    path: DocumentPath,
    variables: Mapping[str, Any],
    texts: Mapping[str, str],
    findings: Findings,
) -> tuple[EvaluatorConfig, ...]:
    """``graders`` (one per assert, in order) with each assert's own judge options applied."""
    changed = list(graders)
    for index, own in options.items():
        where = (*path, index)
        if "config" in own:
            findings.warn(
                (*where, "config"),
                "not read: promptfoo 0.123.1 does not give it to the grading provider either "
                "(its grading calls keep their settings): set them on the grading provider's "
                "config",
            )
        if index >= len(changed) or "rubricPrompt" not in own:
            continue
        text = read_rubric_prompt(own, where, findings, texts)
        if text is not None:
            changed[index] = prompted_one(
                changed[index], text, variables, (*where, "rubricPrompt"), findings
            )
    return tuple(changed)


def _judged(item: Any) -> bool:
    """Whether ``item`` is an assert a judge grades (``llm-rubric`` and its family)."""
    if not isinstance(item, dict) or not isinstance(item.get("type"), str):
        return False
    entry, _ = find_type(item["type"])
    return entry is not None and entry.family == "model"

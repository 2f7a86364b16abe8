"""The fields of each grader type, read from the file's keys and checked.

Each reader returns the ``EvaluatorConfig`` fields of its type. Readers exist for the
types that run and for the keys other types share with them (``command`` of code
graders); every other key of a type is kept as written.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ValidationError

from app.evaluators.catalog import find_aggregator
from app.evaluators.checks.json_schemas import schema_problem
from app.evaluators.code.js_engine import regex_error
from app.evaluators.config import RubricItem
from app.evaluators.registry import RUNNABLE_AGGREGATORS
from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import Findings, describe
from app.suites.graders.preprocessors import read_preprocessors
from app.suites.reading import References, Renderer, add_reference

PromptFiles = Literal["heuristic", "prefix"]
KindReader = Callable[[Mapping[str, Any], DocumentPath, "GraderContext"], dict[str, Any]]


@dataclass
class GraderContext:
    """What reading graders needs besides the raw values.

    Attributes:
        findings: Where problems go.
        render: Renders grader text (values, rubric items) with the case's variables.
        render_prompt: Renders inline judge prompts (variables and the judge's own names).
        strings: Plain strings in a list are rubric criteria (AgentV 2026 dialects).
        prompt_files: How a judge ``prompt`` names a file: ``heuristic`` (one token with a
            folder or an extension, or ``file://``) or ``prefix`` (``file://`` only).
        prompts: Judge prompt files met, with their locations.
        promptfoo: Graders follow promptfoo's rules (``semantics: promptfoo``): a ``metric``
            is a score's name that several graders may share, numbers are text as
            JavaScript prints them, and a ``-any``/``-all`` value may be comma-separated.
    """

    findings: Findings
    render: Renderer
    render_prompt: Renderer
    strings: bool = False
    prompt_files: PromptFiles = "heuristic"
    prompts: References = field(default_factory=dict)
    promptfoo: bool = False


_PATH_LIKE = re.compile(r"[^\s]*([/\\][^\s]*|\.[A-Za-z0-9]{1,10})")
_CANDIDATE_PLACEHOLDER = re.compile(r"\{\{\s*candidate_answer\s*\}\}")
_FILE_PREFIX = "file://"
BLIND_JUDGE_WARNING = "the judge prompt never shows the answer: add {{ candidate_answer }}"
_RUBRIC_TEXT_KEYS = ("description", "outcome", "criterion", "criteria")
_RUBRIC_KEYS = frozenset(
    {*_RUBRIC_TEXT_KEYS, "id", "weight", "required", "score_ranges", "min_score", "operator"}
)
_JS_FLAGS = "dgimsuvy"


def shows_candidate_answer(template: str) -> bool:
    """Whether a judge template has a ``{{ candidate_answer }}`` placeholder."""
    return _CANDIDATE_PLACEHOLDER.search(template) is not None


def looks_like_path(prompt: str) -> bool:
    """Whether a judge ``prompt`` names a file (one token with a folder or an extension)."""
    return _PATH_LIKE.fullmatch(prompt.strip()) is not None and "{{" not in prompt


def read_rubrics(
    raw: Any, path: DocumentPath, findings: Findings, render: Renderer
) -> tuple[RubricItem, ...]:
    """Rubric items: strings (required, weight 1) or ``{id, description|outcome, ...}``.

    A string stands for a list of one. A checklist item is required unless it says
    otherwise; a scored one (``score_ranges``) is gated by its ``min_score`` only.
    """
    items_raw = [raw] if isinstance(raw, str) else raw
    if not isinstance(items_raw, list) or not items_raw:
        findings.error(path, f"must be a list of rubric items, not {describe(raw)}")
        return ()
    items: list[RubricItem] = []
    for index, item in enumerate(items_raw):
        where = path if isinstance(raw, str) else (*path, index)
        rubric = _rubric_item(item, index, where, findings, render)
        if rubric is not None:
            items.append(rubric)
    ids = [item.id for item in items]
    for duplicate in sorted({item_id for item_id in ids if ids.count(item_id) > 1}):
        findings.error(path, f"duplicate rubric id {duplicate!r}")
    return tuple(items)


def _rubric_item(
    item: Any, index: int, where: DocumentPath, findings: Findings, render: Renderer
) -> RubricItem | None:
    if isinstance(item, str) and item.strip():
        described = render.text(item, where)
        return RubricItem(id=f"rubric-{index + 1}", description=described, required=True)
    if not isinstance(item, dict):
        findings.error(where, "a rubric item is a string or a mapping")
        return None
    for key in item:
        if key not in _RUBRIC_KEYS:
            findings.warn((*where, key), "unknown key of a rubric item, kept unused")
    if "score_ranges" in item and not item["score_ranges"]:
        findings.error((*where, "score_ranges"), "needs bands that cover 0 to 10 points")
        return None
    fields: dict[str, Any] = {
        "id": f"rubric-{index + 1}",
        "required": "score_ranges" not in item,
        **item,
    }
    key = next((k for k in _RUBRIC_TEXT_KEYS if k in item), None)
    text = fields.pop(key) if key else None
    if isinstance(text, str):
        fields["description"] = render.text(text, where)
    elif "score_ranges" in item:  # a scored criterion: its id is its description
        fields["description"] = str(fields["id"])
    if "score_ranges" in item:
        fields["score_ranges"] = _rendered_bands(
            item["score_ranges"], (*where, "score_ranges"), render
        )
    try:
        return RubricItem.model_validate(fields)
    except ValidationError as exc:
        findings.validation_error(where, exc)
        return None


def _rendered_bands(raw: Any, where: DocumentPath, render: Renderer) -> Any:
    """``score_ranges`` with each band's outcome rendered like the criterion's own text."""
    if isinstance(raw, dict):
        return {
            key: render.text(text, (*where, key)) if isinstance(text, str) else text
            for key, text in raw.items()
        }
    if isinstance(raw, list):
        return [
            {**entry, "outcome": render.text(entry["outcome"], (*where, index, "outcome"))}
            if isinstance(entry, dict) and isinstance(entry.get("outcome"), str)
            else entry
            for index, entry in enumerate(raw)
        ]
    return raw


def judge_prompt(raw: Any, path: DocumentPath, context: GraderContext) -> dict[str, Any]:
    """``prompt``: inline template text, a file, or a program that prints it.

    A file is ``file://path``, or a path-like token where allowed; a program is
    ``{command, config?, cwd?}``.
    """
    if raw is None:
        return {}
    if isinstance(raw, dict):
        return _prompt_program(raw, path, context.findings)
    if not isinstance(raw, str):
        context.findings.error(path, "must be the judge prompt text or a file path")
        return {}
    stripped = raw.strip()
    is_file = stripped.startswith(_FILE_PREFIX) or (
        context.prompt_files == "heuristic" and looks_like_path(stripped)
    )
    if is_file:
        file_path = stripped.removeprefix(_FILE_PREFIX)
        add_reference(context.prompts, file_path, path)
        return {"prompt": None, "prompt_path": file_path}
    text = context.render_prompt.text(raw, path)
    if not shows_candidate_answer(text):
        context.findings.warn(path, BLIND_JUDGE_WARNING)
    return {"prompt": text}


def _prompt_program(
    raw: Mapping[str, Any], path: DocumentPath, findings: Findings
) -> dict[str, Any]:
    """``{command (or script), config?, cwd?}``: the program and the configuration it reads."""
    unknown = sorted(set(raw) - {"command", "script", "config", "cwd"})
    for key in unknown:
        findings.error((*path, key), "unknown key: a prompt program takes command, config, cwd")
    key = "command" if "command" in raw else "script"
    fields: dict[str, Any] = {
        "prompt_program": {
            "command": _argv(raw.get(key), (*path, key), findings),
            "config": raw.get("config"),
        }
    }
    cwd = raw.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        findings.error((*path, "cwd"), f"must be a folder path, not {describe(cwd)}")
    elif cwd is not None:
        fields["cwd"] = cwd
    return fields


PROMPTFOO_SCORE_BANDS = {
    "0": "the answer does not meet it at all",
    "1": "the answer meets a small part of it",
    "4": "the answer meets about half of it",
    "7": "the answer meets most of it",
    "10": "the answer meets it fully",
}
"""How a promptfoo ``llm-rubric`` with a ``threshold`` is scored: promptfoo's judge gives a
score from 0 to 1 that the threshold judges (not only met / unmet), so the criterion is a
scored one, its points / 10 the score."""


def _scored(item: RubricItem) -> RubricItem:
    """A promptfoo rubric criterion the judge scores (``PROMPTFOO_SCORE_BANDS``)."""
    if item.scored:
        return item
    bands = {"required": False, "score_ranges": PROMPTFOO_SCORE_BANDS}
    return RubricItem.model_validate({**item.model_dump(), **bands})


def _judge(raw: Mapping[str, Any], path: DocumentPath, context: GraderContext) -> dict[str, Any]:
    fields = judge_prompt(raw.get("prompt"), (*path, "prompt"), context)
    source = next((key for key in ("rubrics", "criteria", "value") if key in raw), None)
    if source is not None:
        render = context.render
        fields["rubrics"] = read_rubrics(raw[source], (*path, source), context.findings, render)
        if context.promptfoo and raw.get("threshold") is not None:
            fields["rubrics"] = tuple(map(_scored, fields["rubrics"]))
    target = raw.get("target")
    if target is not None and not isinstance(target, str):
        context.findings.error((*path, "target"), "must be the name of a judge target")
    elif target is not None:
        fields["target"] = target
    if raw.get("preprocessors") is not None:
        where = (*path, "preprocessors")
        fields["preprocessors"] = read_preprocessors(raw["preprocessors"], where, context.findings)
    return fields


def _text_value(
    raw: Mapping[str, Any], path: DocumentPath, context: GraderContext
) -> dict[str, Any]:
    """``value``: a non-empty string, or (for list forms) a non-empty list of strings."""
    value = raw.get("value")
    is_text = isinstance(value, str) and bool(value)
    is_list = isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)
    if not (is_text or is_list):
        context.findings.error(
            (*path, "value"),
            f"is required: a non-empty string or list of strings, not {describe(value)}",
        )
        return {}
    return {"value": context.render.value(value, (*path, "value"))}


def _equals(raw: Mapping[str, Any], path: DocumentPath, context: GraderContext) -> dict[str, Any]:
    if raw.get("value") is None:
        context.findings.error((*path, "value"), "is required: the exact expected answer")
        return {}
    return {"value": context.render.value(raw["value"], (*path, "value"))}


def _regex(raw: Mapping[str, Any], path: DocumentPath, context: GraderContext) -> dict[str, Any]:
    """``value`` a valid JavaScript pattern with JavaScript ``flags`` (both tools' engine)."""
    value = raw.get("value")
    if not isinstance(value, str) or not value:
        context.findings.error(
            (*path, "value"), f"is required: a regular expression, not {describe(value)}"
        )
        return {}
    flags = raw.get("flags", "")
    if not isinstance(flags, str) or any(flag not in _JS_FLAGS for flag in flags):
        context.findings.error(
            (*path, "flags"),
            f"unsupported regular expression flags {flags!r} (JavaScript's: {_JS_FLAGS})",
        )
        return {}
    pattern = value
    problem = regex_error(pattern, flags)
    if problem is not None:
        context.findings.error(
            (*path, "value"), f"is not a valid JavaScript regular expression: {problem}"
        )
    return {"value": pattern, **({"flags": flags} if flags else {})}


def _json_schema(
    raw: Mapping[str, Any], path: DocumentPath, context: GraderContext
) -> dict[str, Any]:
    schema = raw.get("schema")
    if schema is None:
        return {}
    if not isinstance(schema, dict):
        context.findings.error(
            (*path, "schema"), f"must be a JSON Schema object, not {describe(schema)}"
        )
        return {}
    problem = schema_problem(schema)  # no retrieval, the meta-schema, no $ref loop
    if problem is not None:
        context.findings.error((*path, "schema"), problem)
    return {"schema": schema}


def aggregator_fields(
    raw: Any, path: DocumentPath, context: GraderContext
) -> dict[str, Any] | None:
    """A composite's ``aggregator`` (a type name, or ``{type, weights?, ...}``), checked."""
    findings = context.findings
    if isinstance(raw, str):
        raw = {"type": raw}
    if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
        findings.error(path, "must be a mapping with a 'type' (weighted_average, threshold...)")
        return None
    kind = find_aggregator(raw["type"])
    if kind is None:
        findings.error((*path, "type"), f"unknown aggregator {raw['type']!r}")
        return None
    if kind not in RUNNABLE_AGGREGATORS:
        findings.error((*path, "type"), f"aggregator {raw['type']!r} is not supported yet")
    fields: dict[str, Any] = {**raw, "type": kind}
    if "path" in raw or "command" in raw:
        command = raw.get("command", raw.get("path"))
        fields["command"] = _argv(command, (*path, "command"), findings)
        fields.pop("path", None)
    weights = raw.get("weights", {})
    if not isinstance(weights, dict) or not all(
        isinstance(w, int | float) and not isinstance(w, bool) and w >= 0 for w in weights.values()
    ):
        findings.error((*path, "weights"), "must map child names to weights (numbers, 0 or more)")
        fields["weights"] = {}
    return fields


def weighted_children(
    children: tuple[Any, ...],
    aggregator: Mapping[str, Any],
    path: DocumentPath,
    context: GraderContext,
) -> tuple[Any, ...]:
    """``weighted_average`` weights become the children's own ``weight``."""
    weights: Mapping[str, float] = aggregator.get("weights") or {}
    names = {child.name for child in children}
    for name in weights:
        if name not in names:
            context.findings.error(
                (*path, "aggregator", "weights", name), f"no child grader is called {name!r}"
            )
    return tuple(
        child.model_copy(update={"weight": float(weights[child.name])})
        if child.name in weights
        else child
        for child in children
    )


def _argv(command: Any, path: DocumentPath, findings: Findings) -> tuple[str, ...]:
    """A program as argv: a list of strings, or a string split like a shell would (no shell)."""
    if isinstance(command, str) and command.strip():
        try:
            return tuple(shlex.split(command))
        except ValueError as exc:
            findings.error(path, f"cannot be split into arguments: {exc}")
            return ()
    if isinstance(command, list) and command and all(isinstance(a, str) for a in command):
        return tuple(command)
    findings.error(
        path, f"must be a command: a list of strings or a string, not {describe(command)}"
    )
    return ()


def _code(raw: Mapping[str, Any], path: DocumentPath, context: GraderContext) -> dict[str, Any]:
    """``command`` (or the older ``script``), ``cwd`` and ``target`` of a code grader.

    A code grader's ``target`` (``{max_calls}`` or ``true``) lets its program call targets;
    it is kept as ``target_access``.
    """
    key = "command" if "command" in raw else "script"
    fields: dict[str, Any] = {"command": _argv(raw.get(key), (*path, key), context.findings)}
    if "target" in raw:  # the program's access to targets ({max_calls}), not a judge target
        access = _target_access(raw["target"], (*path, "target"), context.findings)
        if access is not None:
            fields["target_access"] = access
    cwd = raw.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        context.findings.error((*path, "cwd"), f"must be a folder path, not {describe(cwd)}")
    elif cwd is not None:
        fields["cwd"] = cwd
    return fields


def _target_access(raw: Any, path: DocumentPath, findings: Findings) -> dict[str, Any] | None:
    """``true`` (50 calls) or ``{max_calls: N}``: how often the program may call targets."""
    if raw is True:
        return {}
    if raw is None or raw is False:
        return None
    if not isinstance(raw, dict):
        findings.error(
            path,
            f"a code grader's target is {{max_calls: N}} or true (its program then calls "
            f"targets through the service), not {describe(raw)}",
        )
        return None
    unknown = sorted(set(raw) - {"max_calls"})
    if unknown:
        findings.error((*path, unknown[0]), "unknown key: a code grader's target takes max_calls")
        return None
    calls = raw.get("max_calls", 50)
    if isinstance(calls, bool) or not isinstance(calls, int) or calls < 0:
        findings.error((*path, "max_calls"), f"must be a whole number from 0, not {calls!r}")
        return None
    return {"max_calls": calls}


KIND_READERS: dict[str, KindReader] = {
    "llm_judge": _judge,
    "contains": _text_value,
    "contains_all": _text_value,
    "contains_any": _text_value,
    "icontains": _text_value,
    "icontains_all": _text_value,
    "icontains_any": _text_value,
    "starts_with": _text_value,
    "ends_with": _text_value,
    "equals": _equals,
    "regex": _regex,
    "is_json": _json_schema,
    "contains_json": _json_schema,
    "code_judge": _code,
}
"""Field readers by canonical type; other types keep their keys as written."""

"""JSON checks: ``is_json``, ``contains_json`` (both with an optional JSON Schema) and ``typeof``.

``is_json``: the trimmed answer is one JSON document. ``contains_json``: some JSON object or
array appears in the answer (a fenced block or inline in prose); with ``schema`` one of them
must be valid. ``typeof``: the answer, read as JSON, has the JSON type ``value`` (``string``,
``number``, ``integer``, ``boolean``, ``object``, ``array``, ``null``); an answer that is not
JSON is a ``string``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import yaml

from app.errors import EvaluatorConfigError
from app.evaluators.checks.deterministic import CheckOutcome
from app.evaluators.checks.json_schemas import (
    SCHEMA_SECONDS,
    SchemaTimeout,
    schema_problem,
    validation_error,
)
from app.evaluators.config import EvaluatorConfig
from app.evaluators.offload.cpu import seconds_left

JSON_TYPES = ("string", "number", "integer", "boolean", "object", "array", "null")
JSON_WHITESPACE = " \t\n\r"
"""The only characters JSON (and JavaScript's ``JSON.parse``) allows around a document."""


def _refuse_constant(name: str) -> Any:
    raise json.JSONDecodeError(f"{name} is not JSON", name, 0)


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


def parse_json(text: str) -> Any:
    """``text`` as one JSON document, as ``JSON.parse`` reads it: no ``NaN``/``Infinity``.

    Raises:
        json.JSONDecodeError: It is not one JSON document.
        RecursionError: It nests too deeply.
    """
    return _DECODER.decode(text.strip(JSON_WHITESPACE))


_MAX_STARTS = 256
_MAX_SPAN = 100_000
_YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _schema_problem(config: EvaluatorConfig, document: Any) -> str | None:
    """Why ``document`` does not match the grader's schema (None when it does)."""
    if config.json_schema is None:
        return None
    problem = schema_problem(config.json_schema)  # checked when the suite was read; cached
    if problem is not None:
        raise EvaluatorConfigError(f"evaluator {config.name!r} ({config.type}): schema {problem}")
    try:
        error = validation_error(config.json_schema, document, seconds_left(SCHEMA_SECONDS))
    except SchemaTimeout:
        raise EvaluatorConfigError(
            f"evaluator {config.name!r} ({config.type}): the schema took more than "
            f"{SCHEMA_SECONDS:g}s on this answer and was stopped (a pattern that backtracks, "
            "or a schema too large)"
        ) from None
    if error is None:
        return None
    where = "/".join(str(part) for part in error.path) or "(root)"
    return f"does not match the schema at {where}: {error.message}"


LIGHT_JSON_CHARS = 100_000
"""Longest answer ``is_json`` parses on the event loop when it has no schema (C-fast)."""


def plain_json_check(config: EvaluatorConfig, answer: str) -> bool:
    """Whether ``is_json`` is cheap here: no schema, a short answer (one C-speed parse).

    A worker thread costs more than such a parse (measured in ``bench/arms_bench.py``).
    """
    return config.json_schema is None and len(answer) <= LIGHT_JSON_CHARS


def check_is_json(config: EvaluatorConfig, answer: str) -> CheckOutcome:
    """The answer is JSON, valid for ``schema`` when one is given."""
    try:
        document = parse_json(answer)
    except (json.JSONDecodeError, RecursionError) as exc:
        return CheckOutcome(False, f"answer is not JSON: {exc}")
    problem = _schema_problem(config, document)
    if problem is not None:
        return CheckOutcome(False, f"answer {problem}")
    return CheckOutcome(
        True, "answer is JSON" + (" matching the schema" if config.json_schema else "")
    )


def embedded_json(text: str) -> Iterator[Any]:
    """Every JSON object or array written in ``text``, in order (bounded work)."""
    index, starts = 0, 0
    while starts < _MAX_STARTS:
        positions = [p for p in (text.find("{", index), text.find("[", index)) if p >= 0]
        if not positions:
            return
        start = min(positions)
        starts += 1
        try:
            document, end = _DECODER.raw_decode(text, start)
        except (json.JSONDecodeError, RecursionError):
            index = start + 1
            continue
        yield document
        index = end


def _balanced_spans(text: str) -> Iterator[tuple[str, int]]:
    """From each ``{``: the text to its balancing ``}`` (closed at the end), and where it ends."""
    index, starts = 0, 0
    while starts < _MAX_STARTS and (start := text.find("{", index)) >= 0:
        starts += 1
        depth, end = 0, min(len(text), start + _MAX_SPAN)
        for position in range(start, end):
            depth += {"{": 1, "}": -1}.get(text[position], 0)
            if depth == 0:
                end = position + 1
                break
        yield text[start:end] + "}" * depth, end
        index = start + 1


def lenient_objects(text: str) -> Iterator[dict[str, Any]]:
    """The objects written in ``text`` as promptfoo finds them (YAML flow mappings)."""
    skip_to = 0
    for span, end in _balanced_spans(text):
        if end <= skip_to:
            continue
        try:
            document = (
                json.loads(span)
                if "&" in span and "*" in span  # no YAML aliases: they could expand without end
                else yaml.load(span, Loader=_YAML_LOADER)
            )
        except (yaml.YAMLError, ValueError, RecursionError):
            continue
        if isinstance(document, dict):
            skip_to = end
            yield document


def check_contains_json(config: EvaluatorConfig, answer: str) -> CheckOutcome:
    """Some JSON object or array in the answer (valid for ``schema`` when one is given)."""
    problems: list[str] = []
    found = lenient_objects if config.semantics == "promptfoo" else embedded_json
    for document in found(answer):
        problem = _schema_problem(config, document)
        if problem is None:
            suffix = " matching the schema" if config.json_schema else ""
            return CheckOutcome(True, f"answer contains JSON{suffix}")
        problems.append(problem)
    if problems:
        return CheckOutcome(False, f"no JSON in the answer matches the schema: {problems[0]}")
    return CheckOutcome(False, "answer contains no JSON object or array")


def json_type(value: Any) -> str:
    """The JSON type name of a decoded value (``integer`` for whole numbers)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def check_typeof(config: EvaluatorConfig, answer: str) -> CheckOutcome:
    """The answer read as JSON has the type ``value`` (a non-JSON answer is a string)."""
    wanted = config.value
    if wanted not in JSON_TYPES:
        raise EvaluatorConfigError(
            f"evaluator {config.name!r} (typeof): 'value' must be one of {', '.join(JSON_TYPES)}"
        )
    try:
        found = json_type(parse_json(answer))
    except (json.JSONDecodeError, RecursionError):
        found = "string"
    held = found == wanted or (wanted == "number" and found == "integer")
    return CheckOutcome(held, f"answer is of type {found}" + ("" if held else f", not {wanted}"))

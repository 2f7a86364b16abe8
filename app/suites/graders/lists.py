"""Grader lists of every dialect, read into ``EvaluatorConfig``: nothing declared is dropped.

A grader's ``type`` may be written in any spelling the catalog knows (aliases, ``-`` or
``_``, promptfoo's ``not-`` prefix); it is stored under its canonical name. A type the
catalog does not know, a type that does not run yet, and an option its implementation does
not honour yet are errors naming them; a key nobody knows is kept (``model_extra``) and
reported. Plain strings in an AgentV 2026 list are rubric criteria, gathered into one
judge (``rubrics``) weighted by their number, as AgentV does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from app.evaluators.catalog import COMMON_KEYS, KNOWN_OPTION_KEYS, GraderType, find_type
from app.evaluators.code.program_asserts import TYPESCRIPT, file_reference
from app.evaluators.config import EvaluatorConfig, RubricItem
from app.evaluators.judges.max_score import options_problem
from app.evaluators.judges.model_graded import KINDS as MODEL_GRADED
from app.evaluators.judges.model_graded import NEGATION_IGNORED
from app.evaluators.registry import EVALUATOR_TYPES, EVALUATORS
from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import Findings, describe
from app.suites.graders.kinds import (
    KIND_READERS,
    GraderContext,
    KindReader,
    PromptFiles,
    aggregator_fields,
    read_rubrics,
    weighted_children,
)
from app.suites.graders.user_types import as_program
from app.suites.prompts_vars.provider_config import grading_settings

_RUNNABLE = ", ".join(EVALUATOR_TYPES)
SCRIPT_FILES = (".js", ".cjs", ".mjs", ".py")


def read_grader_list(
    raw: Any, path: DocumentPath, context: GraderContext
) -> tuple[EvaluatorConfig, ...] | None:
    """Every grader of a list, in order (None when ``raw`` is not a list).

    Names the file gives must be unique; a grader without one is named after its type
    (``contains``, then ``contains-2``...), never taking a name the file gives another.
    """
    if not isinstance(raw, list):
        context.findings.error(path, f"must be a list of graders, not {describe(raw)}")
        return None
    read: list[tuple[EvaluatorConfig, bool, int]] = []
    rubric_group = _string_group(raw, path, context) if context.strings else None
    for index, item in enumerate(raw):
        if isinstance(item, str) and rubric_group is not None:
            if rubric_group[0] == index:
                read.append((rubric_group[1], False, index))
            continue
        grader = read_grader(item, (*path, index), context)
        if grader is not None:
            metric = item.get("metric") if not context.promptfoo else None
            named = bool(item.get("name") or metric or item.get("id"))
            read.append((grader, named, index))
    return _named(read, path, context.findings)


def _named(
    read: list[tuple[EvaluatorConfig, bool, int]], path: DocumentPath, findings: Findings
) -> tuple[EvaluatorConfig, ...]:
    """Check the names the file gives; give the others unique names."""
    explicit: dict[str, int] = {}
    for grader, named, index in read:
        if named and grader.name in explicit:
            findings.error(
                (*path, index, "name"),
                f"duplicate grader name {grader.name!r} (also at index "
                f"{explicit[grader.name]}); give each grader of a list its own name",
            )
        elif named:
            explicit[grader.name] = index
    taken = set(explicit)
    graders: list[EvaluatorConfig] = []
    for grader, named, _ in read:
        if not named:
            name = _unique(grader.name, taken)
            taken.add(name)
            grader = grader if name == grader.name else grader.model_copy(update={"name": name})
        graders.append(grader)
    return tuple(graders)


def with_defaults(
    own: tuple[EvaluatorConfig, ...],
    defaults: tuple[EvaluatorConfig, ...],
    *,
    defaults_first: bool = False,
) -> tuple[EvaluatorConfig, ...]:
    """A case's graders, then the suite's defaults; a default keeps its name unless taken.

    ``defaults_first``: the defaults come first (promptfoo's order of a test's asserts).
    """
    taken = {grader.name for grader in own}
    appended: list[EvaluatorConfig] = []
    for grader in defaults:
        name = _unique(grader.name, taken)
        taken.add(name)
        appended.append(grader if name == grader.name else grader.model_copy(update={"name": name}))
    return (*appended, *own) if defaults_first else (*own, *appended)


def _unique(name: str, taken: set[str]) -> str:
    if name not in taken:
        return name
    number = 2
    while f"{name}-{number}" in taken:
        number += 1
    return f"{name}-{number}"


def _string_group(
    raw: list[Any], path: DocumentPath, context: GraderContext
) -> tuple[int, EvaluatorConfig] | None:
    """The one judge that a list's plain strings stand for, at the first string's index."""
    indices = [index for index, item in enumerate(raw) if isinstance(item, str)]
    texts = [(index, raw[index].strip()) for index in indices if raw[index].strip()]
    for index in indices:
        if not raw[index].strip():
            context.findings.error((*path, index), "an empty criterion")
    if not texts:
        return None
    rubrics = tuple(
        RubricItem(
            id=f"rubric-{number}",
            description=context.render.text(text, (*path, index)),
            required=True,
        )
        for number, (index, text) in enumerate(texts, start=1)
    )
    judge = EvaluatorConfig(name="rubrics", type="llm_judge", rubrics=rubrics, weight=len(texts))
    return indices[0], judge


def read_grader(raw: Any, path: DocumentPath, context: GraderContext) -> EvaluatorConfig | None:
    """One ``{type, name?, ...}`` grader; None when it is wrong (errors recorded).

    A grader whose type or options do not run yet is still returned (its errors are
    recorded, so the suite does not run): the model holds every grader a file declares.
    """
    findings = context.findings
    if not isinstance(raw, dict):
        findings.error(path, f"a grader must be a mapping with 'type', not {describe(raw)}")
        return None
    if set(raw) == {"include"}:
        findings.error(path, "assertion templates ('include') are not supported yet")
        return None
    declared = raw.get("type")
    if not isinstance(declared, str) or not declared.strip():
        findings.error((*path, "type"), f"is required: a grader type (runnable: {_RUNNABLE})")
        return None
    raw = as_program(raw, declared)
    entry, negated = find_type(raw["type"])
    if entry is None:
        findings.error(
            (*path, "type"),
            f"unknown grader type {declared!r}: neither AgentV nor promptfoo defines it "
            f"(runnable here: {_RUNNABLE})",
        )
        return None
    before = len(findings.errors)
    raw, transforms = _transforms(_dialect_values(raw, entry, path, context), path, context)
    fields = _common_fields(raw, declared, negated, path, findings)
    if transforms:  # a transform's script sees the test's variables, as an assert's does
        fields.update(transforms=transforms, test_vars=context.render.variables or {})
    fields.update(_READERS.get(entry.name, _keep)(raw, path, context))
    extras = _extras(raw, entry, fields, path, findings)
    if len(findings.errors) > before:
        return None
    _check_runnable(entry, declared, raw, negated, path, findings)
    if context.promptfoo:
        fields["semantics"] = "promptfoo"
    fields.update(_variables(raw, entry.name, path, context))
    try:
        return EvaluatorConfig.model_validate({**extras, **fields, "type": entry.name})
    except ValidationError as exc:
        findings.validation_error(path, exc)
        return None


LIST_FORMS = frozenset({"contains_any", "contains_all", "icontains_any", "icontains_all"})
TEXT_FORMS = LIST_FORMS | {"contains", "icontains", "starts_with", "ends_with", "equals"}


def js_text(number: float) -> str:
    """A number as JavaScript's ``String()`` writes it (``1.0`` -> ``1``)."""
    if isinstance(number, float) and number.is_integer() and abs(number) < 1e21:
        return str(int(number))
    return repr(number) if isinstance(number, float) else str(number)


def _text_of_number(value: Any) -> Any:
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    return js_text(value) if is_number else value


def provider_name(raw: Any) -> str | None:
    """The target a promptfoo grading ``provider`` names (None: an embedding provider alone).

    A string, ``{id}``/``{label}``, or the ``text`` of ``{text, embedding}``.
    """
    if isinstance(raw, dict) and "text" in raw:
        return provider_name(raw["text"])
    if isinstance(raw, dict):
        raw = raw.get("label") or raw.get("id")
    return raw.strip() if isinstance(raw, str) and raw.strip() else None


def embedding_name(raw: Any) -> str | None:
    """The embeddings target a promptfoo ``provider`` names: ``{embedding: ...}``'s, or its own."""
    if isinstance(raw, dict) and "embedding" in raw:
        return provider_name(raw["embedding"])
    return provider_name(raw)


def _similar(raw: Mapping[str, Any], path: DocumentPath, context: GraderContext) -> dict[str, Any]:
    """``value`` (a text or a list), the measure of the type's suffix, ``provider``'s target."""
    value, findings = raw.get("value"), context.findings
    is_list = isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)
    if not (isinstance(value, str) or is_list):
        findings.error(
            (*path, "value"), f"is required: a text or a list of texts, not {describe(value)}"
        )
        return {}
    suffix = str(raw["type"]).partition(":")[2].strip().lower()
    fields = {
        "value": context.render.value(value, (*path, "value")),
        "measure": suffix or raw.get("measure"),  # ``similar:dot``'s, else the key's
    }
    if "provider" in raw:
        name = embedding_name(raw["provider"])
        if name is None:
            findings.error(
                (*path, "provider"),
                "must name an embeddings target (a string or {id}), not "
                + describe(raw["provider"]),
            )
        else:
            fields["target"] = name
    return fields


def _moderation(
    raw: Mapping[str, Any], path: DocumentPath, context: GraderContext
) -> dict[str, Any]:
    """``value`` (a list of category codes, or none), ``provider``'s target.

    A bare text is refused, as promptfoo refuses it.
    """
    value, findings = raw.get("value"), context.findings
    fields: dict[str, Any] = {}
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        fields["value"] = value
    elif value is not None:
        findings.error((*path, "value"), f"must be a list of category codes, not {describe(value)}")
    return {**fields, **_kind_target(raw, path, findings, "a moderation target")}


def _classifier(
    raw: Mapping[str, Any], path: DocumentPath, context: GraderContext
) -> dict[str, Any]:
    """``value`` (the class judged: a text, rendered, or none), ``provider``'s target.

    Any other value is refused, as promptfoo refuses it.
    """
    value, findings = raw.get("value"), context.findings
    fields: dict[str, Any] = {}
    if isinstance(value, str):
        fields["value"] = context.render.text(value, (*path, "value"))
    elif value is not None:
        findings.error((*path, "value"), f"must be the name of a class, not {describe(value)}")
    return {**fields, **_kind_target(raw, path, findings, "a classifier target")}


def _kind_target(
    raw: Mapping[str, Any], path: DocumentPath, findings: Findings, what: str
) -> dict[str, Any]:
    """The ``target`` an assert's ``provider`` names (``what`` it must name), if any."""
    if "provider" not in raw:
        return {}
    name = provider_name(raw["provider"])
    if name is None:
        findings.error(
            (*path, "provider"),
            f"must name {what} (a string or {{id}}), not {describe(raw['provider'])}",
        )
        return {}
    return {"target": name}


def _judge_provider(
    raw: Mapping[str, Any], path: DocumentPath, findings: Findings
) -> Mapping[str, Any]:
    """A model grader's ``provider`` as its judge ``target``; both given, they must agree.

    ``provider`` is promptfoo's word, and AgentV's July layout's.
    """
    rest = {key: value for key, value in raw.items() if key != "provider"}
    settings = grading_settings(raw["provider"], (*path, "provider"), findings)
    if settings:
        rest["judge_options"] = settings
    name = provider_name(raw["provider"])
    if name is None:
        findings.error(
            (*path, "provider"),
            f"must name a judge target (a string or {{id}}), not {describe(raw['provider'])}",
        )
        return rest
    if rest.get("target") not in (None, name):
        findings.error(
            (*path, "provider"),
            f"names the judge target {name!r} but 'target' names {rest['target']!r}: give one",
        )
    return {**rest, "target": name}


def _dialect_values(
    raw: Mapping[str, Any], entry: GraderType, path: DocumentPath, context: GraderContext
) -> Mapping[str, Any]:
    """A model grader's ``provider`` as its ``target`` (every dialect), then promptfoo's rules."""
    if entry.family == "model" and "provider" in raw:
        raw = _judge_provider(raw, path, context.findings)
    return promptfoo_values(raw, entry) if context.promptfoo else raw


def promptfoo_values(raw: Mapping[str, Any], entry: GraderType) -> Mapping[str, Any]:
    """A promptfoo grader's keys as promptfoo reads them.

    Numbers are text (``contains: 52.5``), a ``-any``/``-all`` string is a
    comma-separated list (``"red, blue"``: ``red`` and ``blue``), the ``value`` of
    ``is-json``/``contains-json`` is their JSON Schema (a mapping, or its JSON text; a model
    grader's ``provider`` is read in every dialect, by ``read_grader``).
    """
    type_name = entry.name
    value = raw.get("value")
    if type_name in ("is_json", "contains_json") and isinstance(value, str):
        value = _schema_text(value)
    if type_name in ("is_json", "contains_json") and isinstance(value, dict):
        return {**{k: v for k, v in raw.items() if k != "value"}, "schema": value}
    if type_name not in TEXT_FORMS or value is None:
        return raw
    if isinstance(value, int | float):
        value = _text_of_number(value)
    elif isinstance(value, list):
        value = [_text_of_number(item) for item in value]
    if type_name in LIST_FORMS and isinstance(value, str):
        value = [part.strip() for part in value.split(",")]
    return {**raw, "value": value}


def _transforms(
    raw: Mapping[str, Any], path: DocumentPath, context: GraderContext
) -> tuple[Mapping[str, Any], tuple[str, ...]]:
    """A promptfoo assert's ``transform``, taken out of its keys."""
    if not context.promptfoo or "transform" not in raw:
        return raw, ()
    transforms = read_transform(raw["transform"], (*path, "transform"), context.findings)
    return {key: value for key, value in raw.items() if key != "transform"}, transforms


def read_transform(raw: Any, path: DocumentPath, findings: Findings) -> tuple[str, ...]:
    """An output ``transform`` (promptfoo's): inline JavaScript, or a JS or Python file."""
    if not isinstance(raw, str) or not raw.strip():
        findings.error(path, f"must be JavaScript code or a file://, not {describe(raw)}")
        return ()
    reference = file_reference(raw)
    if reference is not None and not reference[0].endswith((*SCRIPT_FILES, *TYPESCRIPT)):
        findings.error(
            path,
            f"{raw.strip()!r} is not supported: a transform file is JavaScript (.js, .cjs, "
            ".mjs), TypeScript (.ts, .mts, .cts, .tsx: run under bun) or Python (.py)",
        )
        return ()
    return (raw,)


def _variables(
    raw: Mapping[str, Any], type_name: str, path: DocumentPath, context: GraderContext
) -> dict[str, Any]:
    """The test's variables, for graders that read them.

    Scripts see them as ``context.vars``; the model-graded family's questions name the
    test's query and context.
    """
    if type_name in ("javascript", "python", "ruby"):
        return _script(raw, type_name, path, context)
    if type_name in MODEL_GRADED:
        return {"test_vars": context.render.variables or {}}
    return {}


def _schema_text(value: str) -> Any:
    """A JSON Schema written as JSON text (promptfoo's ``value: |`` block), else the text."""
    try:
        parsed = json.loads(value)
    except ValueError:
        return value
    return parsed if isinstance(parsed, dict) else value


def _script(
    raw: Mapping[str, Any], language: str, path: DocumentPath, context: GraderContext
) -> dict[str, Any]:
    """Code or a ``file://`` (its test's variables kept for ``context.vars``).

    Files, and inline Python and Ruby, run in the sandbox (placed like code graders);
    TypeScript files under ``bun``. A ``ruby`` assert's file is a program (promptfoo would
    read another file's text as Ruby code: refused here by name).
    """
    value = raw.get("value")
    if not isinstance(value, str) or not value.strip():
        context.findings.error(
            (*path, "value"), f"is required: {language.capitalize()} code, not {describe(value)}"
        )
        return {}
    reference = file_reference(value)
    programs = (".rb", *SCRIPT_FILES, *TYPESCRIPT)
    if language == "ruby" and reference is not None and not reference[0].endswith(programs):
        context.findings.error(
            (*path, "value"),
            f"{value.strip()!r} is not supported: a ruby assert's file is a Ruby (.rb), Python "
            "or JavaScript program",
        )
        return {}
    return {"test_vars": context.render.variables or {}}


def _composite(
    raw: Mapping[str, Any], path: DocumentPath, context: GraderContext
) -> dict[str, Any]:
    """Children (``evaluators``, ``assertions`` or ``assert``) and the ``aggregator``."""
    key = next((k for k in ("evaluators", "assertions", "assert") if k in raw), "evaluators")
    children = read_grader_list(raw.get(key), (*path, key), context)
    if children is not None and not children:
        context.findings.error((*path, key), "a composite needs at least one grader")
    fields: dict[str, Any] = {"evaluators": children or ()}
    if "aggregator" in raw:
        aggregator = aggregator_fields(raw["aggregator"], (*path, "aggregator"), context)
        if aggregator is not None:
            fields["aggregator"] = aggregator
            fields["evaluators"] = weighted_children(
                fields["evaluators"], aggregator, path, context
            )
    return fields


def _keep(raw: Mapping[str, Any], path: DocumentPath, context: GraderContext) -> dict[str, Any]:
    """A type that does not run yet: its keys are kept as written (``value`` rendered)."""
    if "value" in raw:
        return {"value": context.render.value(raw["value"], (*path, "value"))}
    return {}


def _common_fields(
    raw: Mapping[str, Any],
    declared: str,
    negated: bool,
    path: DocumentPath,
    findings: Findings,
) -> dict[str, Any]:
    name = raw.get("name")
    if name is None:
        name = raw.get("metric", raw.get("id", declared.strip()))
    if not isinstance(name, str | int) or not str(name).strip():
        findings.error((*path, "name"), f"must be a non-empty string, not {describe(name)}")
    fields: dict[str, Any] = {"name": str(name)}
    if isinstance(raw.get("metric"), str | int) and str(raw["metric"]).strip():
        fields["metric"] = str(raw["metric"]).strip()  # promptfoo's named score
    for key in ("weight", "min_score", "threshold"):
        if key in raw:
            fields[key] = raw[key]
    negate = raw.get("negate", False)
    if not isinstance(negate, bool):
        findings.error((*path, "negate"), f"must be true or false, not {describe(negate)}")
        negate = False
    fields["negate"] = negate != negated
    required = raw.get("required", False)
    if isinstance(required, bool):
        fields["required"] = required
    elif isinstance(required, int | float) and 0 < required <= 1:
        fields.update(required=True, min_score=required)
    else:
        findings.error((*path, "required"), "must be true, false or a score from 0 to 1")
    return fields


def _check_runnable(
    entry: GraderType,
    declared: str,
    raw: Mapping[str, Any],
    negated: bool,
    path: DocumentPath,
    findings: Findings,
) -> None:
    """An error when the type, or an option it is given, does not run here yet."""
    if not EVALUATORS.runs(entry.name):
        spelled = "" if declared.strip() == entry.name else f" ({entry.name})"
        findings.error(
            (*path, "type"),
            f"grader type {declared.strip()!r}{spelled} is not supported yet "
            f"({entry.summary}): this service does not run it",
        )
        return
    honoured = EVALUATORS.honours(entry.name)
    for key, value in raw.items():
        if key in COMMON_KEYS or key in honoured or value is None or value is False:
            continue
        # A passthrough type's other keys are its program's configuration, not options.
        known = key in KNOWN_OPTION_KEYS and not entry.passthrough
        if key in entry.options or known:
            findings.error(
                (*path, key), f"option {key!r} of grader type {entry.name!r} is not supported yet"
            )
    if negated and entry.name in NEGATION_IGNORED:
        findings.error(
            (*path, "type"),
            f"{declared.strip()!r} is not supported: promptfoo 0.123.1 grades it as the plain "
            "form (its not- is ignored), so neither meaning would be promptfoo's: write the "
            "criterion negated instead",
        )
    if negated and "negate" not in honoured:
        findings.error(
            (*path, "type"),
            f"option 'negate' of grader type {entry.name!r} is not supported yet",
        )


def _extras(
    raw: Mapping[str, Any],
    entry: GraderType,
    fields: Mapping[str, Any],
    path: DocumentPath,
    findings: Findings,
) -> dict[str, Any]:
    """Keys kept as written; a key no grader defines is reported (a typo, a newer option)."""
    consumed = {"type", "name", "metric", "weight", "negate", "required", "min_score"}
    consumed |= {"threshold", *fields, *_CONSUMED.get(entry.name, ())}
    extras: dict[str, Any] = {}
    for key, value in raw.items():
        if key in consumed:
            continue
        extras[key] = value
        known = key in COMMON_KEYS or key in entry.options or entry.passthrough
        if not known and key not in KNOWN_OPTION_KEYS:
            findings.warn((*path, key), f"unknown key of grader type {entry.name!r}, kept unused")
    return extras


def _max_score(
    raw: Mapping[str, Any], path: DocumentPath, context: GraderContext
) -> dict[str, Any]:
    """``max-score``'s ``value``: ``{weights?, method?, threshold?}``, checked."""
    fields = _keep(raw, path, context)
    problem = options_problem(fields.get("value"))
    if problem is not None:
        context.findings.error((*path, "value"), problem)
    return fields


_READERS: dict[str, KindReader] = {
    **KIND_READERS,
    "composite": _composite,
    "similar": _similar,
    "moderation": _moderation,
    "classifier": _classifier,
    "max_score": _max_score,
}

_CONSUMED: dict[str, tuple[str, ...]] = {
    "llm_judge": ("prompt", "rubrics", "criteria", "value", "provider", "preprocessors"),
    "composite": ("evaluators", "assertions", "assert", "aggregator"),
    "code_judge": ("command", "script", "cwd", "target"),
    "regex": ("flags", "value"),
    "is_json": ("schema",),
    "contains_json": ("schema",),
    "similar": ("provider",),
    "moderation": ("provider",),
    "classifier": ("provider",),
}


__all__ = [
    "GraderContext",
    "PromptFiles",
    "read_grader",
    "read_grader_list",
    "read_rubrics",
    "with_defaults",
]

"""One AgentV eval case, of either generation, into an ``EvalCase``.

Late 2025: ``id``, ``outcome``/``expected_outcome``, ``input_messages``,
``expected_messages``, ``evaluators`` or ``execution.evaluators``, inline ``rubrics``.
2026: ``criteria``, ``input`` (a string is one user turn), ``input_files``,
``expected_output``, ``assertions``, ``vars`` (templates), ``execution.skip_defaults``,
``metadata``/``tags``. Real files mix the two, so every key is read whatever the dialect.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.evaluators.config import DEFAULT_EVALUATOR, EvaluatorConfig
from app.formatting.messages import FilePart, Message, TextPart
from app.suites.agentv.conversations import CONVERSATION_KEYS, is_conversation, read_conversation
from app.suites.case_fields import picked_expected, read_messages, reference_answer
from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import (
    MISSING,
    Findings,
    describe,
    pick,
    text_field,
    warn_unknown_keys,
)
from app.suites.files.sources import is_prompt_md
from app.suites.graders.context import grader_context
from app.suites.graders.kinds import read_rubrics
from app.suites.graders.lists import read_grader_list, with_defaults
from app.suites.model import EvalCase
from app.suites.reading import (
    CaseOrigin,
    Renderer,
    add_reference,
    case_variables,
    pass_threshold,
    read_trials,
    refuse,
)
from app.suites.tool_use import TOOL_USE_KEYS, ToolUse, read_tool_use

OUTCOME_KEYS = ("expected_outcome", "outcome", "criteria")
INPUT_KEYS = ("input_messages", "input")
EXPECTED_KEYS = ("expected_messages", "expected_output")
LIST_KEYS = ("evaluators", "assertions", "assert")
CASE_KEYS = frozenset(
    {"id", "conversation_id", "note", "description", "evaluator", "execution", "rubrics"}
    | {"input_files", "vars", "metadata", "tags", "threshold", "governance", "repeat", "trials"}
    | {*OUTCOME_KEYS, *INPUT_KEYS, *EXPECTED_KEYS, *LIST_KEYS, *CONVERSATION_KEYS}
    | TOOL_USE_KEYS
)
CASE_REFUSED = {
    "workspace": "a case's own workspace is not supported: give 'workspace' once, for the suite",
}
EXECUTION_KEYS = frozenset({"target", "evaluators", "skip_defaults", "threshold", "assertions"})
METADATA_KEYS = frozenset({"metadata", "tags", "governance"})


@dataclass
class SuiteDefaults:
    """What the suite gives every case (unless a case sets ``execution.skip_defaults``).

    Attributes:
        templates: A 2026 file: judge prompts and criteria strings are templates.
        variables: The suite's ``vars`` (None when it has none).
        fallback: The 2025 suite graders (``execution.evaluators``), raw, and where.
        appended: The 2026 suite graders (``assertions``), raw, and where.
        input: The 2026 suite ``input``, raw, and where; prepended to each case's input.
        input_files: The 2026 suite ``input_files`` and where; attached to each case.
        target: The suite's target (a per-case target must agree with it).
        texts: Files read before the cases (``PROMPT.md`` task prompts among them).
        sibling_prompt: A ``PROMPT.md`` beside the suite: the prompt of a test with no input.
    """

    templates: bool
    variables: dict[str, Any] | None = None
    fallback: tuple[Any, DocumentPath] | None = None
    appended: tuple[Any, DocumentPath] | None = None
    input: tuple[Any, DocumentPath] | None = None
    input_files: tuple[Any, DocumentPath] | None = None
    target: str | None = None
    texts: Mapping[str, str] = field(default_factory=dict)
    sibling_prompt: str | None = None
    tool_use: ToolUse | None = None
    _cache: dict[str, Any] = field(default_factory=dict)


def read_case(
    raw: Any, path: DocumentPath, defaults: SuiteDefaults, findings: Findings
) -> tuple[EvalCase, CaseOrigin] | None:
    """One case and its origin; None when it has errors (every one recorded)."""
    if not isinstance(raw, dict):
        findings.error(path, f"an eval case must be a mapping, not {describe(raw)}")
        return None
    before = len(findings.errors)
    warn_unknown_keys(raw, CASE_KEYS | frozenset(CASE_REFUSED), path, findings)
    for key, why in CASE_REFUSED.items():
        if key in raw:
            refuse(findings, (*path, key), f"'{key}'", why)
    _check_evaluator_kind(raw, path, findings)
    variables = case_variables(defaults.variables, raw, path, findings)
    origin = CaseOrigin(path=path, variables=variables)
    render = Renderer(variables, findings)
    execution = _execution(raw, path, defaults, findings)
    skip_defaults = execution.get("skip_defaults") is True
    case_id = text_field(raw, ("id",), path, findings, required=True)
    live = is_conversation(raw)
    declares_graders = _declares_graders(raw, execution, defaults, skip_defaults)
    # A test with an expected answer and nothing else is graded against it (AgentV).
    expects = any(raw.get(key) is not None for key in EXPECTED_KEYS)
    optional = declares_graders or live or expects
    outcome = _outcome(raw, path, render, findings, required=not optional)
    conversation = None
    if live:
        conversation = read_conversation(
            raw,
            path,
            origin,
            render,
            findings,
            templates=defaults.templates,
            has_criteria=bool(outcome),
        )
    conversation_id = text_field(raw, ("conversation_id",), path, findings)
    note = text_field(raw, ("note",), path, findings) or text_field(
        raw, ("description",), path, findings
    )
    messages = _input(raw, path, defaults, skip_defaults, origin, render, findings, live)
    expected = picked_expected(raw, EXPECTED_KEYS, path, findings, origin.files, render)
    graders = _graders(raw, path, defaults, execution, skip_defaults, origin, findings)
    if live and not declares_graders:
        graders = ()  # the turns are graded; nothing grades the whole conversation
    threshold = raw.get("threshold", execution.get("threshold"))
    thresholds = pass_threshold(threshold, (*path, "threshold"), findings)
    repeat = "repeat" if "repeat" in raw else "trials"
    trials = read_trials(raw.get(repeat), (*path, repeat), findings)
    own_tools = read_tool_use(raw, path, findings, defaults.texts)
    tool_use = own_tools.merged_over(defaults.tool_use) if own_tools else defaults.tool_use
    if len(findings.errors) > before or case_id is None:
        return None
    case = EvalCase(
        id=case_id,
        conversation_id=conversation_id,
        expected_outcome=outcome or "",
        note=note,
        input_messages=messages,
        expected_messages=expected,
        reference_answer=reference_answer(expected, {}),
        evaluators=graders,
        thresholds=thresholds,
        trials=trials,
        metadata={key: raw[key] for key in raw if key in METADATA_KEYS},
        conversation=conversation,
        tool_use=tool_use,
    )
    return case, origin


def _declares_graders(
    raw: Mapping[str, Any],
    execution: Mapping[str, Any],
    defaults: SuiteDefaults,
    skip_defaults: bool,
) -> bool:
    """Whether the case gets graders of its own or the suite's (then criteria is optional)."""
    own = any(raw.get(key) is not None for key in (*LIST_KEYS, "rubrics"))
    suite = defaults.fallback is not None or (defaults.appended is not None and not skip_defaults)
    return own or execution.get("evaluators") is not None or suite


def _check_evaluator_kind(raw: Mapping[str, Any], path: DocumentPath, findings: Findings) -> None:
    """AgentV 2025's ``evaluator:`` default kind: only ``llm_judge`` runs here."""
    kind = raw.get("evaluator")
    if kind is not None and kind != "llm_judge":
        findings.error(
            (*path, "evaluator"),
            f"evaluator kind {kind!r} is not supported yet (only llm_judge runs here)",
        )


def _execution(
    raw: Mapping[str, Any], path: DocumentPath, defaults: SuiteDefaults, findings: Findings
) -> dict[str, Any]:
    execution = raw.get("execution")
    if execution is None:
        return {}
    if not isinstance(execution, dict):
        findings.error((*path, "execution"), f"must be a mapping, not {describe(execution)}")
        return {}
    warn_unknown_keys(execution, EXECUTION_KEYS, (*path, "execution"), findings)
    target = execution.get("target")
    if target is not None and target != defaults.target:
        findings.error(
            (*path, "execution", "target"),
            "a per-case target is not supported: set the target on the suite or the request",
        )
    return execution


def _outcome(
    raw: Mapping[str, Any],
    path: DocumentPath,
    render: Renderer,
    findings: Findings,
    *,
    required: bool,
) -> str | None:
    outcome = text_field(raw, OUTCOME_KEYS, path, findings, required=required)
    key = next((name for name in OUTCOME_KEYS if name in raw), OUTCOME_KEYS[0])
    return render.text(outcome, (*path, key)) if outcome else outcome


def _input(
    raw: Mapping[str, Any],
    path: DocumentPath,
    defaults: SuiteDefaults,
    skip_defaults: bool,
    origin: CaseOrigin,
    render: Renderer,
    findings: Findings,
    live: bool,
) -> tuple[Message, ...]:
    """The case's input (optional in a live conversation, whose turns say the rest)."""
    key, value = pick(raw, INPUT_KEYS, path, findings)
    files = raw.get("input_files")
    suite_files = defaults.input_files
    if value is MISSING or value is None:
        prompt = _task_prompt(files, defaults, live)
        if prompt is None:
            findings.error(
                (*path, key),
                "is required: the input messages, 'input' (a string), or a PROMPT.md in "
                "'input_files' or beside the suite",
            )
            return ()
        key, value, files, suite_files = "input", *prompt
        files = files or None
    if key == "input" and isinstance(value, dict) and "role" in value:
        value = [value]
    messages = read_messages(value, (*path, key), findings, origin.files, render)
    if files is not None:
        if not isinstance(value, str):
            findings.error((*path, "input_files"), "is only supported with a string 'input'")
        messages = _attach(messages, files, (*path, "input_files"), origin, findings)
    if skip_defaults:
        return messages
    if suite_files is not None and raw.get("input_files") is None:  # a test's own replace them
        messages = _attach(messages, *suite_files, origin, findings)
    if defaults.input is not None:
        suite_raw, suite_path = defaults.input
        if isinstance(suite_raw, dict) and "role" in suite_raw:
            suite_raw = [suite_raw]
        messages = (
            *read_messages(suite_raw, suite_path, findings, origin.files, render),
            *messages,
        )
    return messages


def _task_prompt(
    files: Any, defaults: SuiteDefaults, live: bool
) -> tuple[Any, Any, tuple[Any, DocumentPath] | None] | None:
    """AgentV's task prompt for a test with no input: ``(text, input_files, suite files)``.

    A ``PROMPT.md`` listed in the test's ``input_files`` (else, for a test without its own,
    the suite's) is the prompt, and the other files listed stay attachments; else a
    ``PROMPT.md`` beside the suite file. None when there is none, but for a live
    conversation (``live``), whose turns say what the user says: no messages then.
    """
    suite = defaults.input_files
    for listed, from_suite in ((files, False), (suite[0] if suite else None, True)):
        if not isinstance(listed, list) or (from_suite and files is not None):
            continue
        named = [f for f in listed if isinstance(f, str) and is_prompt_md(f)]
        if named and named[0] in defaults.texts:
            rest = [f for f in listed if not (isinstance(f, str) and is_prompt_md(f))]
            text = defaults.texts[named[0]].replace("\r\n", "\n")
            if from_suite:
                return text, None, ((rest, suite[1]) if suite and rest else None)
            return text, rest, suite
    if defaults.sibling_prompt is not None:
        return defaults.sibling_prompt.replace("\r\n", "\n"), files, suite
    return ([], files, suite) if live else None


def _attach(
    messages: Sequence[Message],
    files: Any,
    path: DocumentPath,
    origin: CaseOrigin,
    findings: Findings,
) -> tuple[Message, ...]:
    """``input_files``: file parts put before the content of the first user message."""
    if not isinstance(files, list) or not all(isinstance(f, str) and f.strip() for f in files):
        findings.error(path, f"must be a list of file paths, not {describe(files)}")
        return tuple(messages)
    parts = [FilePart(value=name) for name in files]
    for index, name in enumerate(files):
        add_reference(origin.files, name, (*path, index))
    result = list(messages)
    target = next((i for i, message in enumerate(result) if message.role == "user"), None)
    if target is None:
        return (Message(role="user", content=list(parts)), *result)
    content = result[target].content
    if isinstance(content, str):
        existing: list[Any] = [TextPart(value=content)] if content.strip() else []
    elif isinstance(content, dict):
        existing = [TextPart(value=str(content))]
    else:
        existing = list(content)
    result[target] = Message(role="user", content=[*parts, *existing])
    return tuple(result)


def _graders(
    raw: Mapping[str, Any],
    path: DocumentPath,
    defaults: SuiteDefaults,
    execution: Mapping[str, Any],
    skip_defaults: bool,
    origin: CaseOrigin,
    findings: Findings,
) -> tuple[EvaluatorConfig, ...]:
    """The case's graders.

    Own list: ``execution.evaluators``, else ``evaluators``, else ``assertions``/``assert``;
    without one, the suite's 2025 ``execution.evaluators``. The suite's 2026 ``assertions``
    follow (unless ``skip_defaults``). Inline ``rubrics`` add a judge; nothing at all: the
    default judge.
    """
    context = grader_context(findings, origin.variables, templates=defaults.templates)
    own = _own_list(raw, path, execution, findings)
    graders: tuple[EvaluatorConfig, ...] = ()
    if own is not None:
        graders = read_grader_list(own[0], own[1], context) or ()
    elif defaults.fallback is not None:
        graders = _suite_list("fallback", defaults, origin, findings)
    if defaults.appended is not None and not skip_defaults:
        appended = _suite_list("appended", defaults, origin, findings)
        graders = with_defaults(graders, appended)
    if "rubrics" in raw:
        rubrics = read_rubrics(raw["rubrics"], (*path, "rubrics"), findings, context.render)
        judge = EvaluatorConfig(name="rubrics", type="llm_judge", rubrics=rubrics)
        graders = (judge, *graders)
    for file_path, places in context.prompts.items():
        for place in places:
            add_reference(origin.prompts, file_path, place)
    return graders or (DEFAULT_EVALUATOR,)


def check_suite_lists(defaults: SuiteDefaults, findings: Findings) -> None:
    """Read the suite's 2025 graders once, so their problems show even if no case uses them."""
    if defaults.fallback is not None:
        _suite_list("fallback", defaults, CaseOrigin(path=()), findings)


def _suite_list(
    which: str, defaults: SuiteDefaults, origin: CaseOrigin, findings: Findings
) -> tuple[EvaluatorConfig, ...]:
    """A suite-level grader list for one case: read once, or per case when it has vars."""
    source = defaults.fallback if which == "fallback" else defaults.appended
    assert source is not None
    raw, where = source
    cached = defaults._cache.get(which) if origin.variables is None else None
    if cached is None:
        context = grader_context(findings, origin.variables, templates=defaults.templates)
        cached = (read_grader_list(raw, where, context) or (), context.prompts)
        if origin.variables is None:
            defaults._cache[which] = cached
    graders, prompts = cached
    for file_path, places in prompts.items():
        for place in places:
            add_reference(origin.prompts, file_path, place)
    return graders


def _own_list(
    raw: Mapping[str, Any], path: DocumentPath, execution: Mapping[str, Any], findings: Findings
) -> tuple[Any, DocumentPath] | None:
    lists = [(key, raw[key]) for key in LIST_KEYS if raw.get(key) is not None]
    if execution.get("evaluators") is not None:
        for key, _ in lists:
            if key == "evaluators":
                findings.warn((*path, key), "ignored: 'execution.evaluators' wins")
            else:
                findings.error((*path, key), "give one grader list ('execution.evaluators' too)")
        return execution["evaluators"], (*path, "execution", "evaluators")
    if len(lists) > 1:
        findings.error(
            (*path, lists[1][0]), f"give one grader list: '{lists[0][0]}' is given as well"
        )
    return (lists[0][1], (*path, lists[0][0])) if lists else None

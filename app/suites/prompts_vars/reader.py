"""The prompts/providers/vars layout (promptfoo's, AgentV since July 2026) into an ``EvalSuite``.

``prompts`` are templates rendered with each test's ``vars`` (``defaultTest`` or
``default_test`` vars first, the test's over them); ``"{{ input }}"`` with ``vars.input`` a
list of messages stands for those messages. Several prompts are arms: each test runs once
per prompt (one case, its input per prompt), and several providers make an arm each (a
provider's ``prompts`` names the prompts it runs). ``tests[].assert`` and the
``defaultTest`` graders grade the case; ``threshold`` is its pass mark; ``metadata`` is
kept; ``providerOutput`` is the answer graded instead of calling the target. AgentV's own
keys work too: ``vars.expected_output`` (or ``expected_output``) is the expected answer,
and a suite without ``prompts`` takes each test's ``input`` (or ``vars.input``) directly.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from itertools import chain
from typing import Any

from app.evaluators.config import EvaluatorConfig
from app.evaluators.verdicts import Thresholds
from app.formatting.messages import Message
from app.suites.agentv.conversations import CONVERSATION_KEYS, is_conversation, read_conversation
from app.suites.agentv.layout import evaluate_options, skips_defaults
from app.suites.case_fields import read_expected, read_messages, reference_answer
from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import (
    Findings,
    describe,
    text_field,
    warn_unknown_keys,
)
from app.suites.files.sources import Sources
from app.suites.graders.context import grader_context
from app.suites.graders.kinds import GraderContext
from app.suites.graders.lists import read_grader_list, with_defaults
from app.suites.model import EvalCase, EvalSuite
from app.suites.prompts_vars.assert_options import split_assert_options, with_assert_options
from app.suites.prompts_vars.defaults import (
    DEFAULT_TEST_KEYS,
    DefaultTest,
    default_test,
    judged_by,
    options_judge,
    options_transform,
    promptfoo_options,
    transformed_by,
)
from app.suites.prompts_vars.derived import read_derived
from app.suites.prompts_vars.embedding import embedded_by, options_embedding
from app.suites.prompts_vars.env import suite_env
from app.suites.prompts_vars.program_vars import set_provider, test_failure
from app.suites.prompts_vars.prompts import (
    InputError,
    Prompt,
    prompt_messages,
    prompts_named,
    read_prompts,
)
from app.suites.prompts_vars.provider_output import read_provider_output
from app.suites.prompts_vars.providers import read_providers
from app.suites.prompts_vars.references import dereferenced
from app.suites.prompts_vars.rubric_prompt import prompted_by, read_rubric_prompt
from app.suites.prompts_vars.scenarios import scenario_tests
from app.suites.prompts_vars.scoring import KEY as SCORING_KEY
from app.suites.prompts_vars.scoring import read_scoring_function, scoring_grader
from app.suites.prompts_vars.sequential import sequence_step, store_name, suite_is_sequential
from app.suites.prompts_vars.test_providers import providers_named, suite_providers
from app.suites.prompts_vars.variables import (
    VarFiles,
    broken_block,
    expanded_tests,
    loaded_variables,
    missing_var_files,
    read_transform_vars,
    transformed_vars,
)
from app.suites.reading import (
    CaseOrigin,
    Renderer,
    SuiteCheck,
    case_variables,
    dataset_name,
    duplicate_id_error,
    metadata_of,
    pass_threshold,
    refuse,
)
from app.suites.sequencing import SequenceStep
from app.suites.tool_use import TOOL_USE_KEYS, read_tool_use
from app.suites.workspaces.workspace import read_workspace

METADATA_KEYS = frozenset({"name", "tags", "version", "metadata"})
SUITE_KEYS = frozenset(
    {"description", "prompts", "providers", "tests", "$schema", "target", "vars", "workspace"}
    | {"scenarios"}
    | {"targets"}
    | {"system_prompt", "assert", "evaluate_options", "environment", "extensions", "scenarios"}
    | {"evaluateOptions"}
    | {"assertionTemplates", "derivedMetrics", "env"}
    | {*DEFAULT_TEST_KEYS, *METADATA_KEYS}
)
SUITE_REFUSED = {
    "nunjucksFilters": "custom template filters run programs, which suites may not do",
    "filters": "custom template filters run programs, which suites may not do (a prompt "
    "naming one does not render; promptfoo 0.123.1 errs its tests)",
    "redteam": "red-team generation is not supported",
    "assertions": "AgentV's suite graders are not read in this layout: use defaultTest.assert",
    "input": "AgentV's suite input is not read in this layout: put it in the prompts",
    "input_files": "AgentV's suite input_files are not read in this layout",
    "execution": "AgentV's execution settings are not read in this layout: use providers",
    "preprocessors": "AgentV's suite preprocessors are read with its tests/input keys, not in "
    "this layout yet (a judge's own preprocessors are read)",
    "evalcases": "AgentV's evalcases are not read in this layout: use tests",
}
SUITE_UNREAD = {
    "outputPath": "results are the run's records here (GET /runs/{id}/results and its "
    "exports); a suite never makes the service write files",
}
"""Keys of promptfoo's that do not change what runs or how it is graded: warned about."""
TEST_KEYS = frozenset(
    {"id", "description", "vars", "assert", "threshold", "metadata", "criteria", "options"}
    | {"prompts", "providerOutput", "providers", SCORING_KEY}
    | {"input", "expected_output", "conversation_id", "note", "tags", "execution"}
    | TOOL_USE_KEYS
    | frozenset(CONVERSATION_KEYS)
)
TEST_REFUSED = {
    "provider": "a per-test provider is not supported: set the target on the suite",
    "repeat": "repeated trials are not supported yet",
    "assertions": "AgentV's case graders are not read in this layout: use assert",
    "evaluators": "AgentV's case graders are not read in this layout: use assert",
    "input_files": "AgentV's input_files are not read in this layout",
}


def read_prompts_vars(
    document: Mapping[str, Any], sources: Sources, findings: Findings
) -> SuiteCheck:
    """Read a prompts/providers/vars suite; every problem goes into ``findings``."""
    document = dereferenced(document, findings)
    warn_unknown_keys(
        document, SUITE_KEYS | frozenset(SUITE_REFUSED) | frozenset(SUITE_UNREAD), (), findings
    )
    for key, why in SUITE_UNREAD.items():
        if key in document:
            findings.warn((key,), f"not read: {why}")
    for key, why in SUITE_REFUSED.items():
        if key in document:
            refuse(findings, (key,), f"'{key}'", why)
    name = text_field(document, ("name",), (), findings)
    prompts = read_prompts(document.get("prompts"), sources, findings)
    defaults = default_test(document, sources, findings)
    env = suite_env(document, findings)
    if env is not None:
        defaults.variables = {"env": env, **defaults.variables}
    defaults.texts = sources.texts
    defaults.globs = sources.globs
    defaults.missing_vars = frozenset(sources.missing_vars)
    defaults.providers = suite_providers(document)
    providers = read_providers(document, findings, sources.texts, prompts)
    targets, defaults.tool_use = providers.targets, providers.tool_use
    set_provider(targets[0] if targets else "")  # what prompt programs are told
    defaults.suite_graders = document.get("assert")
    cases: list[EvalCase] = []
    origins: dict[str, CaseOrigin] = {}
    first_seen: dict[str, DocumentPath] = {}
    tests = list(
        chain(_raw_tests(document, sources, findings), scenario_tests(document, sources, findings))
    )
    defaults.sequential = suite_is_sequential(prompts, tests, defaults.store_as is not None)
    for index, (path, raw) in enumerate(tests):
        for case, origin in _expanded_test(raw, path, index, prompts, defaults, findings):
            if case.id in first_seen:
                findings.error((*path, "id"), duplicate_id_error(case.id, first_seen[case.id]))
                continue
            first_seen[case.id] = path
            cases.append(case)
            origins[case.id] = origin
    system_prompt = text_field(document, ("system_prompt",), (), findings)
    options = evaluate_options(document.get("evaluate_options"), findings)
    options.update(promptfoo_options(document.get("evaluateOptions"), findings))
    derived = read_derived(document, cases, findings) if not findings.errors else None
    if findings.errors:
        return SuiteCheck(suite=None, dialect="prompts-providers-vars")
    suite = EvalSuite(
        description=text_field(document, ("description",), (), findings),
        dataset=dataset_name(None, name, sources.source_name),
        target=targets[0] if len(targets) == 1 else None,
        targets=targets if len(targets) > 1 else (),
        target_tools=providers.target_tools,
        target_options=providers.target_options,
        prompts=tuple(prompt.id for prompt in prompts) if len(prompts) > 1 else (),
        target_prompts=providers.target_prompts,
        cases=tuple(cases),
        metadata=metadata_of(document, METADATA_KEYS),
        workspace=read_workspace(document, sources.texts, findings),
        system_prompt=system_prompt,
        derived_metrics=derived,
        **options,
        **({"guideline_patterns": sources.config_patterns} if sources.config_patterns else {}),
    )
    return SuiteCheck(suite=suite, dialect="prompts-providers-vars", origins=origins)


def _raw_tests(
    document: Mapping[str, Any], sources: Sources, findings: Findings
) -> Iterator[tuple[DocumentPath, Any]]:
    tests = document.get("tests")
    if tests is None:
        if "scenarios" not in document:
            findings.error(("tests",), "is required: the list of tests (or a file of tests)")
    elif isinstance(tests, str):
        yield from sources.cases.get(("tests",), [])
    elif isinstance(tests, list):
        for index, item in enumerate(tests):
            if isinstance(item, str) and ("tests", index) in sources.cases:
                yield from sources.cases[("tests", index)]
            else:
                yield ("tests", index), item
    else:
        findings.error(("tests",), f"must be a list of tests or a file, not {describe(tests)}")


def _expanded_test(
    raw: Any,
    path: DocumentPath,
    index: int,
    prompts: list[Prompt],
    defaults: DefaultTest,
    findings: Findings,
) -> Iterator[tuple[EvalCase, CaseOrigin]]:
    """The cases of one test: variables read, transformed, then expanded (one per list value).

    ``file://`` variables are read first, ``transformVars`` runs on the unexpanded variables
    (as promptfoo runs it), then each combination of list values is a test.
    """
    if isinstance(raw, dict) and isinstance(raw.get("vars"), dict):
        files = VarFiles(defaults.texts, defaults.globs)
        variables = loaded_variables(raw["vars"], (*path, "vars"), files, findings)
        raw = {**raw, "vars": variables}
    options = raw.get("options") if isinstance(raw, dict) else None
    code = read_transform_vars(options, (*path, "options"), findings) or defaults.transform_vars
    if code is not None and isinstance(raw, dict):  # before the expansion, as promptfoo does
        merged = {**defaults.variables, **(raw.get("vars") or {})}
        where = (*path, "options", "transformVars")
        raw = {**raw, "vars": transformed_vars(code, merged, where, findings) or merged}
    tests = expanded_tests(raw, defaults.variables, path, findings)
    for number, test in enumerate(tests, start=1):
        suffix = f".{number}" if len(tests) > 1 else ""
        yield from _read_test(test, path, (index, suffix), prompts, defaults, findings)


def _read_test(
    raw: Any,
    path: DocumentPath,
    place: tuple[int, str],
    prompts: list[Prompt],
    defaults: DefaultTest,
    findings: Findings,
) -> Iterator[tuple[EvalCase, CaseOrigin]]:
    """The cases of one test (one per prompt); ``place``: its position and id suffix."""
    if not isinstance(raw, dict):
        findings.error(path, f"a test must be a mapping, not {describe(raw)}")
        return
    warn_unknown_keys(raw, TEST_KEYS | frozenset(TEST_REFUSED), path, findings)
    for key, why in TEST_REFUSED.items():
        if key in raw:
            refuse(findings, (*path, key), f"'{key}'", why)
    before = len(findings.errors)
    variables = case_variables(defaults.variables, raw, path, findings, undefined="keep") or {}
    origin = CaseOrigin(path=path, variables=variables)
    test_id = _test_id(raw, path, place, findings)
    judge = options_judge(raw.get("options"), (*path, "options"), findings) or defaults.judge
    embedding = options_embedding(raw.get("options"), (*path, "options"), findings)
    embedding = embedding or defaults.embedding
    own_transform = options_transform(raw.get("options"), (*path, "options"), findings)
    graders = transformed_by(
        embedded_by(judged_by(_graders(raw, path, defaults, origin, findings), judge), embedding),
        own_transform or defaults.transform,
        variables,
    )
    rubric_prompt = read_rubric_prompt(
        raw.get("options"), (*path, "options"), findings, defaults.texts
    )
    where = (*path, "options") if rubric_prompt else (*defaults.path, "options")
    rubric_prompt = rubric_prompt or defaults.rubric_prompt
    graders = prompted_by(graders, rubric_prompt, variables, (*where, "rubricPrompt"), findings)
    renderer = Renderer(variables, findings, "empty")
    expected_raw = raw.get("expected_output", variables.get("expected_output"))
    expected_path = (
        (*path, "expected_output")
        if "expected_output" in raw
        else (*path, "vars", "expected_output")
    )
    expected = read_expected(expected_raw, expected_path, findings, origin.files, renderer)
    criteria = raw.get("criteria")
    if criteria is not None and not isinstance(criteria, str):
        findings.error((*path, "criteria"), f"must be a string, not {describe(criteria)}")
    outcome = renderer.text(criteria, (*path, "criteria")) if isinstance(criteria, str) else ""
    graded = bool(graders or outcome)
    conversation = None
    if is_conversation(raw):  # AgentV's live conversation, as in its tests/input layout
        conversation = read_conversation(
            raw, path, origin, renderer, findings, templates=True, has_criteria=bool(outcome)
        )
    scoring = (
        read_scoring_function(raw[SCORING_KEY], (*path, SCORING_KEY), findings)
        if SCORING_KEY in raw
        else defaults.scoring
    )
    threshold = raw.get("threshold", defaults.threshold)
    thresholds = promptfoo_thresholds(threshold, (*path, "threshold"), findings)
    conversation_id = text_field(raw, ("conversation_id",), path, findings)
    given_output = read_provider_output(raw, path, conversation is not None, findings)
    note = text_field(raw, ("description", "note"), path, findings)
    own_metadata = raw.get("metadata") or {}
    if not isinstance(own_metadata, dict):
        findings.error((*path, "metadata"), f"must be a mapping, not {describe(own_metadata)}")
    chosen = prompts_named(raw.get("prompts"), prompts, (*path, "prompts"), findings)
    own_targets = providers_named(
        raw.get("providers"), defaults.providers, (*path, "providers"), findings
    )
    made = list(_inputs(raw, path, chosen, variables, origin, findings))
    inputs = [(pid, () if isinstance(m, InputError) else m) for pid, m in made]
    own_tools = read_tool_use(raw, path, findings, defaults.texts)
    step = _step(raw, path, chosen, own_transform, defaults, findings)
    tool_use = own_tools.merged_over(defaults.tool_use) if own_tools else defaults.tool_use
    if len(findings.errors) > before or test_id is None:
        return
    metadata = {**defaults.metadata, **own_metadata}
    missing = missing_var_files(variables, defaults.missing_vars)
    failures = _failures(made, path, variables)
    if (broken := broken_block(variables)) is not None:
        failures = {prompt_id: broken for prompt_id, _ in made}
    if inputs:
        yield (
            EvalCase(
                id=test_id,
                conversation_id=conversation_id,
                expected_outcome=outcome,
                note=note,
                input_messages=inputs[0][1],
                prompt_inputs=tuple(inputs) if len(prompts) > 1 else (),
                expected_messages=expected,
                reference_answer=reference_answer(expected, {}),
                evaluators=graders or (),
                conversation=conversation,
                graded=graded,
                thresholds=thresholds,
                metadata={"metadata": metadata} if metadata else {},
                tool_use=tool_use,
                given_output=given_output,
                missing_files=missing,
                only_targets=own_targets,
                scoring_function=scoring_grader(scoring),
                error=failures.get(inputs[0][0]),
                sequence=step,
                prompt_errors=tuple(failures.items()) if len(prompts) > 1 else (),
            ),
            origin,
        )


def _step(
    raw: Mapping[str, Any],
    path: DocumentPath,
    prompts: list[Prompt],
    own_transform: str | None,
    defaults: DefaultTest,
    findings: Findings,
) -> SequenceStep | None:
    """What a test renders its input from when promptfoo runs the suite's tests in order."""
    if not defaults.sequential:
        return None
    store_as = store_name(raw.get("options"), (*path, "options"), findings) or defaults.store_as
    transform = own_transform or defaults.transform
    return sequence_step(raw, defaults.variables, path, prompts, store_as, transform, findings)


def _failures(
    made: list[tuple[str, tuple[Message, ...] | InputError]],
    path: DocumentPath,
    variables: Mapping[str, Any],
) -> dict[str, str]:
    """Why each prompt's arm of a test cannot run, by prompt id.

    Its input could not be made, or a program making one of its variables failed.
    """
    failures = {pid: made_.message for pid, made_ in made if isinstance(made_, InputError)}
    for prompt_id, _ in made:
        if (failure := test_failure((*path, prompt_id), variables)) is not None:
            failures.setdefault(prompt_id, failure)
    return failures


def promptfoo_thresholds(raw: Any, path: DocumentPath, findings: Findings) -> Thresholds | None:
    """The promptfoo pass rule: all graders pass, or with a ``threshold`` the mean reaches it."""
    if raw is None:
        return Thresholds(rule="all_pass")
    mark = pass_threshold(raw, path, findings)
    if mark is None:
        return None
    return Thresholds.model_validate({"pass": mark.pass_, "borderline": 0, "rule": "mean"})


def _test_id(
    raw: Mapping[str, Any], path: DocumentPath, place: tuple[int, str], findings: Findings
) -> str | None:
    """The test's ``id``, else ``test-<its position among all tests>``; ``.n`` when expanded."""
    test_id = raw.get("id")
    index, suffix = place
    if test_id is None:
        return f"test-{index + 1}{suffix}"
    if not isinstance(test_id, str | int) or not str(test_id).strip():
        findings.error((*path, "id"), f"must be a non-empty string, not {describe(test_id)}")
        return None
    return f"{test_id}{suffix}"


def _graders(
    raw: Mapping[str, Any],
    path: DocumentPath,
    defaults: DefaultTest,
    origin: CaseOrigin,
    findings: Findings,
) -> tuple[EvaluatorConfig, ...]:
    context = grader_context(
        findings, origin.variables, templates=True, prompt_files="prefix", promptfoo=True
    )
    own = (
        _assert_list(raw.get("assert"), (*path, "assert"), context, defaults)
        if "assert" in raw
        else ()
    )
    shared: tuple[EvaluatorConfig, ...] = ()
    if skips_defaults(raw, path, findings):
        origin.prompts.update(context.prompts)
        return tuple(own or ())
    if defaults.graders is not None:
        shared = _assert_list(defaults.graders, (*defaults.path, "assert"), context, defaults)
    if defaults.suite_graders is not None:
        suite = read_grader_list(defaults.suite_graders, ("assert",), context) or ()
        shared = (*suite, *shared)
    origin.prompts.update(context.prompts)
    return with_defaults(own or (), shared, defaults_first=True)


def _assert_list(
    raw: Any, path: DocumentPath, context: GraderContext, defaults: DefaultTest
) -> tuple[EvaluatorConfig, ...]:
    """A list of asserts read, each with its own judge options (``rubricPrompt``...)."""
    asserts, options = split_assert_options(raw)
    graders = read_grader_list(asserts, path, context) or ()
    if not options or len(graders) != len(asserts):
        return graders
    variables = context.render.variables or {}
    return with_assert_options(graders, options, path, variables, defaults.texts, context.findings)


def _inputs(
    raw: Mapping[str, Any],
    path: DocumentPath,
    prompts: list[Prompt],
    variables: Mapping[str, Any],
    origin: CaseOrigin,
    findings: Findings,
) -> Iterator[tuple[str, tuple[Message, ...] | InputError]]:
    """``(prompt id, messages)`` for each prompt, or the test's own input without prompts.

    An ``InputError`` stands where the test's variables make no input of a prompt.
    """
    renderer = Renderer(variables, findings, "empty")
    if not prompts:
        key = "input" if "input" in raw else None
        value = raw["input"] if key else variables.get("input")
        where = (*path, "input") if key else (*path, "vars", "input")
        if value is None:
            findings.error(where, "is required: the test's input (or a top-level 'prompts')")
            return
        yield "input", read_messages(value, where, findings, origin.files, renderer)
        return
    for prompt in prompts:
        messages = prompt_messages(prompt, variables, path, origin, findings)
        if messages is not None:
            yield prompt.id, messages

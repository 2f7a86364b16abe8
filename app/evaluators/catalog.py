"""Every grader type eval files declare: canonical names, aliases and the options each reads.

This is the one list of grader types. A suite names a type in any spelling: case and ``-``
versus ``_`` do not matter (``llm-grader``, ``LLM_Grader``), an alias maps to its canonical
name, and promptfoo's ``not-`` prefix means ``negate: true``. Whether a type runs today is
decided by the registry (``app.evaluators.registry``): a type is runnable when an
implementation is registered under its canonical name. Types listed here without one are
refused by ``/validate`` as "not supported yet", never replaced by another grader.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from app.evaluators.config import EvaluatorConfig

Family = Literal["deterministic", "model", "metric", "structure", "code", "agent"]

COMMON_KEYS = frozenset({"type", "name", "metric", "id", "description", "weight"})
"""Keys every grader may carry: identity (``name``, AgentV's ``metric`` and ``id``), notes and
``weight``."""

NEGATE_PREFIXES = ("not-", "not_")


@dataclass(frozen=True)
class GraderType:
    """One grader type.

    Attributes:
        name: The canonical name (snake_case), used in the suite model and in records.
        family: What the grader looks at: the answer alone (deterministic), a judge model
            (model), run metrics (metric), other graders or tool calls (structure), a program
            (code) or an agent workspace (agent).
        summary: One line for the documentation table.
        aliases: Other spellings eval files use (AgentV 2025/2026, promptfoo).
        options: The type's own keys, besides ``COMMON_KEYS``.
        passthrough: Unknown keys are the grader's own configuration (code graders hand
            them to their program), not mistakes.
    """

    name: str
    family: Family
    summary: str
    aliases: tuple[str, ...] = ()
    options: frozenset[str] = frozenset()
    passthrough: bool = False


_TEXT = frozenset({"value", "negate", "required", "min_score", "threshold"})
_REGEX = _TEXT | {"flags"}
_JUDGE = frozenset(
    {"prompt", "rubrics", "criteria", "value", "target", "required", "min_score", "threshold"}
    | {"temperature", "max_steps", "negate", "config", "preprocessors", "provider"}
    | {"judge_options"}
)
_CODE = frozenset({"command", "script", "cwd", "target", "config", "required", "min_score"})
_METRIC = frozenset({"threshold", "budget", "negate", "required", "min_score"})
_TRAJECTORY_VALUE = frozenset({"value", "negate", "required", "min_score", "threshold"})

GRADER_TYPES: tuple[GraderType, ...] = (
    GraderType(
        "llm_judge",
        "model",
        "a judge model grades the answer, with rubrics if given",
        ("llm_grader", "llm_rubric", "rubrics", "rubric", "model_graded"),
        _JUDGE,
    ),
    GraderType(
        "contains", "deterministic", "the answer contains the value (a list: all)", (), _TEXT
    ),
    GraderType("contains_all", "deterministic", "the answer contains every value", (), _TEXT),
    GraderType("contains_any", "deterministic", "the answer contains one of the values", (), _TEXT),
    GraderType("icontains", "deterministic", "contains, ignoring case", (), _TEXT),
    GraderType("icontains_all", "deterministic", "contains every value, ignoring case", (), _TEXT),
    GraderType(
        "icontains_any", "deterministic", "contains one of the values, ignoring case", (), _TEXT
    ),
    GraderType("starts_with", "deterministic", "the answer starts with the value", (), _TEXT),
    GraderType("ends_with", "deterministic", "the answer ends with the value", (), _TEXT),
    GraderType("equals", "deterministic", "the trimmed answer equals the value", (), _TEXT),
    GraderType(
        "regex", "deterministic", "a regular expression matches the answer", ("matches",), _REGEX
    ),
    GraderType(
        "is_json",
        "deterministic",
        "the answer is JSON (valid for `schema` if given)",
        (),
        _TEXT | {"schema"},
    ),
    GraderType(
        "contains_json",
        "deterministic",
        "the answer contains JSON (valid for `schema`)",
        (),
        _TEXT | {"schema"},
    ),
    GraderType(
        "word_count",
        "deterministic",
        "the answer's word count is within limits",
        (),
        _TEXT | {"min", "max"},
    ),
    GraderType(
        "typeof", "deterministic", "the answer parses as the given JSON type", ("type_of",), _TEXT
    ),
    GraderType(
        "field_accuracy",
        "deterministic",
        "fields of a JSON answer match the expected",
        (),
        frozenset({"fields", "aggregation", "required", "min_score", "negate"}),
    ),
    GraderType("is_xml", "deterministic", "the answer is XML (with `value`'s elements)", (), _TEXT),
    GraderType("contains_xml", "deterministic", "the answer contains XML", (), _TEXT),
    GraderType(
        "is_sql",
        "deterministic",
        "the answer is SQL of `databaseType`, on allowed tables and columns (promptfoo)",
        (),
        _TEXT,
    ),
    GraderType("is_html", "deterministic", "the answer is HTML", ("contains_html",), _TEXT),
    GraderType("is_refusal", "deterministic", "the answer is a refusal", (), _TEXT),
    GraderType(
        "is_valid_function_call",
        "structure",
        "every tool call names an offered tool, its arguments valid for its schema (promptfoo)",
        (),
        _TEXT,
    ),
    GraderType(
        "finish_reason",
        "metric",
        "the model stopped for this reason: stop, length, tool_calls... (promptfoo)",
        (),
        _TEXT,
    ),
    GraderType(
        "is_valid_openai_tools_call",
        "structure",
        "every tool call names an offered tool, its arguments valid for its schema",
        (),
        _TEXT,
    ),
    GraderType(
        "is_valid_openai_function_call",
        "structure",
        "the first tool call is valid for its tool's schema (promptfoo)",
        (),
        _TEXT,
    ),
    GraderType("latency", "metric", "the call took at most `threshold` ms", (), _METRIC),
    GraderType(
        "cost", "metric", "the call cost at most `threshold` (or `budget`) USD", (), _METRIC
    ),
    GraderType(
        "execution_metrics",
        "metric",
        "tokens, calls and duration within limits",
        ("token_usage",),
        frozenset({"max_tool_calls", "max_llm_calls", "max_tokens", "max_cost_usd"})
        | {"max_duration_ms", "target_exploration_ratio", "exploration_tolerance"}
        | {"max_input_tokens", "max_output_tokens", "required", "min_score"}
        | {"max_total", "max_input", "max_output"},
    ),
    GraderType(
        "similar",
        "metric",
        "embedding similarity to the value, on an embeddings target",
        ("similar:cosine", "similar:dot", "similar:euclidean"),
        _METRIC | {"value", "provider", "measure"},
    ),
    GraderType("bleu", "metric", "BLEU against the value or reference", (), _METRIC | {"value"}),
    GraderType("gleu", "metric", "GLEU against the value or reference", (), _METRIC | {"value"}),
    GraderType(
        "rouge_n",
        "metric",
        "ROUGE-N against the value or reference",
        ("rouge",),
        _METRIC | {"value", "n"},
    ),
    GraderType(
        "levenshtein",
        "metric",
        "edit distance to the value at most `threshold`",
        (),
        _METRIC | {"value"},
    ),
    GraderType(
        "meteor", "metric", "METEOR against the value or reference", (), _METRIC | {"value"}
    ),
    GraderType("perplexity", "metric", "the answer's perplexity", ("perplexity_score",), _METRIC),
    GraderType(
        "composite",
        "structure",
        "an aggregate of child graders",
        ("assert_set",),
        frozenset({"assertions", "assert", "evaluators", "aggregator", "threshold"})
        | {"required", "min_score", "negate", "config"},
    ),
    GraderType(
        "tool_trajectory",
        "structure",
        "the target's tool calls follow the expected",
        ("trajectory",),
        frozenset({"mode", "minimums", "expected", "args_match", "argsMatch"})
        | {"required", "min_score", "negate"},
    ),
    GraderType(
        "trajectory_tool_used",
        "structure",
        "the tools were called (within min/max times) (promptfoo)",
        ("trajectory:tool_used",),
        _TRAJECTORY_VALUE,
    ),
    GraderType(
        "trajectory_tool_sequence",
        "structure",
        "the tools were called in this order (promptfoo)",
        ("trajectory:tool_sequence",),
        _TRAJECTORY_VALUE,
    ),
    GraderType(
        "trajectory_tool_args_match",
        "structure",
        "a call of the tool had these arguments (promptfoo)",
        ("trajectory:tool_args_match",),
        _TRAJECTORY_VALUE,
    ),
    GraderType(
        "trajectory_step_count",
        "structure",
        "the number of tool calls is within limits (promptfoo)",
        ("trajectory:step_count",),
        _TRAJECTORY_VALUE,
    ),
    GraderType(
        "skill_trigger",
        "agent",
        "an agent did (or did not) invoke a skill",
        ("skill_used",),
        frozenset({"skill", "should_trigger", "required", "negate"}),
    ),
    GraderType(
        "code_judge",
        "code",
        "a program reads the case and answer, prints a score",
        ("code_grader", "code", "script", "script_grader"),
        _CODE,
        passthrough=True,
    ),
    GraderType(
        "javascript",
        "code",
        "inline JavaScript decides (promptfoo)",
        ("inline_assert",),
        _TEXT | {"config"},
    ),
    GraderType("python", "code", "inline Python decides (promptfoo)", (), _TEXT | {"config"}),
    GraderType("ruby", "code", "inline Ruby decides (promptfoo)", (), _TEXT | {"config"}),
    GraderType("webhook", "code", "an HTTP endpoint decides (promptfoo)", (), _TEXT),
    GraderType(
        "model_graded_closedqa",
        "model",
        "a judge says whether the answer meets a criterion (promptfoo)",
        (),
        _JUDGE,
    ),
    GraderType(
        "factuality",
        "model",
        "a judge says whether the answer agrees with a reference (promptfoo)",
        ("model_graded_factuality",),
        _JUDGE,
    ),
    GraderType(
        "g_eval", "model", "a judge scores the answer on a criterion (promptfoo)", (), _JUDGE
    ),
    GraderType(
        "max_score",
        "structure",
        "the arm whose answer scored highest (promptfoo)",
        (),
        _JUDGE,
    ),
    GraderType(
        "select_best",
        "model",
        "a judge picks the best answer among the run's arms (promptfoo)",
        (),
        _JUDGE,
    ),
    GraderType(
        "answer_relevance",
        "model",
        "RAG: the answer is relevant to the query (promptfoo)",
        (),
        _JUDGE,
    ),
    GraderType(
        "context_faithfulness",
        "model",
        "RAG: the context supports the answer's claims (promptfoo)",
        (),
        _JUDGE | {"contextTransform"},
    ),
    GraderType(
        "context_recall",
        "model",
        "RAG: the context holds the reference's facts (promptfoo)",
        (),
        _JUDGE | {"contextTransform"},
    ),
    GraderType(
        "context_relevance",
        "model",
        "RAG: the context is what the query needs (promptfoo)",
        (),
        _JUDGE | {"contextTransform"},
    ),
    GraderType(
        "conversation_relevance",
        "model",
        "a judge grades a conversation's relevance (promptfoo)",
        (),
        _JUDGE,
    ),
    GraderType(
        "search_rubric",
        "model",
        "a judge with web search grades the answer (promptfoo)",
        ("agent_rubric",),
        _JUDGE,
    ),
    GraderType(
        "moderation",
        "model",
        "a moderation target flags the answer (promptfoo)",
        (),
        frozenset({"value", "provider", "target", "required", "min_score", "threshold"}),
    ),
    GraderType(
        "classifier",
        "model",
        "a classifier target scores the answer in a class (promptfoo)",
        (),
        frozenset({"value", "provider", "target", "required", "min_score", "threshold", "negate"}),
    ),
    GraderType(
        "guardrails",
        "model",
        "a guardrails provider checks the answer (promptfoo)",
        ("pi",),
        _JUDGE,
    ),
)


AGGREGATOR_TYPES: dict[str, str] = {
    "weighted_average": "weighted mean of the children (`weights` by child name)",
    "threshold": "passes when a share of the children pass",
    "all": "passes when every child passes",
    "any": "passes when one child passes",
    "code_judge": "a program combines the children's results",
    "llm_judge": "a judge model combines the children's results",
}
"""Aggregators a ``composite`` may name (``registry.RUNNABLE_AGGREGATORS`` run)."""

AGGREGATOR_ALIASES: dict[str, str] = {
    "weighted_mean": "weighted_average",
    "average": "weighted_average",
    "mean": "weighted_average",
    "code_grader": "code_judge",
    "script": "code_judge",
    "llm_grader": "llm_judge",
}


def type_key(declared: str) -> str:
    """The lookup form of a declared type: lower case, ``-`` read as ``_``, trimmed."""
    return declared.strip().lower().replace("-", "_")


_BY_KEY: dict[str, GraderType] = {}
for _entry in GRADER_TYPES:
    for _spelling in (_entry.name, *_entry.aliases):
        _BY_KEY[type_key(_spelling)] = _entry


@lru_cache(maxsize=512)
def find_type(declared: str) -> tuple[GraderType | None, bool]:
    """The catalog entry of a declared type, and whether a ``not-`` prefix negates it.

    Returns ``(None, negated)`` for a type the catalog does not know.
    """
    key = type_key(declared)
    for prefix in NEGATE_PREFIXES:
        if key.startswith(type_key(prefix)) and key[len(prefix) :] in _BY_KEY:
            return _BY_KEY[key[len(prefix) :]], True
    return _BY_KEY.get(key), False


def find_aggregator(declared: str) -> str | None:
    """The canonical aggregator name of a declared one, or None when unknown."""
    key = type_key(declared)
    key = AGGREGATOR_ALIASES.get(key, key)
    return key if key in AGGREGATOR_TYPES else None


KNOWN_OPTION_KEYS: frozenset[str] = frozenset(
    key for entry in GRADER_TYPES for key in entry.options
) | {"transform", "provider", "rubricPrompt", "preprocessors"}
"""Keys that mean something for some grader: on a type that does not read them they are
refused (the author meant something), while keys nobody knows are kept and reported."""


PROGRAM_AGGREGATORS = frozenset({"code_judge"})
"""Aggregators that run a program (their spelling is read through ``AGGREGATOR_ALIASES``)."""


def program_reason(config: EvaluatorConfig) -> str | None:
    """Why ``config`` (or one of its children) would run a program or call out; None if not.

    A program or an endpoint chosen by a request would run on the service's host, so the
    places that take graders from a request (a regrade) refuse what this names.
    """
    found, _ = find_type(config.type)
    if found is not None and found.family == "code":
        return f"type {config.type!r} runs a program or calls an endpoint"
    if config.prompt_program is not None or config.transforms:
        return "its prompt_program or transform runs code"
    if config.preprocessors:
        return "its preprocessors run programs"
    if config.command or config.cwd is not None:
        return "it names a program (command/cwd)"
    aggregator = config.aggregator
    if aggregator is not None:
        kind = type_key(aggregator.type)
        if AGGREGATOR_ALIASES.get(kind, kind) in PROGRAM_AGGREGATORS or aggregator.command:
            return f"its aggregator {aggregator.type!r} runs a program"
        if (aggregator.model_extra or {}).get("cwd") is not None:
            return "its aggregator names a program folder (cwd)"
    for child in config.evaluators:
        reason = program_reason(child)
        if reason is not None:
            return f"its child {child.name!r}: {reason}"
    return None

"""Graders of every dialect into the suite model: canonical types, aliases, nothing dropped."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.evaluators.catalog import GRADER_TYPES, find_type
from app.evaluators.config import RubricItem
from app.evaluators.registry import EVALUATOR_TYPES, EVALUATORS, runnable_catalog
from tests.suites.helpers import check, errors_by_path

ISSUE_13_TYPES = [
    "contains",
    "llm-grader",
    "code-grader",
    "icontains-any",
    "rubrics",
    "tool-trajectory",
    "regex",
    "is-json",
    "execution-metrics",
    "composite",
    "equals",
    "word-count",
    "field-accuracy",
    "latency",
    "cost",
    "starts-with",
    "ends-with",
    "contains-all",
    "icontains-all",
    "typeof",
    "skill-trigger",
    "llm-rubric",
    "not-contains",
    "contains-any",
    "icontains",
    "script",
    "assert-set",
    "llm_judge",
    "code_judge",
    "code_grader",
]


def suite_with(*graders: Any, strings: bool = True) -> dict[str, Any]:
    if strings:
        return {"tests": [{"id": "a", "criteria": "x", "input": "Hi", "assertions": list(graders)}]}
    return {"evalcases": [{"id": "a", "outcome": "x", "input": "Hi", "evaluators": list(graders)}]}


async def graders_of(*graders: Any) -> list[Any]:
    report = await check(suite_with(*graders))
    assert report.valid, report.errors
    assert report.suite is not None
    return list(report.suite.cases[0].evaluators)


def test_every_type_real_files_use_is_in_the_catalog() -> None:
    for declared in ISSUE_13_TYPES:
        entry, _ = find_type(declared)
        assert entry is not None, declared


def test_the_runnable_types_are_exactly_the_registered_ones() -> None:
    runnable = {entry.name for entry, runs in runnable_catalog() if runs}
    assert runnable == set(EVALUATOR_TYPES)
    assert runnable <= {entry.name for entry in GRADER_TYPES}


def test_registering_a_type_outside_the_catalog_is_refused() -> None:
    with pytest.raises(ValueError, match="not a grader type of the catalog"):
        EVALUATORS.register("made_up", EVALUATORS)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("declared", "canonical"),
    [
        ("llm_judge", "llm_judge"),
        ("llm-grader", "llm_judge"),
        ("llm-rubric", "llm_judge"),
        ("rubrics", "llm_judge"),
        ("code_judge", "code_judge"),
        ("code-grader", "code_judge"),
        ("code_grader", "code_judge"),
        ("script", "code_judge"),
        ("assert-set", "composite"),
        ("is-json", "is_json"),
        ("Contains-All", "contains_all"),
    ],
)
def test_aliases_map_to_canonical_names(declared: str, canonical: str) -> None:
    entry, negated = find_type(declared)
    assert entry is not None
    assert (entry.name, negated) == (canonical, False)


@given(
    st.sampled_from(
        [spelling for entry in GRADER_TYPES for spelling in (entry.name, *entry.aliases)]
    ),
    st.lists(st.booleans(), min_size=40, max_size=40),
    st.booleans(),
)
def test_case_and_hyphens_do_not_matter_and_not_negates(
    spelling: str, uppers: list[bool], negate: bool
) -> None:
    expected, _ = find_type(spelling)
    written = "".join(
        (c.upper() if up else c) if c not in "-_" else ("-" if up else "_")
        for c, up in zip(spelling, uppers * 3, strict=False)
    )
    entry, negated = find_type(("not-" if negate else "") + written)
    assert (entry, negated) == (expected, negate)


async def test_a_type_not_runnable_yet_is_an_error_naming_it_in_every_spelling() -> None:
    for declared in ("webhook", "Webhook", "WEBHOOK"):
        report = await check(suite_with({"type": declared, "value": "output.length < 9"}))
        message = errors_by_path(report)["tests[0].assertions[0].type"]
        assert f"grader type {declared!r}" in message
        assert "is not supported yet" in message
        assert report.suite is None


async def test_an_unknown_type_is_an_error_naming_it() -> None:
    report = await check(suite_with({"type": "vibes-check"}))
    assert (
        "unknown grader type 'vibes-check'" in errors_by_path(report)["tests[0].assertions[0].type"]
    )


async def test_not_prefix_negates_a_runnable_check() -> None:
    [grader] = await graders_of({"type": "not-contains", "value": "sorry"})
    assert (grader.type, grader.negate, grader.name) == ("contains", True, "not-contains")


async def test_a_negated_judge_is_read_as_agentv_and_promptfoo_run_it() -> None:
    report = await check(suite_with({"type": "not-llm-rubric", "value": "Polite"}))
    assert report.suite is not None, report.errors
    [grader] = report.suite.cases[0].evaluators
    assert (grader.type, grader.negate) == ("llm_judge", True)


async def test_an_option_the_runner_does_not_honour_yet_is_an_error() -> None:
    report = await check(suite_with({"type": "contains", "value": "x", "transform": "x.upper()"}))
    assert errors_by_path(report) == {
        "tests[0].assertions[0].transform": (
            "option 'transform' of grader type 'contains' is not supported yet"
        )
    }


async def test_a_code_graders_own_keys_are_its_program_configuration() -> None:
    report = await check(
        suite_with({"type": "code-grader", "command": "x", "fields": ["a"], "max_steps": 2})
    )
    paths = set(errors_by_path(report))
    assert not any("fields" in path or "max_steps" in path for path in paths)


async def test_unknown_keys_are_kept_and_reported() -> None:
    report = await check(suite_with({"type": "contains", "value": "x", "colour": "blue"}))
    assert report.valid, report.errors
    assert report.suite is not None
    [grader] = report.suite.cases[0].evaluators
    assert grader.model_extra == {"colour": "blue"}
    assert any("colour" in warning and "kept unused" in warning for warning in report.warnings)


async def test_strings_become_one_rubric_judge_weighted_by_their_number() -> None:
    graders = await graders_of(
        {"type": "contains", "value": "x"}, "Is polite", {"type": "is-json"}, "Is short"
    )
    assert [(g.name, g.type, g.weight) for g in graders] == [
        ("contains", "contains", 1.0),
        ("rubrics", "llm_judge", 2.0),
        ("is-json", "is_json", 1.0),
    ]
    assert [item.description for item in graders[1].rubrics] == ["Is polite", "Is short"]


async def test_strings_in_a_2025_evaluator_list_are_errors() -> None:
    report = await check(suite_with("Is polite", strings=False))
    assert "must be a mapping" in errors_by_path(report)["evalcases[0].evaluators[0]"]


async def test_unnamed_graders_get_unique_names_and_named_ones_must_be() -> None:
    graders = await graders_of(
        {"type": "contains", "value": "a"},
        {"type": "contains", "value": "b"},
        {"name": "contains-2", "type": "regex", "value": "c"},
    )
    assert [g.name for g in graders] == ["contains", "contains-3", "contains-2"]
    report = await check(
        suite_with(
            {"name": "n", "type": "is-json"}, {"name": "n", "type": "contains", "value": "x"}
        )
    )
    assert "duplicate grader name 'n'" in errors_by_path(report)["tests[0].assertions[1].name"]


async def test_names_come_from_name_metric_or_id() -> None:
    graders = await graders_of(
        {"metric": "m", "type": "is-json"}, {"id": "i", "type": "contains", "value": "x"}
    )
    assert [g.name for g in graders] == ["m", "i"]


async def test_regex_patterns_and_flags_are_javascript_ones() -> None:
    [grader] = await graders_of({"type": "regex", "value": "hello", "flags": "gi"})
    assert (grader.value, (grader.model_extra or {})["flags"]) == ("hello", "gi")
    python_only = await check(suite_with({"type": "regex", "value": "(?i)x"}))
    assert (
        "JavaScript regular expression"
        in errors_by_path(python_only)["tests[0].assertions[0].value"]
    )
    report = await check(suite_with({"type": "regex", "value": "x", "flags": "q"}))
    assert (
        "unsupported regular expression flags"
        in errors_by_path(report)["tests[0].assertions[0].flags"]
    )


async def test_required_and_min_score_are_read() -> None:
    first, second = await graders_of(
        {"type": "is-json", "required": True}, {"type": "contains", "value": "x", "required": 0.6}
    )
    assert (first.required, first.min_score) == (True, None)
    assert (second.required, second.min_score) == (True, 0.6)


async def test_rubrics_from_criteria_value_and_rubrics_keys() -> None:
    graders = await graders_of(
        {"type": "rubrics", "criteria": ["A", {"id": "b", "outcome": "B", "weight": 2}]},
        {"name": "r2", "type": "llm-rubric", "value": "C"},
    )
    assert [(i.id, i.description, i.weight) for i in graders[0].rubrics] == [
        ("rubric-1", "A", 1.0),
        ("b", "B", 2.0),
    ]
    assert [i.description for i in graders[1].rubrics] == ["C"]


async def test_scored_criteria_read_either_band_shape_with_their_gate_and_operator() -> None:
    listed = [
        {"score_range": [0, 3], "outcome": "Wrong."},
        {"score_range": [4, 7], "outcome": "Partly {{ subject }}."},
        {"score_range": [8, 10], "outcome": "Right."},
    ]
    report = await check(
        {
            "tests": [
                {
                    "id": "a",
                    "criteria": "x",
                    "input": "Hi",
                    "vars": {"subject": "right"},
                    "assertions": [
                        {
                            "type": "rubrics",
                            "criteria": [
                                {
                                    "id": "facts",
                                    "weight": 2,
                                    "min_score": 0.8,
                                    "score_ranges": {
                                        "0": "Wrong.",
                                        "4": "Partly right.",
                                        "8": "Right.",
                                    },
                                },
                                {"id": "listed", "outcome": "Says why", "score_ranges": listed},
                                {"id": "no-clash", "operator": "contradiction", "outcome": "Q4 up"},
                            ],
                        }
                    ],
                }
            ]
        }
    )
    assert report.valid, report.errors
    assert report.suite is not None
    facts, listed_item, checked = report.suite.cases[0].evaluators[0].rubrics
    assert [(b.low, b.high, b.outcome) for b in facts.score_ranges] == [
        (0, 3, "Wrong."),
        (4, 7, "Partly right."),
        (8, 10, "Right."),
    ]
    assert listed_item.score_ranges == facts.score_ranges
    assert (facts.description, facts.min_score, facts.required) == ("facts", 0.8, False)
    assert (listed_item.description, listed_item.required) == ("Says why", False)
    assert (checked.operator, checked.required, checked.scored) == ("contradiction", True, False)


@pytest.mark.parametrize(
    ("item", "path", "message"),
    [
        ({"score_ranges": {"1": "a", "10": "b"}}, "score_ranges", "must start at 0, not at 1"),
        ({"score_ranges": []}, "score_ranges", "needs bands that cover 0 to 10 points"),
        ({"score_ranges": {"0": "a", "12": "b"}}, "score_ranges", "not '12'"),
        ({"score_ranges": {"0": "a", "half": "b"}}, "score_ranges", "not 'half'"),
        (
            {"score_ranges": [{"score_range": [0, 6], "outcome": "a"}]},
            "score_ranges",
            "missing: 7, 8, 9, 10",
        ),
        (
            {
                "score_ranges": [
                    {"score_range": [0, 6], "outcome": "a"},
                    {"score_range": [5, 10], "outcome": "b"},
                ]
            },
            "score_ranges",
            "overlap at 5 points",
        ),
        (
            {"score_ranges": [{"score_range": [0, 10], "expected_outcome": "a"}]},
            "score_ranges",
            "unknown keys of a score range: expected_outcome",
        ),
        ({"score_ranges": {"0": "a"}, "required": True}, "", "give 'min_score'"),
        ({"outcome": "A", "min_score": 8}, "min_score", "less than or equal to 1"),
        ({"outcome": "A", "operator": "negation"}, "operator", 'got "negation"'),
    ],
    ids=[
        "not-from-0",
        "no-bands",
        "over-10",
        "not-a-number",
        "gap",
        "overlap",
        "unknown-band-key",
        "required-without-min",
        "min-score-out-of-0-1",
        "unknown-operator",
    ],
)
async def test_rubric_criteria_that_cannot_be_judged_as_written_are_errors_naming_them(
    item: dict[str, Any], path: str, message: str
) -> None:
    report = await check(suite_with({"type": "rubrics", "criteria": [{"id": "a", **item}]}))
    where = "tests[0].assertions[0].criteria[0]" + (f".{path}" if path else "")
    assert message in errors_by_path(report)[where]


@given(st.sets(st.integers(min_value=1, max_value=10)))
def test_band_starts_cover_every_point_once_and_keep_their_outcomes(starts: set[int]) -> None:
    keys = sorted({0, *starts})
    item = RubricItem(id="a", description="a", score_ranges={str(k): f"from {k}" for k in keys})
    points = [p for band in item.score_ranges for p in range(band.low, band.high + 1)]
    assert points == list(range(11))
    assert [band.outcome for band in item.score_ranges] == [f"from {k}" for k in keys]
    assert all(band.low == k for band, k in zip(item.score_ranges, keys, strict=True))


async def test_composite_weighted_average_weights_become_child_weights() -> None:
    [composite] = await graders_of(
        {
            "name": "gate",
            "type": "composite",
            "assertions": [
                {"name": "a", "type": "contains", "value": "x"},
                {"name": "b", "type": "contains", "value": "y"},
            ],
            "aggregator": {"type": "weighted_average", "weights": {"a": 0.3, "b": 0.7}},
        }
    )
    assert [(child.name, child.weight) for child in composite.evaluators] == [
        ("a", 0.3),
        ("b", 0.7),
    ]
    assert composite.aggregator is not None
    assert composite.aggregator.type == "weighted_average"


@pytest.mark.parametrize(
    ("aggregator", "path", "message"),
    [
        ({"type": "median"}, "aggregator.type", "unknown aggregator 'median'"),
        ({"type": "weighted_average", "weights": {"zz": 1}}, "aggregator.weights.zz", "no child"),
    ],
)
async def test_composite_aggregator_mistakes_are_errors(
    aggregator: dict[str, Any], path: str, message: str
) -> None:
    grader = {
        "type": "composite",
        "assertions": [{"name": "a", "type": "contains", "value": "x"}],
        "aggregator": aggregator,
    }
    report = await check(suite_with(grader))
    assert message in errors_by_path(report)[f"tests[0].assertions[0].{path}"]


async def test_graders_that_do_not_run_yet_keep_every_key_in_the_model() -> None:
    from app.suites.documents.findings import Findings
    from app.suites.graders.lists import GraderContext, read_grader
    from app.suites.reading import Renderer

    findings = Findings()
    context = GraderContext(findings, Renderer(None, findings), Renderer(None, findings))
    raw = {"name": "t", "type": "webhook", "value": "http://127.0.0.1:1/x", "weight": 2}
    raw["colour"] = "blue"
    grader = read_grader(raw, ("g",), context)
    [error] = findings.errors
    assert "'webhook' is not supported yet" in error.message
    assert grader is not None
    assert (grader.name, grader.type, grader.weight) == ("t", "webhook", 2.0)
    assert (grader.value, grader.model_extra) == (raw["value"], {"colour": "blue"})
    code = read_grader(
        {"type": "code-grader", "command": "bun run x.ts", "fields": [1]}, ("c",), context
    )
    assert code is not None
    assert (code.command, code.model_extra) == (("bun", "run", "x.ts"), {"fields": [1]})


def test_the_grader_table_in_the_docs_is_current() -> None:
    from scripts.grader_table import DOC, doc_with_table

    text = DOC.read_text(encoding="utf-8")
    assert doc_with_table(text) == text, "run .venv/bin/python scripts/grader_table.py --write"

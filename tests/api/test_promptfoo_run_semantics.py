"""promptfoo constructs that shape a run, through the API: a missing variable file errs only
the tests that use it (promptfoo itself stops the whole eval: a deliberate difference), a
chat template that renders no JSON errs its test, a test's ``providers`` chooses its arms."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.settings import Settings
from app.settings.targets import MockTarget
from tests.conftest import ClientFactory, wait_for_run


async def evaluate(
    make_client: ClientFactory,
    tmp_path: Path,
    suite: dict[str, Any],
    targets: tuple[str, ...] = ("default",),
    **request: Any,
) -> dict[str, Any]:
    settings = Settings(
        data_dir=tmp_path / "data",
        sample_run=False,
        targets=[MockTarget(name=name) for name in targets],
    )
    async with make_client(settings) as http:
        files = {key: value for key, value in request.items() if key == "files"}
        validated = await http.post("/validate", json={"suite": suite, **files})
        assert validated.status_code == 200, validated.text
        assert validated.json()["valid"], validated.text
        response = await http.post("/evaluate", json={"suite": suite, **request})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_a_missing_variable_file_errs_only_the_tests_that_use_it(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    suite = {
        "prompts": ["Answer {{ q }} with {{ context }}"],
        "providers": ["default"],
        "tests": [
            {"vars": {"q": "a", "context": "file://docs/here.md"}},
            {"vars": {"q": "b", "context": "file://docs/gone.md"}},
        ],
    }
    body = await evaluate(make_client, tmp_path, suite, files={"docs/here.md": "kept"})
    records = {record["eval_id"]: record for record in body["results"]}
    assert records["test-1"]["status"] == "passed"
    assert records["test-2"]["status"] == "error"
    assert records["test-2"]["error"] == "file not found: docs/gone.md"


async def test_a_chat_template_that_renders_no_json_errs_only_its_test(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    chat = '[{"role": "user", "content": "{{ q }}"}]  {# a template #}'
    suite = {
        "prompts": ["file://chat.json"],
        "providers": ["default"],
        "tests": [{"vars": {"q": "fine"}}, {"vars": {"q": 'say "hi"'}}],
    }
    body = await evaluate(make_client, tmp_path, suite, files={"chat.json": chat})
    records = {record["eval_id"]: record for record in body["results"]}
    assert records["test-1"]["status"] == "passed"
    assert records["test-2"]["status"] == "error"
    assert "is not valid JSON once rendered" in records["test-2"]["error"]


async def test_a_test_runs_only_on_the_arms_of_the_providers_it_names(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    # measured against promptfoo 0.123.1: tests/conformance/promptfoo/test_providers.yaml
    suite = {
        "prompts": ["Say {{ q }}"],
        "providers": [
            {"id": "openai:chat:x", "label": "fast"},
            {"id": "openai:y", "label": "smart"},
        ],
        "tests": [
            {"id": "label", "vars": {"q": "a"}, "providers": ["fast"]},
            {"id": "id", "vars": {"q": "b"}, "providers": ["openai:y"]},
            {"id": "all", "vars": {"q": "c"}},
            {"id": "prefix", "vars": {"q": "d"}, "providers": ["openai:chat"]},
        ],
    }
    body = await evaluate(make_client, tmp_path, suite, targets=("fast", "smart"))
    ran = [(record["eval_id"], record["arm"]["target"]) for record in body["results"]]
    assert ran == [
        ("label", "fast"),
        ("id", "smart"),
        ("all", "fast"),
        ("all", "smart"),
        ("prefix", "fast"),
    ]


async def test_one_provider_runs_only_the_tests_that_name_it(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    suite = {
        "prompts": ["Say {{ q }}"],
        "providers": ["default", "other"],
        "tests": [
            {"id": "mine", "vars": {"q": "a"}, "providers": ["default"]},
            {"id": "theirs", "vars": {"q": "b"}, "providers": ["other"]},
        ],
    }
    body = await evaluate(
        make_client, tmp_path, suite, targets=("default", "other"), target="default"
    )
    assert [record["eval_id"] for record in body["results"]] == ["mine"]


DERIVED_SUITE: dict[str, Any] = {
    "prompts": ["{{ out }}", "{{ out }}!"],
    "providers": ["default"],
    "derivedMetrics": [
        {"name": "rate", "value": "hits / (hits + misses)"},
        {"name": "doubled", "value": "Tone * 2"},
        {"name": "chained", "value": "rate + 1"},
        {"name": "rooted", "value": "sqrt(hits)"},
        {"name": "zero", "value": "misses / (misses - misses)"},
    ],
    "defaultTest": {
        "assert": [
            {
                "type": "javascript",
                "value": "output.startsWith(context.vars.expect) ? 1 : 0",
                "metric": "hits",
                "weight": 0,
            },
            {
                "type": "javascript",
                "value": "output.startsWith(context.vars.expect) ? 0 : 1",
                "metric": "misses",
                "weight": 0,
            },
        ]
    },
    "tests": [
        {
            "vars": {"out": "yes", "expect": "yes"},
            "assert": [
                {"type": "contains", "value": "y", "metric": "Tone"},
                {"type": "contains", "value": "q", "metric": "Tone"},
            ],
        },
        {
            "vars": {"out": "no", "expect": "yes"},
            "assert": [{"type": "contains", "value": "n", "metric": "Tone"}],
        },
        {
            "vars": {"out": "yes", "expect": "yes"},
            "assert": [{"type": "javascript", "value": "0.25", "metric": "Tone"}],
        },
    ],
}


async def test_derived_metrics_are_computed_from_the_named_scores_as_promptfoo_does(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    # promptfoo 0.123.1 on this suite (two prompts, the fake model echoing them) reports, per
    # prompt: Tone 2.25 (1 + 0 + 1 + 0.25), hits and misses 0 (weight 0), rate and chained
    # null (0 / 0), doubled 4.5, rooted 0, zero null
    per_arm = {
        "Tone": 2.25,
        "hits": 0.0,
        "misses": 0.0,
        "rate": None,
        "doubled": 4.5,
        "chained": None,
        "rooted": 0,
        "zero": None,
    }
    body = await evaluate(make_client, tmp_path, DERIVED_SUITE)
    summary = body["summary"]
    assert [arm["summary"]["named_scores"] for arm in summary["arms"]] == [per_arm, per_arm]
    assert summary["named_scores"] == {**per_arm, "Tone": 4.5, "doubled": 9.0}


async def test_a_durable_run_keeps_the_derived_metrics_in_its_summary(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    settings = Settings(data_dir=tmp_path / "data", targets=[MockTarget(name="default")])
    async with make_client(settings) as http:
        created = await http.post("/runs", json={"suite": DERIVED_SUITE})
        assert created.status_code in (200, 201, 202), created.text
        run = await wait_for_run(http, created.json()["id"])
    assert run["status"] == "completed"
    assert run["summary"]["named_scores"]["doubled"] == 9.0
    assert [arm["summary"]["named_scores"]["Tone"] for arm in run["summary"]["arms"]] == [
        2.25,
        2.25,
    ]


async def test_a_derived_metric_naming_no_metric_is_an_error_at_its_value(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    suite = {**DERIVED_SUITE, "derivedMetrics": [{"name": "bad", "value": "nothing + 1"}]}
    settings = Settings(data_dir=tmp_path / "data", targets=[MockTarget(name="default")])
    async with make_client(settings) as http:
        response = await http.post("/validate", json={"suite": suite})
    errors = {error["path"]: error["message"] for error in response.json()["errors"]}
    assert "nothing is not defined" in errors["derivedMetrics[0].value"]


async def test_max_score_passes_the_arm_whose_other_asserts_scored_highest(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    # measured against promptfoo 0.123.1: tests/conformance/promptfoo/max_score.yaml
    suite = {
        "prompts": ["{{ a }}", "{{ b }}", "{{ c }}"],
        "providers": ["default"],
        "tests": [
            {
                "id": "weighted",
                "vars": {"a": "x", "b": "z", "c": "z"},
                "assert": [
                    {"type": "contains", "value": "x"},
                    {"type": "icontains", "value": "z"},
                    {"type": "max-score", "value": {"weights": {"icontains": 3}}},
                ],
            },
            {
                "id": "below",
                "vars": {"a": "x", "b": "z", "c": "q"},
                "assert": [
                    {"type": "contains", "value": "x"},
                    {"type": "contains", "value": "y"},
                    {"type": "max-score", "value": {"threshold": 0.6}},
                ],
            },
        ],
    }
    body = await evaluate(make_client, tmp_path, suite)
    chosen = {
        (record["eval_id"], record["arm"]["index"]): record["evaluator_results"][-1]["passed"]
        for record in body["results"]
    }
    assert chosen == {
        ("weighted", 0): False,
        ("weighted", 1): True,  # 0.75, the first of two
        ("weighted", 2): False,
        ("below", 0): False,  # 0.5 < 0.6: none selected
        ("below", 1): False,
        ("below", 2): False,
    }

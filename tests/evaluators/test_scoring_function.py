"""promptfoo's ``assertScoringFunction``: a program in the sandbox makes a test's result.

The contract was measured against promptfoo 0.123.1 (tests/conformance/promptfoo/
scoring_function.yaml runs both tools on its scoring functions); these pin it without
promptfoo, end to end through ``/evaluate`` with real scoring functions in both languages.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.settings import Settings
from app.settings.targets import OpenAITarget
from app.suites.loader import check_suite
from testkit.fake_llm import FakeLLM
from tests.conftest import ClientFactory
from tests.suites.helpers import errors_by_path, source

CORPUS = Path(__file__).resolve().parents[1] / "conformance" / "promptfoo"
from tests.suites.test_reference_matrices import EXAMPLES  # noqa: E402

SCORES_JS = (CORPUS / "scoring_functions" / "scores.js").read_text()
SCORES_PY = (CORPUS / "scoring_functions" / "scores.py").read_text()
ARGUMENTS_JS = """\
module.exports.echo = (namedScores, context) => ({
  pass: true, score: 0.5, reason: JSON.stringify({ namedScores, context }),
});
"""


def suite(tests: list[dict[str, Any]], default: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "prompts": ["{{out}}"],  # the fake echoes the prompt: a test's output is its out
        "providers": ["t"],
        **({"defaultTest": default} if default else {}),
        "tests": [{"vars": {"out": "Hello world"}, **test} for test in tests],
    }


def write(root: Path, content: dict[str, Any]) -> str:
    folder = root / "evals"
    folder.mkdir(exist_ok=True)
    (folder / "scores.js").write_text(SCORES_JS)
    (folder / "scores.py").write_text(SCORES_PY)
    (folder / "arguments.js").write_text(ARGUMENTS_JS)
    (folder / "promptfooconfig.yaml").write_text(json.dumps(content))
    return "evals/promptfooconfig.yaml"


async def evaluate(
    root: Path, fake: FakeLLM, make_client: ClientFactory, content: dict[str, Any]
) -> list[dict[str, Any]]:
    settings = Settings(
        data_dir=root / "data",
        targets=[OpenAITarget(name="t", provider="openai", base_url=f"{fake.url}/v1", model="m")],
        workspace_roots=[root],
        code_graders=True,
        retry_max_attempts=1,
        sample_run=False,
    )
    async with make_client(settings) as client:
        response = await client.post("/evaluate", json={"suite": write(root, content)})
    assert response.status_code == 200, response.text
    return list(response.json()["results"])


def contains(value: str, **more: Any) -> dict[str, Any]:
    return {"type": "contains", "value": value, **more}


async def test_the_function_decides_the_verdict_and_score_of_each_test(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    tests: list[dict[str, Any]] = [
        {"assert": [contains("Hello"), contains("world")]},
        # the mean (2/3) passes the threshold, the default's function fails on the lowest
        {"threshold": 0.5, "assert": [contains("Hello"), contains("Hello"), contains("moon")]},
        {
            "assertScoringFunction": "file://scores.js:byMetric",
            "assert": [
                contains("Hello", metric="accuracy", weight=3),
                contains("moon", metric="accuracy"),
            ],
        },
        {
            "assertScoringFunction": "file://scores.py",  # its default function: func
            "assert": [contains("Hello"), contains("world"), contains("moon")],
        },
        {"assertScoringFunction": "file://scores.js:number", "assert": [contains("Hello")]},
        {"assertScoringFunction": "file://scores.js:partial", "assert": [contains("Hello")]},
        {"assertScoringFunction": "file://scores.py:not_a_result", "assert": [contains("H")]},
        {"assertScoringFunction": "file://scores.js:throws", "assert": [contains("Hello")]},
        {"assertScoringFunction": "file://scores.js:missing", "assert": [contains("Hello")]},
        {},  # no asserts: not scored
    ]
    default = {"assertScoringFunction": "file://scores.js:lowest"}
    records = await evaluate(tmp_path, fake_llm, make_client, suite(tests, default))
    got = [(record["status"], record["score"]) for record in records]
    assert got == [
        ("passed", 1.0),
        ("failed", 0.0),
        ("passed", 0.75),  # accuracy: (1 x 3 + 0 x 1) / 4
        ("passed", pytest.approx(2 / 3)),
        ("failed", 0.0),
        ("failed", 0.0),
        ("failed", 0.0),
        ("failed", 0.0),
        ("failed", 0.0),
        ("passed", None),
    ]
    reasons = [record["reasoning"] for record in records]
    assert reasons[0] == "lowest of 2: 1"
    assert reasons[2] == '{"accuracy":0.75}'
    not_a_result = "Scoring function error: assertion scoring function must return a GradingResult"
    assert reasons[4:7] == [not_a_result] * 3
    assert reasons[7] == "Scoring function error: scoring failed on purpose"
    assert reasons[8].startswith("Scoring function error: ")
    assert "missing" in reasons[8]
    # the asserts' own results are kept as they graded
    assert [r["passed"] for r in records[1]["evaluator_results"]] == [True, True, False]


async def test_the_function_gets_named_scores_and_the_component_results(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    test = {
        "assertScoringFunction": "file://arguments.js:echo",
        "assert": [
            contains("Hello", metric="m", weight=2),
            contains("moon", metric="m"),
            {"type": "icontains", "value": "WORLD"},
        ],
    }
    records = await evaluate(tmp_path, fake_llm, make_client, suite([test]))
    received = json.loads(records[0]["reasoning"])
    assert received["namedScores"] == {"m": pytest.approx(2 / 3)}
    components = received["context"]["componentResults"]
    assert [(c["pass"], c["score"]) for c in components] == [(True, 1), (False, 0), (True, 1)]
    assert components[0]["assertion"] == {
        "type": "contains",
        "value": "Hello",
        "metric": "m",
        "weight": 2,
    }
    assert components[2]["assertion"] == {"type": "icontains", "value": "WORLD"}
    assert received["context"]["tokensUsed"]["total"] == 0


async def read(root: Path, content: dict[str, Any], *, enabled: bool = True) -> dict[str, str]:
    report = await check_suite(
        write(root, content), file_source=source(roots=[root]), code_graders=enabled
    )
    return errors_by_path(report)


@pytest.mark.parametrize(
    "value",
    ["return {pass: true, score: 1}", "file://scores.rb:score", "file://scores.txt", 3],
)
async def test_a_scoring_function_that_is_not_a_program_file_is_an_error_at_it(
    tmp_path: Path, value: Any
) -> None:
    errors = await read(tmp_path, suite([{"assertScoringFunction": value, "assert": []}]))
    assert "must name a scoring function file" in errors["tests[0].assertScoringFunction"]
    errors = await read(tmp_path, suite([{}], {"assertScoringFunction": value}))
    assert "must name a scoring function file" in errors["defaultTest.assertScoringFunction"]


async def test_a_scoring_function_runs_only_with_code_graders_enabled(tmp_path: Path) -> None:
    content = suite([{"assertScoringFunction": "file://scores.js", "assert": [contains("x")]}])
    assert await read(tmp_path, content) == {}
    errors = await read(tmp_path, content, enabled=False)
    assert any("code graders" in message for message in errors.values()), errors


@pytest.mark.skipif(not EXAMPLES.is_dir(), reason=f"{EXAMPLES} is not there")
async def test_promptfoos_assertion_scoring_override_example_loads() -> None:
    report = await check_suite(
        "assertion-scoring-override/promptfooconfig.yaml",
        file_source=source(roots=[EXAMPLES]),
        code_graders=True,
    )
    assert report.suite is not None, report.errors
    functions = [case.scoring_function for case in report.suite.cases]
    assert [str(function.value) if function else None for function in functions] == [
        "file://./default.js",
        "file://./override.py:calculate_score",
        "file://./override.js:overrideScoring",
    ]

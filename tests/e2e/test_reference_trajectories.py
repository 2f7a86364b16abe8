"""AgentV's trajectory example files, run on an API target (the fake server as a tool-calling
model), graded as AgentV graded them (its baselines).

The examples drive AgentV's mock CLI agent; here the same scenarios are answered by an OpenAI
target whose replies call the scenario's tools (one reply with every call, as a model calling
tools in parallel; no canned results, so the first reply is graded). The files are read where
they are kept (``/work/shared/reference``), never copied: the test is skipped without them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.settings import Settings
from testkit.fake_llm import FakeLLM, RecordedRequest, Reply
from testkit.fake_wire import JUDGE_MARKER, last_user_text, requested_schema
from tests.conftest import ClientFactory

AGENTV = Path(__file__).resolve().parents[3] / "shared/reference/agentv-2026/full"
TOOL_TRAJECTORY = AGENTV / "2026-07-01_ea3ce9db5/examples/features/tool-trajectory-simple/evals"
PROMPTFOO_STYLE = (
    AGENTV / "2026-07-08_58f316ca2/examples/features/trajectory-assertions-simple/evals"
)

PIPELINE: list[tuple[str, dict[str, Any]]] = [
    ("fetchData", {"source": "api", "page": 1}),
    ("validateSchema", {}),
    ("transformData", {"format": "json"}),
    ("saveResults", {"table": "customers"}),
]
RESEARCH = [("knowledgeSearch", {"query": "REST"}), ("knowledgeSearch", {"query": "GraphQL"}),
            ("documentRetrieve", {"id": "doc-1"})]  # fmt: skip
SCENARIOS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "Research the key differences": RESEARCH,
    "Search for information and generate a report": RESEARCH,
    "Research and analyze": RESEARCH[1:],
    "Process the customer data": PIPELINE,
    "Authenticate the user": [
        ("checkCredentials", {"user": "u1"}),
        ("generateToken", {}),
        ("auditLog", {"event": "login"}),
    ],
    "system metrics for CPU and memory": [("getCpuMetrics", {}), ("getMemoryMetrics", {})],
    "weather like in Paris": [
        ("search", {"query": "weather Paris", "limit": 3}),
        ("get_weather", {"location": "Paris", "unit": "c"}),
    ],
    "Load customer data": [
        ("load_data", {"source": "customers", "limit": 10}),
        ("transform", {"op": "normalize"}),
        ("save_data", {"to": "db"}),
    ],
    "current system status": [("getCpuMetrics", {}), ("knowledgeSearch", {"query": "status"})],
}


def tool_calling_model(recorded: RecordedRequest) -> Reply | None:
    """The scenario's calls for a candidate request; the default verdict for a judge."""
    if requested_schema(recorded) is not None or JUDGE_MARKER in recorded.messages_text():
        return None
    asked = last_user_text(recorded)
    calls = next((c for key, c in SCENARIOS.items() if key in asked), [])
    return Reply(tool_calls=[{"name": name, "arguments": args} for name, args in calls])


def baseline(path: Path) -> dict[str, dict[str, float]]:
    scores = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        scores[row["test_id"]] = {s["name"]: s["score"] for s in row["scores"]}
    return scores


async def run(make_client: ClientFactory, tmp_path: Path, fake: FakeLLM, suite: Path) -> Any:
    fake.responder = tool_calling_model
    text = suite.read_text(encoding="utf-8")  # noqa: ASYNC240 (a small file, in a test)
    target = {"name": "mock_agent", "provider": "openai", "model": "tool-model",
              "base_url": f"{fake.url}/v1", "api_key": "sk-test-0123456789"}  # fmt: skip
    settings = Settings.model_validate({"data_dir": tmp_path / "data", "targets": [target]})
    async with make_client(settings) as client:
        response = await client.post("/evaluate", json={"suite": text, "target": "mock_agent"})
    assert response.status_code == 200, response.text
    assert fake.shape_errors == []
    return {r["eval_id"]: r for r in response.json()["results"]}


@pytest.mark.skipif(not TOOL_TRAJECTORY.is_dir(), reason="AgentV's examples are not here")
async def test_agentv_tool_trajectory_example_grades_as_agentv_on_an_api_target(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    records = await run(make_client, tmp_path, fake_llm, TOOL_TRAJECTORY / "dataset.eval.yaml")
    expected = baseline(TOOL_TRAJECTORY / "dataset.eval.baseline.jsonl")
    assert len(records) == 11
    for case_id, scores in expected.items():
        got = {e["name"]: e["score"] for e in records[case_id]["evaluator_results"]}
        for name, score in scores.items():
            assert got[name] == pytest.approx(score), (case_id, name, records[case_id])
    for case_id, record in records.items():  # the cases the baseline leaves out pass too
        trajectory = [e for e in record["evaluator_results"] if e["type"] == "tool_trajectory"]
        assert trajectory, case_id
        if case_id not in expected:
            assert all(e["score"] == 1.0 for e in trajectory), (case_id, trajectory)


@pytest.mark.skipif(not PROMPTFOO_STYLE.is_dir(), reason="AgentV's examples are not here")
async def test_agentv_promptfoo_style_trajectory_example_runs_on_an_api_target(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    # Its baseline predates the file's split asserts (one merged score per test): what it
    # says is that every trajectory holds but partial-match's, which lacks generateReport.
    records = await run(make_client, tmp_path, fake_llm, PROMPTFOO_STYLE / "suite.yaml")
    assert len(records) == 11
    for case_id, record in records.items():
        graders = [e for e in record["evaluator_results"] if e["type"].startswith("trajectory")]
        assert graders, case_id
        if case_id != "partial-match":
            assert all(e["verdict"] == "pass" for e in graders), (case_id, graders)
    misses = [e["misses"] for e in records["partial-match"]["evaluator_results"] if e["misses"]]
    assert misses == [["generateReport: called 0 times (required ≥1)"]]

"""promptfoo's ``ruby`` asserts end to end: an answer over HTTP from the fake LLM, graded by
Ruby in the sandbox; promptfoo's own ruby-provider example loads and runs (read in place).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from app.settings import Settings
from testkit.fake_llm import FakeLLM, Reply
from tests.conftest import ClientFactory

pytestmark = pytest.mark.skipif(shutil.which("ruby") is None, reason="ruby is not installed")
EXAMPLES = Path("/work/shared/reference/promptfoo-examples")
PROVIDERS = ("file://provider.rb", "file://provider.rb:some_other_function")
"""The example's providers: Ruby programs in promptfoo, targets of those names here."""
TWEET = "Bananamax: a slow turtle in a shell 🍌"
CHECKS = """\
def check_length(output, context)
  min = context['config']['minLength']
  { 'pass' => output.length >= min, 'score' => 1.0, 'reason' => "at least #{min} characters" }
end
"""


def settings(root: Path, fake: FakeLLM) -> Settings:
    targets = [
        {"name": name, "provider": "openai", "base_url": f"{fake.url}/v1", "model": "fake-model",
         "api_key": "sk-fake-key"}
        for name in PROVIDERS
    ]  # fmt: skip
    return Settings.model_validate(
        {"data_dir": root / "data", "workspace_roots": [root, EXAMPLES], "targets": targets,
         "code_graders": True, "sample_run": False}
    )  # fmt: skip


def grades(body: dict[str, Any]) -> list[list[tuple[str, bool | None, str]]]:
    """Each record's graders as ``(type, passed, reasoning)``, records by case and arm."""
    records = sorted(body["results"], key=lambda record: (record["eval_id"], record["target"]))
    return [
        [(e["type"], e["passed"], e["reasoning"] or "") for e in record["evaluator_results"]]
        for record in records
    ]


async def test_ruby_asserts_grade_an_answer_from_the_fake_llm(
    tmp_path: Path, make_client: ClientFactory, fake_llm: FakeLLM
) -> None:
    fake_llm.responder = lambda _: Reply(text=TWEET)
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "checks.rb").write_text(CHECKS)
    suite = {
        "prompts": ["Write a very concise funny tweet about {{topic}}"],
        "providers": [{"id": PROVIDERS[0], "config": {"someOption": "foobar"}}],
        "tests": [
            {
                "vars": {"topic": "bananas"},
                "assert": [
                    {"type": "ruby", "value": "output.length > 10"},
                    {"type": "ruby", "value": "output.include?(context['vars']['topic'])"},
                    {
                        "type": "ruby",
                        "value": "file://checks.rb:check_length",
                        "config": {"minLength": 15},
                    },
                    {"type": "ruby", "value": "output.split.length > 3 ? 0.75 : 0"},
                ],
            }
        ],
    }
    (tmp_path / "evals" / "promptfooconfig.yaml").write_text(yaml.safe_dump(suite))
    async with make_client(settings(tmp_path, fake_llm)) as client:
        response = await client.post("/evaluate", json={"suite": "evals/promptfooconfig.yaml"})
    assert response.status_code == 200, response.text
    (record,) = response.json()["results"]
    assert record["candidate_answer"] == TWEET
    found = [(e["passed"], e["score"]) for e in record["evaluator_results"]]
    assert found == [(True, 1.0), (False, 0.0), (True, 1.0), (True, 0.75)]
    assert record["evaluator_results"][2]["reasoning"] == "at least 15 characters"
    assert record["status"] == "failed"  # one assert failed: promptfoo's test fails too
    assert "sk-fake-key" not in response.text


@pytest.mark.skipif(not EXAMPLES.is_dir(), reason="promptfoo's examples are not here")
async def test_promptfoos_ruby_provider_example_loads_and_runs(
    tmp_path: Path, make_client: ClientFactory, fake_llm: FakeLLM
) -> None:
    fake_llm.responder = lambda _: Reply(text=TWEET)
    suite = {"suite": "ruby-provider/promptfooconfig.yaml"}
    async with make_client(settings(tmp_path, fake_llm)) as client:
        checked = (await client.post("/validate", json=suite)).json()
        response = await client.post("/evaluate", json=suite)
    assert checked["valid"], checked
    assert response.status_code == 200, response.text
    found = grades(response.json())
    assert len(found) == 6  # three tests, each on both providers
    for bananas in found[:2]:
        assert [(kind, passed) for kind, passed, _ in bananas] == [
            ("contains", True),
            ("ruby", True),
        ]
    for fruits in found[2:4]:
        # the example's assert.rb is a stand-in without get_assert nor check_length: Ruby
        # says so, and the asserts fail as promptfoo fails them
        ruby_asserts = [(passed, reason) for kind, passed, reason in fruits if kind == "ruby"]
        assert [passed for passed, _ in ruby_asserts] == [False, False]
        assert "NoMethodError" in ruby_asserts[0][1]
        assert "get_assert" in ruby_asserts[0][1]
        assert "check_length" in ruby_asserts[1][1]
    for turtles in found[4:]:
        ruby_asserts = [(passed, reason) for kind, passed, reason in turtles if kind == "ruby"]
        assert ruby_asserts == [(True, "Found 3 of 3 turtle-related words")]

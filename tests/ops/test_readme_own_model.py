"""The README's "Your own model in two steps", run as written with the fake LLM standing in."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from app.settings import Settings
from testkit.fake_llm import FakeLLM
from tests.conftest import ClientFactory

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_targets_file() -> str:
    """The targets file the Quick start writes (its heredoc)."""
    text = README.read_text(encoding="utf-8")
    found = re.search(r"cat > my-targets\.yaml <<'YAML'\n(.*?)\nYAML\n", text, re.DOTALL)
    assert found, "README's Quick start should write my-targets.yaml"
    return found.group(1)


async def test_the_quick_start_targets_file_serves_requests_on_your_own_model(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = readme_targets_file()
    [target] = yaml.safe_load(written)["targets"]
    assert target["name"] == "default"  # what a request uses when it names no target
    pointed = written.replace(target["base_url"], f"{fake_llm.url}/v1")
    path = tmp_path / "my-targets.yaml"
    path.write_text(pointed, encoding="utf-8")
    monkeypatch.setenv("MY_MODEL_KEY", "sk-quick-start")
    suite = {"tests": [{"id": "q", "input": "What is 2 + 2?", "criteria": "Says 4"}]}

    settings = Settings(data_dir=tmp_path / "data", targets_file=path, sample_run=False)
    async with make_client(settings) as client:
        checked = (await client.get("/targets", params={"check": "true"})).json()
        evaluated = await client.post("/evaluate", json={"suite": suite})

    assert checked["checks"]["default"]["status"] == "ok"
    assert evaluated.status_code == 200, evaluated.text
    [record] = evaluated.json()["results"]
    assert record["target"] == "default"
    assert record["judge_target"] == "default"  # its own judge
    models = {request.json["model"] for request in fake_llm.requests}
    assert models == {target["model"]}
    assert all(
        request.headers.get("authorization") == "Bearer sk-quick-start"
        for request in fake_llm.requests
    )

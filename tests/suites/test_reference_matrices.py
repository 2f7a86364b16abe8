"""promptfoo's example configs with several providers run with every provider as an arm.

Read in place from ``../shared/reference/promptfoo-examples`` (skipped when it is not beside
the checkout), each provider id a target on the fake LLM. The configs listed load and run
with one arm per provider (with the tools of its config), every test once per arm; the other
multi-provider configs stop on something that is not the matrix (a grader type,
``defaultTest.options``...: issue 36).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from app.settings import Settings
from app.settings.targets import OpenAITarget
from testkit.fake_llm import FakeLLM
from tests.conftest import ClientFactory

# shared/ lies beside the repository (CI's clone, the main checkout), or at /work/shared.
EXAMPLES = next(
    (
        folder / "reference/promptfoo-examples"
        for folder in (Path(__file__).resolve().parents[3] / "shared", Path("/work/shared"))
        if (folder / "reference/promptfoo-examples").is_dir()
    ),
    Path("/work/shared/reference/promptfoo-examples"),
)
MATRICES = [
    "azure/comparison/promptfooconfig.yaml",
    "claude-thinking/promptfooconfig.yaml",
    "image-classification/promptfooconfig.yaml",
    "langchain-python/promptfooconfig.yaml",
    "langfuse-labels/promptfooconfig.yaml",
    "mistral/promptfooconfig.comparison.yaml",
    "ollama/promptfooconfig.yaml",
    "openai-azure-comparison/promptfooconfig.yaml",
    "python-provider/promptfooconfig.yaml",
    "rag-full/promptfooconfig.with-asserts.yaml",
    "summarization/promptfooconfig.yaml",
    # each provider with tools of its own config
    "anthropic/structured-outputs/promptfooconfig.yaml",
    "openai-responses/promptfooconfig.yaml",
    # prompts as arms (a provider's prompts: its own), select-best settled across the arms
    "prompt-labels/promptfooconfig.yaml",
    "select-best-example/promptfooconfig.yaml",
]


def provider_names(config: Path) -> list[str]:
    """The targets a config's providers name (label, else id), as the reader reads them."""
    providers = yaml.safe_load(config.read_text())["providers"]
    return [p if isinstance(p, str) else str(p.get("label") or p["id"]) for p in providers]


def provider_prompts(config: Path) -> dict[str, list[str]]:
    """The prompts of each provider that names its own (``prompts:``), by target."""
    providers = yaml.safe_load(config.read_text())["providers"]
    return {
        str(p.get("label") or p["id"]): p["prompts"]
        for p in providers
        if isinstance(p, dict) and "prompts" in p
    }


def parts(label: str, ids: list[str]) -> list[str]:
    """The ids of the parts of a prompt file split by ``---`` (``label.1``, ``label.2``...)."""
    return [p for p in ids if p.startswith(f"{label}.") and p[len(label) + 1 :].isdigit()]


def settings_for(tmp_path: Path, fake: FakeLLM, names: list[str]) -> Settings:
    targets = [
        OpenAITarget(name=name, provider="openai", base_url=f"{fake.url}/v1", model=f"m{index}")
        for index, name in enumerate(names)
    ]
    return Settings(
        data_dir=tmp_path / "data",
        targets=targets,
        workspace_roots=[EXAMPLES],
        retry_max_attempts=1,
        sample_run=False,
    )


pytestmark = pytest.mark.skipif(not EXAMPLES.is_dir(), reason=f"{EXAMPLES} is not there")


@pytest.mark.parametrize("config", MATRICES)
async def test_a_promptfoo_matrix_config_runs_every_test_on_every_provider(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory, config: str
) -> None:
    names = provider_names(EXAMPLES / config)
    async with make_client(settings_for(tmp_path, fake_llm, names)) as client:
        response = await client.post("/evaluate", json={"suite": config})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    arms = body["summary"]["arms"]
    targets = [arm["arm"]["target"] for arm in arms]
    assert list(dict.fromkeys(targets)) == list(dict.fromkeys(names))
    own = provider_prompts(EXAMPLES / config)
    prompts = {t: [a["arm"]["prompt"] for a in arms if a["arm"]["target"] == t] for t in names}
    for name, labels in own.items():  # a provider's prompts (each part of a split file)
        assert prompts[name]
        assert all(
            any(p in (label, *parts(label, prompts[name])) for label in labels)
            for p in prompts[name]
        )
    every = [each for t, each in prompts.items() if t not in own]
    assert all(each == every[0] for each in every)  # the others: every prompt
    cases = {record["eval_id"] for record in body["results"]}
    assert [arm["summary"]["total"] for arm in arms] == [len(cases)] * len(arms)
    settled = [
        (result.get("details") or {}).get("select_best")
        for record in body["results"]
        for result in record["evaluator_results"]
        if result["type"] == "select_best"
    ]
    assert set(settled) <= {"settled"}  # every select-best compared across the arms
    assert bool(settled) == ("select-best" in (EXAMPLES / config).read_text())
    models = {request.json["model"] for request in fake_llm.requests}
    assert {f"m{index}" for index in range(len(names))} <= models

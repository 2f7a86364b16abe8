"""AgentV's 2026 targets files and July 2026 providers.yaml: what loads, what is skipped."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from app.settings import Settings
from app.settings.targets import (
    AzureTarget,
    CliTarget,
    GeminiTarget,
    MockTarget,
    OpenAITarget,
    TargetConfig,
    load_targets_file,
    with_default_target,
)
from tests.conftest import ClientFactory

TARGETS_2026 = textwrap.dedent(
    """
    targets:
      - name: default
        use_target: ${{ AGENT_TARGET }}
      - name: grader
        use_target: ${{ GRADER_TARGET }}
        temperature: 0
      - name: claude
        provider: claude-cli
        grader_target: grader
      - name: copilot
        provider: copilot-cli
        model: ${{ COPILOT_MODEL }}
      - name: local_cli
        provider: cli
        grader_target: grader
        command: uv run ./mock_cli.py --prompt {PROMPT} {FILES} --output {OUTPUT_FILE}
        files_format: --file {path}
        cwd: ..
        healthcheck:
          command: uv run ./mock_cli.py --healthcheck
      - name: batch_cli
        provider: cli
        provider_batching: true
        command: bun run runner.ts --output {OUTPUT_FILE}
      - name: azure
        provider: azure
        endpoint: ${{ AZURE_OPENAI_ENDPOINT }}
        api_key: ${{ AZURE_OPENAI_API_KEY }}
        model: ${{ AZURE_DEPLOYMENT_NAME }}
        version: ${{ AZURE_OPENAI_API_VERSION }}
      - name: openai
        provider: openai
        endpoint: ${{ OPENAI_ENDPOINT }}
        api_key: ${{ OPENAI_API_KEY }}
        model: gpt-5-mini
      - name: mimo
        provider: openrouter
        api_key: ${{ OPENROUTER_API_KEY }}
        model: xiaomi/mimo-v2.5-pro
        grader_target: grader
      - name: preprocess
        provider: file-output
        command: bun run out.ts {OUTPUT_FILE}
    """
)
ENVIRON = {
    "AGENT_TARGET": "local_cli",
    "GRADER_TARGET": "azure",
    "AZURE_OPENAI_ENDPOINT": "https://res.openai.azure.com",
    "AZURE_OPENAI_API_KEY": "azure-key-0123456789",
    "AZURE_DEPLOYMENT_NAME": "gpt-4o",
    "AZURE_OPENAI_API_VERSION": "2024-10-21",
    "OPENAI_ENDPOINT": "http://127.0.0.1:9/v1",
    "OPENAI_API_KEY": "sk-0123456789",
    "OPENROUTER_API_KEY": "or-0123456789",
}
PROVIDERS_YAML = textwrap.dedent(
    """
    - id: copilot-cli
      label: default
      model: "{{ env.COPILOT_MODEL }}"
    - id: azure
      label: grader
      endpoint: "{{ env.AZURE_OPENAI_ENDPOINT }}"
      api_key: "{{ env.AZURE_OPENAI_API_KEY }}"
      model: "{{ env.AZURE_DEPLOYMENT_NAME }}"
    - id: claude-cli
      label: claude
    - id: agentv:codex-cli
      label: codex
      command: ["{{ env.CODEX_EXECUTABLE }}"]
    - id: openai:codex-sdk
      label: codex-sdk-openai
    - id: gemini
      label: gemini
      api_key: "{{ env.GOOGLE_GENERATIVE_AI_API_KEY }}"
      model: gemini-2.5-pro
    - id: openai:gpt-4o-mini
      label: gh-models
      base_url: https://models.github.ai/inference
      api_key: "{{ env.GH_MODELS_TOKEN }}"
    """
)


def load(
    tmp_path: Path, text: str, environ: dict[str, str]
) -> tuple[list[TargetConfig], list[str]]:
    folder = tmp_path / "feature" / ".agentv"
    folder.mkdir(parents=True)
    path = folder / "targets.yaml"
    path.write_text(text, encoding="utf-8")
    skipped: list[str] = []
    return load_targets_file(path, environ, skipped), skipped


def test_a_2026_targets_file_loads_with_skipped_targets_and_unused_keys_named(
    tmp_path: Path,
) -> None:
    targets, skipped = load(tmp_path, TARGETS_2026, ENVIRON)
    by_name = {target.name: target for target in targets}
    assert list(by_name) == ["default", "grader", "local_cli", "azure", "openai", "mimo"]
    assert skipped == [
        "target 'default': keys not used by this service: healthcheck",
        "target 'claude' skipped: provider 'claude-cli' is an agent this service does not run",
        "target 'copilot' skipped: provider 'copilot-cli' is an agent this service does not run",
        "target 'local_cli': keys not used by this service: healthcheck",
        "target 'batch_cli' skipped: a batching CLI provider (one run for every case) is "
        "not supported",
        "target 'preprocess' skipped: unsupported provider 'file-output' (supported: "
        "anthropic, azure, cli, gemini, huggingface, mock, openai)",
    ]
    cli = by_name["local_cli"]
    assert isinstance(cli, CliTarget)
    assert cli.judge_target == "grader"
    assert cli.files_format == "--file {path}"
    assert cli.cwd == (tmp_path / "feature").resolve()
    assert cli.argv()[-4:] == ["{PROMPT}", "{FILES}", "--output", "{OUTPUT_FILE}"]


def test_use_target_is_a_copy_of_the_target_it_names_under_its_own_name(tmp_path: Path) -> None:
    targets, _ = load(tmp_path, TARGETS_2026, ENVIRON)
    by_name = {target.name: target for target in targets}
    default, grader, local = by_name["default"], by_name["grader"], by_name["local_cli"]
    assert isinstance(default, CliTarget)
    assert isinstance(local, CliTarget)
    assert default.argv() == local.argv()
    assert isinstance(grader, AzureTarget)
    assert (grader.deployment, grader.temperature) == ("gpt-4o", 0)


def test_openai_endpoint_and_openrouter_are_openai_compatible(tmp_path: Path) -> None:
    targets, _ = load(tmp_path, TARGETS_2026, ENVIRON)
    by_name = {target.name: target for target in targets}
    openai, mimo = by_name["openai"], by_name["mimo"]
    assert isinstance(openai, OpenAITarget)
    assert openai.base_url == "http://127.0.0.1:9/v1"
    assert isinstance(mimo, OpenAITarget)
    assert mimo.base_url == "https://openrouter.ai/api/v1"
    assert mimo.judge_target == "grader"


def test_claude_is_the_claude_code_agent_not_the_anthropic_api(tmp_path: Path) -> None:
    for provider in ("claude", "claude-cli", "claude-code", "claude-sdk"):
        text = f"targets:\n  - {{name: c, provider: {provider}, api_key: k, model: m}}\n"
        folder = tmp_path / provider
        folder.mkdir()
        (folder / "t.yaml").write_text(text)
        skipped: list[str] = []
        assert load_targets_file(folder / "t.yaml", {}, skipped) == []
        assert "is an agent this service does not run" in skipped[0]


def test_use_target_naming_an_agent_target_skips_it_and_keeps_no_mock_default(
    tmp_path: Path,
) -> None:
    targets, skipped = load(tmp_path, TARGETS_2026, {**ENVIRON, "AGENT_TARGET": "claude"})
    assert "default" not in [target.name for target in targets]
    assert (
        "target 'default' skipped: provider 'claude-cli' is an agent this service does not run"
        in skipped
    )
    served = with_default_target(targets, skipped)
    assert not any(isinstance(target, MockTarget) for target in served)


def test_use_target_naming_no_target_is_skipped(tmp_path: Path) -> None:
    targets, skipped = load(tmp_path, TARGETS_2026, {**ENVIRON, "GRADER_TARGET": "nowhere"})
    assert "grader" not in [target.name for target in targets]
    assert "target 'grader' skipped: use_target names no target ('nowhere')" in skipped


def test_providers_yaml_of_july_2026_loads(tmp_path: Path) -> None:
    environ = {
        "AZURE_OPENAI_ENDPOINT": "https://res.openai.azure.com",
        "AZURE_OPENAI_API_KEY": "k-0123456789",
        "AZURE_DEPLOYMENT_NAME": "gpt-4o",
        "GOOGLE_GENERATIVE_AI_API_KEY": "g-0123456789",
        "GH_MODELS_TOKEN": "gh-0123456789",
    }
    targets, skipped = load(tmp_path, PROVIDERS_YAML, environ)
    grader, gemini, gh_models = targets
    assert isinstance(grader, AzureTarget)
    assert (grader.name, grader.deployment) == ("grader", "gpt-4o")
    assert grader.api_key.get_secret_value() == "k-0123456789"
    assert isinstance(gemini, GeminiTarget)
    assert isinstance(gh_models, OpenAITarget)
    assert (gh_models.model, gh_models.base_url) == (
        "gpt-4o-mini",
        "https://models.github.ai/inference",
    )
    assert [message.split(":")[0] for message in skipped] == [
        "target 'default' skipped",
        "target 'claude' skipped",
        "target 'codex' skipped",
        "target 'codex-sdk-openai' skipped",
    ]


async def test_targets_lists_the_skipped_targets_and_start_up_goes_on(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    path = tmp_path / "targets.yaml"
    path.write_text(
        "targets:\n  - {name: claude, provider: claude}\n  - {name: quick, provider: mock}\n"
    )
    async with make_client(Settings(data_dir=tmp_path, targets_file=path)) as client:
        body = (await client.get("/targets")).json()
    assert [target["name"] for target in body["targets"]] == ["quick", "default"]
    assert body["warnings"] == [
        "target 'claude' skipped: provider 'claude' is an agent this service does not run"
    ]


@pytest.mark.parametrize("command", ["prog --x {PROMPT}", ["prog", "--x", "{PROMPT}"]])
def test_cli_command_may_be_a_string_or_a_list(tmp_path: Path, command: object) -> None:
    from app.settings.targets import parse_target

    target = parse_target({"name": "c", "provider": "cli", "command": command}, {})
    assert isinstance(target, CliTarget)
    assert target.argv() == ["prog", "--x", "{PROMPT}"]

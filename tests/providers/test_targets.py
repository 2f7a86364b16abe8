"""The targets file: AgentV's format, environment values, aliases, the default mock."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from app.errors import TargetsFileError
from app.providers.access.inline import inline_target
from app.providers.errors import InlineTargetRefused, UnknownTarget
from app.settings import Settings
from app.settings.targets import (
    AnthropicTarget,
    AzureTarget,
    GeminiTarget,
    MockTarget,
    OpenAITarget,
    TargetConfig,
    load_targets_file,
    with_default_target,
)

AGENTV_FILE = textwrap.dedent(
    """
    $schema: agentv-targets-v2.2
    targets:
      - name: azure_base
        provider: azure
        endpoint: ${{ AZURE_OPENAI_ENDPOINT }}
        api_key: ${{ AZURE_OPENAI_API_KEY }}
        model: ${{ AZURE_DEPLOYMENT_NAME }}
        version: api-version=2024-10-01-preview
        workers: 4
      - name: default
        provider: anthropic
        judge_target: azure_base
        apiKey: ${{ ANTHROPIC_API_KEY }}
        model: claude-sonnet-4-5
        maxTokens: 2048
      - name: gemini
        provider: google-gemini
        api_key: ${{GOOGLE_API_KEY}}
      - name: vscode
        provider: vscode
        workspace_template: ${{ WORKSPACE }}
    """
)


def load_targets(path: Path | None, environ: dict[str, str]) -> list[TargetConfig]:
    """The targets a registry gets from a file: the file's, then the mock default."""
    return with_default_target(load_targets_file(path, environ) if path else [])


ENVIRON = {
    "AZURE_OPENAI_ENDPOINT": "https://my-resource.openai.azure.com",
    "AZURE_OPENAI_API_KEY": "azure-key-123456789",
    "AZURE_DEPLOYMENT_NAME": "gpt-4o",
    "ANTHROPIC_API_KEY": "sk-ant-123456789",
    "GOOGLE_API_KEY": "AIza-123456789",
}


def test_agentv_targets_file_loads_unchanged(tmp_path):
    path = tmp_path / "targets.yaml"
    path.write_text(AGENTV_FILE, encoding="utf-8")
    azure, anthropic, gemini = load_targets(path, ENVIRON)
    assert isinstance(azure, AzureTarget)
    assert azure.endpoint_url() == "https://my-resource.openai.azure.com/openai"
    assert azure.deployment == "gpt-4o"
    assert azure.version == "2024-10-01-preview"
    assert azure.max_concurrency == 4
    assert azure.api_key.get_secret_value() == "azure-key-123456789"
    assert isinstance(anthropic, AnthropicTarget)
    assert anthropic.judge_target == "azure_base"
    assert anthropic.max_output_tokens == 2048
    assert isinstance(gemini, GeminiTarget)
    assert gemini.model == "gemini-2.5-flash"


def test_unset_variable_is_a_startup_error_naming_target_and_variable(tmp_path):
    path = tmp_path / "targets.yaml"
    path.write_text(AGENTV_FILE, encoding="utf-8")
    environ = {k: v for k, v in ENVIRON.items() if k != "GOOGLE_API_KEY"}
    with pytest.raises(TargetsFileError) as caught:
        load_targets(path, environ)
    assert (
        caught.value.detail == "target 'gemini': environment variable 'GOOGLE_API_KEY' is not set"
    )


def test_without_a_file_there_is_one_mock_default_target():
    [target] = load_targets(None, {})
    assert isinstance(target, MockTarget)
    assert target.name == "default"


def test_a_file_without_default_gets_the_mock_default(tmp_path):
    path = tmp_path / "targets.yaml"
    path.write_text("targets:\n  - {name: local, provider: openai, model: llama3, "
                    "base_url: 'http://localhost:11434/v1'}\n", encoding="utf-8")  # fmt: skip
    local, default = load_targets(path, {})
    assert isinstance(local, OpenAITarget)
    assert local.api_key is None
    assert isinstance(default, MockTarget)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("targets:\n  - {name: x, provider: openai}\n", "model: Field required"),
        ("targets: {}\n", "needs a 'targets:' list"),
        ("targets: [\n", "cannot be read"),
        ("targets:\n  - {name: x, provider: mock}\n  - {name: x, provider: mock}\n",
         "more than once: x"),
        ("targets:\n  - {name: x, provider: cli, command_template: ''}\n", "command_template"),
    ],
    ids=["missing-key", "not-a-list", "bad-yaml", "duplicate", "empty-cli"],
)  # fmt: skip
def test_bad_targets_files_fail_with_a_clear_message(tmp_path, content, message):
    path = tmp_path / "targets.yaml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(TargetsFileError) as caught:
        load_targets(path, {})
    assert message in caught.value.detail


def test_unknown_target_lists_the_known_ones(make_registry):
    registry = make_registry([{"name": "fast", "provider": "mock"}])
    with pytest.raises(UnknownTarget) as caught:
        registry.get("slow")
    assert caught.value.status == 422
    assert "'slow'" in caught.value.detail
    assert "default, fast" in caught.value.detail
    assert registry.names() == ["fast", "default"]


def test_describe_shows_no_secret_and_strips_url_credentials(make_registry):
    registry = make_registry([
        {"name": "gpt", "provider": "openai", "model": "m", "api_key": "${{ FAKE_KEY }}",
         "base_url": "https://user:pw@example.com/v1", "workers": 2},
    ])  # fmt: skip
    described = registry.describe()[0]
    text = described.model_dump_json()
    assert "sk-test" not in text
    assert "pw@" not in text
    assert described.base_url == "https://example.com/v1"
    assert described.max_concurrency == 2
    assert described.limits["judge"].limit == 2


def _inline_settings(**extra) -> Settings:
    return Settings(allow_inline_targets=True, **extra)


async def test_inline_targets_are_refused_unless_enabled():
    with pytest.raises(InlineTargetRefused, match="disabled"):
        await inline_target({"name": "x", "provider": "mock"}, Settings())


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/v1",
        "http://127.0.0.1:8000/v1",
        "http://localhost/v1",
        "http://metadata.google.internal/v1",
        "http://10.0.0.5/v1",
        "http://[::1]/v1",
        "http://[fe80::1]/v1",
        "ftp://example.com/v1",
        "https://user:secret@example.com/v1",
    ],
)
async def test_inline_targets_to_unsafe_addresses_are_refused(url):
    config = {"name": "x", "provider": "openai", "model": "m", "base_url": url}
    with pytest.raises(InlineTargetRefused):
        await inline_target(config, _inline_settings())


@pytest.mark.parametrize(
    "metadata", ["http://169.254.169.254/", "http://metadata.google.internal/", "http://[fe80::1]/"]
)
async def test_inline_targets_may_reach_private_addresses_when_allowed_but_never_metadata(
    metadata: str,
):
    config = {"name": "x", "provider": "openai", "model": "m", "base_url": "http://127.0.0.1/v1"}
    assert await inline_target(config, _inline_settings(inline_target_allow_private=True))
    with pytest.raises(InlineTargetRefused):
        await inline_target(
            {**config, "base_url": metadata}, _inline_settings(inline_target_allow_private=True)
        )


async def test_inline_targets_cannot_run_programs_or_read_the_environment():
    with pytest.raises(InlineTargetRefused, match="cli"):
        await inline_target({"name": "x", "provider": "cli", "command_template": "sh"},
                            _inline_settings())  # fmt: skip
    with pytest.raises(InlineTargetRefused, match="environment"):
        await inline_target({"name": "x", "provider": "openai", "model": "m",
                       "api_key": "${{ OPENAI_API_KEY }}"}, _inline_settings())  # fmt: skip


async def test_a_valid_inline_target_keeps_its_key_secret():
    checked = await inline_target(
        {"name": "x", "provider": "openai", "model": "m", "base_url": "https://127.0.0.1/v1",
         "api_key": "sk-inline-0123456789"}, _inline_settings(inline_target_allow_private=True),
    )  # fmt: skip
    target = checked.config
    assert "sk-inline" not in repr(target)
    assert "sk-inline" not in target.model_dump_json()


async def test_an_invalid_inline_url_is_named_without_its_credentials():
    config = {"name": "x", "provider": "openai", "model": "m",
              "base_url": "http://user:hunter2-secret@0177.0.0.1/v1"}  # fmt: skip
    with pytest.raises(InlineTargetRefused) as caught:
        await inline_target(config, _inline_settings(inline_target_allow_private=True))
    assert "0177.0.0.1" in caught.value.detail
    assert "hunter2" not in caught.value.detail

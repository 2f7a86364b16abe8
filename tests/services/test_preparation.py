"""``prepare_run``: one preparation for /evaluate and /runs; cases formatted once, as validated."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.errors import PayloadTooLarge
from app.providers.registry import ProviderRegistry
from app.schemas.evaluate import EvaluateRequest
from app.services.preparation import prepare_run
from app.settings import Settings
from app.settings.targets import CliTarget
from app.suites.files.resolve import FileSource
from app.suites.loader import check_suite

SUITE = {
    "evalcases": [
        {
            "id": "review",
            "expected_outcome": "Finds the bug",
            "input_messages": [
                {"role": "system", "content": [{"type": "file", "value": "a.instructions.md"}]},
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "value": "Review"},
                        {"type": "file", "value": "src/a.py"},
                    ],
                },
            ],
        }
    ]
}
FILES = {"a.instructions.md": "Be strict.", "src/a.py": "print(1)\n"}


def registry_for(tmp_path: Path) -> ProviderRegistry:
    agent = CliTarget(name="agent", provider="cli", command_template="cat {PROMPT_FILE}")
    return ProviderRegistry(Settings(data_dir=tmp_path, targets=[agent]))


def too_many(count: int, described: str) -> PayloadTooLarge:
    return PayloadTooLarge(f"{described} ({count})")


async def test_an_api_target_runs_exactly_the_prompt_validate_shows(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    request = EvaluateRequest(suite=SUITE, files=FILES)
    registry = registry_for(tmp_path)
    try:
        run = await prepare_run(request, settings, registry, max_cases=10, too_many=too_many)
    finally:
        await registry.aclose()
    report = await check_suite(SUITE, file_source=FileSource.from_settings(settings, FILES))

    assert run.plan.mode == "lm"
    assert [case.prompt for case in run.cases] == [case.prompt for case in report.cases]
    assert '<file path="src/a.py">' in run.cases[0].prompt.question


async def test_an_agent_target_gets_file_references(tmp_path: Path) -> None:
    request = EvaluateRequest(suite=SUITE, files=FILES, target="agent")
    registry = registry_for(tmp_path)
    try:
        run = await prepare_run(
            request, Settings(data_dir=tmp_path), registry, max_cases=10, too_many=too_many
        )
    finally:
        await registry.aclose()

    assert run.plan.mode == "agent"
    question = run.cases[0].prompt.question
    assert '<file: path="src/a.py">' in question
    assert "print(1)" not in question


async def test_a_suite_over_the_limit_gets_the_routes_own_error(tmp_path: Path) -> None:
    registry = registry_for(tmp_path)
    try:
        with pytest.raises(PayloadTooLarge, match="1 cases"):
            await prepare_run(
                EvaluateRequest(suite=SUITE, files=FILES),
                Settings(data_dir=tmp_path),
                registry,
                max_cases=0,
                too_many=too_many,
            )
    finally:
        await registry.aclose()

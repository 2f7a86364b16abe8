"""The compatibility figures: AgentV's own eval files through the suite reader, no grader lost."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.suites.workspaces.git_sources import GitSources
from scripts.agentv_compat import DEFAULT_FOLDERS, check_file, eval_files

pytestmark = pytest.mark.skipif(
    not DEFAULT_FOLDERS, reason="AgentV's sample eval files are not on this machine"
)


async def test_every_sample_eval_file_loads_or_is_refused_by_name_and_drops_no_grader() -> None:
    outcomes = [
        await check_file(folder, path) for folder in DEFAULT_FOLDERS for path in eval_files(folder)
    ]
    assert len(outcomes) > 50
    assert sum(outcome.dropped for outcome in outcomes) == 0
    for outcome in outcomes:
        assert outcome.loaded or outcome.errors, outcome.path
        assert outcome.dialect != "unknown" or "evals.json" in outcome.path, outcome.path


@pytest.mark.parametrize(
    "relative",
    [
        "2026-07-01/examples/features/default-graders/evals/dataset.eval.yaml",
        "2026-07-01/examples/features/trials/evals/dataset.eval.yaml",
        "2026-07-01/examples/features/multi-turn-conversation-live/evals/dataset.eval.yaml",
        "2026-07-01/examples/features/suite-level-input/evals/dataset.eval.yaml",
        "2026-07-01/examples/features/test-vars-templating/evals/dataset.eval.yaml",
        "2026-07-01/examples/features/external-datasets/evals/dataset.eval.yaml",
        "2026-07-08/examples/features/test-vars-templating/evals/suite.yaml",
        "2026-07-08/examples/features/assert/evals/suite.yaml",
        "2026-07-01/examples/features/rubric/evals/dataset.eval.yaml",
        "2026-07-01/examples/features/rubric/evals/operators.eval.yaml",
        "2026-07-08/examples/features/rubric/evals/suite.yaml",
        "2026-07-08/examples/features/rubric/evals/operators.eval.yaml",
        "2026-07-01/examples/features/code-grader-with-llm-calls/evals/contextual-precision.eval.yaml",
        "2026-07-01/examples/features/code-grader-with-llm-calls/evals/contextual-recall.eval.yaml",
        "2026-07-01/examples/features/file-changes/evals/dataset.eval.yaml",
        "2026-07-01/examples/features/tool-calls-template/evals/eval.yaml",
        "2026-07-01/examples/features/workspace-artifact/evals/eval.yaml",
        "2026-07-01/examples/features/input-files-shorthand/evals/dataset.eval.yaml",
    ],
)
async def test_feature_examples_of_each_generation_load(relative: str) -> None:
    folder = next(folder for folder in DEFAULT_FOLDERS if relative.startswith(folder.name))
    outcome = await check_file(folder, folder.parent / relative)
    assert outcome.loaded, outcome.errors
    assert outcome.dropped == 0


@pytest.mark.parametrize(
    "relative",
    [
        "2026-07-01/examples/features/repo-lifecycle/evals/dataset.eval.yaml",
        "2026-07-01/examples/features/repo-lifecycle/evals/pool-e2e.eval.yaml",
        "2026-07-01/examples/features/workspace-multi-repo/evals/dataset.eval.yaml",
        "2026-07-01/examples/features/workspace-setup-script/evals/dataset.eval.yaml",
        "2026-07-01/examples/features/workspace-shared-config/evals/accuracy/dataset.eval.yaml",
    ],
)
async def test_examples_that_clone_repositories_load_where_the_operator_allows_them(
    relative: str,
) -> None:
    folder = next(folder for folder in DEFAULT_FOLDERS if relative.startswith(folder.name))
    refused = await check_file(folder, folder.parent / relative)
    assert any("is not allowed: " in error for error in refused.errors), refused.errors
    allowed = GitSources.of({}, ["https://github.com/EntityProcess/"])
    outcome = await check_file(folder, folder.parent / relative, allowed)
    assert outcome.loaded, outcome.errors
    assert outcome.dropped == 0


def test_sample_folders_are_where_the_script_looks() -> None:
    assert all(isinstance(folder, Path) and folder.is_dir() for folder in DEFAULT_FOLDERS)


async def test_a_sample_whose_judge_prompt_program_is_not_there_is_refused_naming_it() -> None:
    relative = "2026-07-01/examples/features/prompt-template-sdk/evals/dataset.eval.yaml"
    folder = next(folder for folder in DEFAULT_FOLDERS if relative.startswith(folder.name))
    outcome = await check_file(folder, folder.parent / relative)
    assert not outcome.loaded
    assert any("custom-grader.ts' does not exist" in error for error in outcome.errors)

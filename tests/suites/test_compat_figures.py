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


JULY = Path("/work/shared/reference/agentv-2026/full/2026-07-08_58f316ca2")


@pytest.mark.skipif(not JULY.is_dir(), reason="AgentV's July-2026 repository files are not here")
@pytest.mark.parametrize(
    "relative",
    [
        "examples/contract/evals/repo-materialization.eval.yaml",  # a workdir its setup makes
        "examples/features/repo-lifecycle/evals/suite.yaml",
        "examples/showcase/bug-fix-benchmark/evals/bug-fixes.eval.yaml",
        "scripts/fixtures/promptfoo-export/host-environment.agentv.yaml",  # environment env
        "examples/features/readme-quickstart/evals/my-eval.eval.yaml",  # rubric_prompt
        "examples/features/agent-skills-evals/csv-analyzer.EVAL.yaml",  # agentv:agent-rules
        "examples/features/agent-skills-evals/multi-provider-skill-use.EVAL.yaml",
        "examples/features/tool-calls-template/evals/suite.yaml",
        "examples/features/env-interpolation/evals/suite.yaml",  # {{ env.X }}
        "examples/red-team/suites/llm02-insecure-output.eval.yaml",  # undefined {{ config }}
    ],
)
async def test_july_files_of_agentvs_repository_load_with_every_grader(relative: str) -> None:
    outcome = await check_file(JULY, JULY / relative)
    assert outcome.loaded, outcome.errors
    assert outcome.dropped == 0

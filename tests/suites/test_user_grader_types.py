"""User-defined grader types (AgentV's ``.agentv/assertions/<type>.ts``), issue 35: a type
named after such a file runs it as a code grader, the way AgentV 4.42.4 does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.evaluators.config import EvaluatorConfig
from app.suites.loader import check_suite
from tests.suites.helpers import check, source

STAND_IN = "console.log(JSON.stringify({ score: 1 }));\n"


async def graders_of(root: Path, graders: list[Any], *, enabled: bool = True) -> list[Any]:
    (root / "evals").mkdir(parents=True, exist_ok=True)
    suite = {"tests": [{"id": "a", "criteria": "x", "input": "Hi", "assertions": graders}]}
    (root / "evals" / "suite.yaml").write_text(json.dumps(suite))
    report = await check_suite(
        "evals/suite.yaml", file_source=source(roots=[root]), code_graders=enabled
    )
    if not report.valid:
        return [error.message for error in report.errors]
    assert report.suite is not None
    return list(report.suite.cases[0].all_graders())


def assertion(root: Path, folder: str, name: str) -> None:
    (root / folder).mkdir(parents=True, exist_ok=True)
    (root / folder / name).write_text(STAND_IN)


async def test_a_type_named_after_a_file_of_agentv_assertions_runs_that_file(
    tmp_path: Path,
) -> None:
    assertion(tmp_path, ".agentv/assertions", "word-count.ts")
    [grader] = await graders_of(tmp_path, [{"type": "word-count", "min": 3, "weight": 2}])
    assert isinstance(grader, EvaluatorConfig)
    assert grader.type == "code_judge"
    assert grader.name == "word-count"
    assert grader.weight == 2
    assert grader.command == ("bun", "run", "../.agentv/assertions/word-count.ts")
    assert grader.model_extra == {
        "config": {"min": 3}
    }  # nothing declared is dropped: the program gets it
    assert grader.cwd == str(tmp_path / "evals")


async def test_the_nearest_folder_wins_and_assertions_win_over_graders(tmp_path: Path) -> None:
    assertion(tmp_path, ".agentv/assertions", "tone.ts")
    assertion(tmp_path, "evals/.agentv/assertions", "tone.mjs")
    assertion(tmp_path, "evals/.agentv/graders", "style.js")
    assertion(tmp_path, ".agentv/assertions", "style.ts")
    tone, style = await graders_of(tmp_path, [{"type": "tone"}, {"type": "style"}])
    assert tone.command[-1] == ".agentv/assertions/tone.mjs"
    assert style.command[-1] == "../.agentv/assertions/style.ts"


async def test_a_built_in_type_wins_over_a_file_of_its_name(tmp_path: Path) -> None:
    assertion(tmp_path, ".agentv/assertions", "contains.ts")
    [grader] = await graders_of(tmp_path, [{"type": "contains", "value": "x"}])
    assert grader.type == "contains"


async def test_without_the_file_a_type_reads_as_before(tmp_path: Path) -> None:
    [grader] = await graders_of(tmp_path, [{"type": "word-count", "min": 1}])
    assert grader.type == "word_count"
    [message] = await graders_of(tmp_path, [{"type": "min-words"}])
    assert "unknown grader type 'min-words'" in message


async def test_a_user_defined_type_needs_code_graders_enabled(tmp_path: Path) -> None:
    assertion(tmp_path, ".agentv/assertions", "min-words.ts")
    [message] = await graders_of(tmp_path, [{"type": "min-words"}], enabled=False)
    assert "code graders" in message


async def test_a_suite_in_the_request_body_has_no_user_defined_types() -> None:
    files = {".agentv/assertions/min-words.ts": STAND_IN}
    case = {"id": "a", "criteria": "x", "input": "Hi", "assert": [{"type": "min-words"}]}
    suite = {"tests": [case]}
    report = await check(suite, files=files, code_graders=True)
    assert "unknown grader type 'min-words'" in str(report.errors)

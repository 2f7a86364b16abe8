"""Paths as AgentV reads them: ``/`` is the workspace root, parent folders are searched,
``../`` guideline paths are guidelines, and ``.agentv/config.yaml`` sets guideline patterns."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.suites.loader import SuiteReport, check_suite
from tests.suites.helpers import check, source

CASE = """\
tests:
  - id: a
    criteria: Uses the files
    input:
      - role: user
        content:
          - {{type: text, value: Read these.}}
{parts}
"""


def write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


async def suite_with_files(root: Path, suite: str, *files: str) -> SuiteReport:
    parts = "\n".join(f"          - {{type: file, value: {path}}}" for path in files)
    write(root, suite, CASE.format(parts=parts))
    return await check_suite(suite, file_source=source(roots=[root]))


async def test_a_leading_slash_means_the_workspace_root(tmp_path: Path) -> None:
    write(tmp_path, "shared/context.md", "root context")
    write(tmp_path, "examples/feature/evals/shared/context.md", "nearby context")
    report = await suite_with_files(tmp_path, "examples/feature/evals/s.yaml", "/shared/context.md")
    assert report.valid, report.errors
    assert report.files == {"/shared/context.md": "root context"}


async def test_a_file_is_searched_in_parent_folders_up_to_the_root(tmp_path: Path) -> None:
    write(tmp_path, "examples/data/sales.csv", "month,revenue")
    report = await suite_with_files(tmp_path, "examples/feature/evals/s.yaml", "data/sales.csv")
    assert report.valid, report.errors
    assert report.files == {"data/sales.csv": "month,revenue"}


async def test_the_nearest_folder_wins(tmp_path: Path) -> None:
    write(tmp_path, "a/b/notes.md", "near")
    write(tmp_path, "a/notes.md", "far")
    report = await suite_with_files(tmp_path, "a/b/s.yaml", "notes.md")
    assert report.files == {"notes.md": "near"}


async def test_parent_folder_search_never_leaves_the_root(tmp_path: Path) -> None:
    root = tmp_path / "root"
    write(tmp_path, "secret.md", "outside")
    report = await suite_with_files(root, "evals/s.yaml", "../../secret.md")
    assert not report.valid
    assert "leaves the workspace root" in report.errors[0].message


async def test_dot_dot_guideline_paths_are_guidelines(tmp_path: Path) -> None:
    write(tmp_path, "features/basic/evals/python.instructions.md", "Use type hints.")
    report = await suite_with_files(
        tmp_path, "features/jsonl/evals/s.yaml", "../../basic/evals/python.instructions.md"
    )
    assert report.valid, report.errors
    [case] = report.cases
    assert case.prompt.guideline_paths == ("../../basic/evals/python.instructions.md",)
    assert "<Attached: ../../basic/evals/python.instructions.md>" in case.prompt.question
    assert "Use type hints." in case.prompt.guidelines


async def test_agentv_config_guideline_patterns_apply_to_suites_under_it(tmp_path: Path) -> None:
    write(tmp_path, ".agentv/config.yaml", 'guideline_patterns: ["**/SKILL.md"]\n')
    write(tmp_path, "skills/csv/SKILL.md", "Weight by season.")
    write(tmp_path, "skills/csv/notes.instructions.md", "Not a guideline here.")
    report = await suite_with_files(
        tmp_path, "evals/deep/s.yaml", "/skills/csv/SKILL.md", "/skills/csv/notes.instructions.md"
    )
    assert report.valid, report.errors
    assert report.suite is not None
    assert report.suite.guideline_patterns == ("**/SKILL.md",)
    assert report.cases[0].prompt.guideline_paths == ("/skills/csv/SKILL.md",)


async def test_the_nearest_config_wins_and_the_suites_own_patterns_win_over_it(
    tmp_path: Path,
) -> None:
    write(tmp_path, ".agentv/config.yaml", 'guideline_patterns: ["**/ROOT.md"]\n')
    write(tmp_path, "evals/.agentv/config.yaml", 'guideline_patterns: ["**/NEAR.md"]\n')
    write(tmp_path, "evals/s.yaml", "tests: [{id: a, criteria: x, input: Hi}]\n")
    near = await check_suite("evals/s.yaml", file_source=source(roots=[tmp_path]))
    assert near.suite is not None
    assert near.suite.guideline_patterns == ("**/NEAR.md",)
    write(
        tmp_path,
        "evals/own.yaml",
        "guideline_patterns: ['*.md']\ntests: [{id: a, criteria: x, input: Hi}]\n",
    )
    own = await check_suite("evals/own.yaml", file_source=source(roots=[tmp_path]))
    assert own.suite is not None
    assert own.suite.guideline_patterns == ("*.md",)


async def test_a_config_with_bad_patterns_is_an_error_naming_it(tmp_path: Path) -> None:
    write(tmp_path, ".agentv/config.yaml", "guideline_patterns: '*.md'\n")
    write(tmp_path, "s.yaml", "tests: [{id: a, criteria: x, input: Hi}]\n")
    report = await check_suite("s.yaml", file_source=source(roots=[tmp_path]))
    assert ".agentv/config.yaml: guideline_patterns must be a list" in report.errors[0].message


async def test_an_inline_suite_uses_the_roots_config(tmp_path: Path) -> None:
    write(tmp_path, ".agentv/config.yaml", 'guideline_patterns: ["**/*.prompt.md"]\n')
    report = await check_suite(
        "tests: [{id: a, criteria: x, input: Hi}]\n", file_source=source(roots=[tmp_path])
    )
    assert report.suite is not None
    assert report.suite.guideline_patterns == ("**/*.prompt.md",)


@pytest.mark.parametrize("with_text", [True, False])
async def test_expected_file_parts_are_read_into_the_reference_answer(with_text: bool) -> None:
    parts = [{"type": "text", "value": "See the fix."}] if with_text else []
    expected_message = {
        "role": "assistant",
        "content": [*parts, {"type": "file", "value": "snippets/fix.md"}],
    }
    case = {
        "id": "a",
        "criteria": "Fixes it",
        "input": "Fix it.",
        "expected_output": [expected_message],
    }
    report = await check({"tests": [case]}, files={"snippets/fix.md": "  def f(): return 1  \n"})
    assert report.valid, report.errors
    assert report.suite is not None
    block = '<file path="snippets/fix.md">\ndef f(): return 1\n</file>'
    expected = f"See the fix.\n\n{block}" if with_text else block
    assert report.suite.cases[0].reference_answer == expected

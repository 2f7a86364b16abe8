"""promptfoo's TypeScript files (``javascript`` asserts, transforms) run under ``bun`` in the
sandbox, as AgentV's ``.ts`` user types do; a sandbox runtime without ``bun`` refuses them by
name.

``bun`` comes from the conformance harnesses' tools folder (``scripts/conformance/agentv``
installs it from npm) or the host's PATH; the tests that run it are skipped without one.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from app.evaluators.base import EvaluationContext
from app.evaluators.code.programs import ProgramRunner
from app.evaluators.registry import EVALUATORS
from app.evaluators.results import EvaluatorResult
from app.sandbox import Sandbox
from app.sandbox.sandbox import DEFAULT_RUNTIME, SANDBOX_PATH
from app.suites.loader import check_suite
from scripts.conformance.agentv.install import DEFAULT_FOLDER, tools_folder
from tests.evaluators.fakes import ScriptedTarget
from tests.suites.helpers import source

CHECKS_TS = """\
interface Context { vars: Record<string, string> }
export default (output: string, context: Context): boolean => output.includes(context.vars.word);
"""
NAMED_TS = """\
type Result = {pass: boolean; score: number; reason: string};
export const scored = async (output: string): Promise<Result> =>
  ({ pass: output.length > 3, score: 0.75, reason: `typed ${output.length}` });
export const shout = (output: string): string => output.toUpperCase();
"""


def bun_folder() -> Path | None:
    """The folder of a ``bun`` (the harness's tools, else the host's PATH)."""
    for candidate in (tools_folder(DEFAULT_FOLDER) / "bin" / "bun", shutil.which("bun")):
        if candidate is not None and Path(candidate).exists():
            return Path(candidate).parent
    return None


def with_bun(root: Path, folder: Path) -> ProgramRunner:
    """A runner whose sandbox shows ``folder`` (and where its ``bun`` links to) on its PATH."""
    real = (folder / "bun").resolve().parent
    runtime = (*DEFAULT_RUNTIME, str(folder), str(real))
    sandbox = Sandbox(runtime=runtime, path=f"{folder}:{SANDBOX_PATH}")
    return ProgramRunner(roots=(root,), sandbox=sandbox)


async def grade(
    root: Path, grader: dict[str, Any], answer: str, programs: ProgramRunner
) -> EvaluatorResult:
    suite = {
        "prompts": ["Say {{word}}"],
        "providers": ["t"],
        "tests": [{"vars": {"word": "hello"}, "assert": [grader]}],
    }
    (root / "evals").mkdir(exist_ok=True)
    (root / "evals" / "checks.ts").write_text(CHECKS_TS)
    (root / "evals" / "named.ts").write_text(NAMED_TS)
    (root / "evals" / "promptfooconfig.yaml").write_text(json.dumps(suite))
    report = await check_suite(
        "evals/promptfooconfig.yaml", file_source=source(roots=[root]), code_graders=True
    )
    assert report.suite is not None, report.errors
    case = report.suite.cases[0]
    context = EvaluationContext(
        case=case,
        question="Say hello",
        candidate_answer=answer,
        judge=ScriptedTarget(),
        judge_attempts=1,
        programs=programs,
    )
    return (await EVALUATORS.run(case.evaluators[0], context)).result


@pytest.mark.skipif(bun_folder() is None, reason="no bun (run scripts.conformance.agentv once)")
@pytest.mark.parametrize(
    ("grader", "answer", "passed", "score", "reason"),
    [
        ({"type": "javascript", "value": "file://checks.ts"}, "hello you", True, 1.0, "true"),
        ({"type": "javascript", "value": "file://checks.ts"}, "bye", False, 0.0, "false"),
        ({"type": "javascript", "value": "file://named.ts:scored"}, "long", True, 0.75, "typed 4"),
        (
            {"type": "equals", "value": "HI", "transform": "file://named.ts:shout"},
            "hi",
            True,
            1.0,
            "",
        ),
    ],
)
async def test_typescript_files_run_under_bun_in_the_sandbox(
    tmp_path: Path, grader: dict[str, Any], answer: str, passed: bool, score: float, reason: str
) -> None:
    folder = bun_folder()
    assert folder is not None
    result = await grade(tmp_path, grader, answer, with_bun(tmp_path, folder))
    assert (result.status, result.passed, result.score) == ("ok", passed, score), result
    assert reason in (result.reasoning or "")


async def test_a_sandbox_without_bun_refuses_a_typescript_file_by_name(tmp_path: Path) -> None:
    empty = Sandbox(path=str(tmp_path / "no-programs"))
    programs = ProgramRunner(roots=(tmp_path,), sandbox=empty)
    result = await grade(
        tmp_path, {"type": "javascript", "value": "file://checks.ts"}, "x", programs
    )
    assert result.status == "error"
    assert "'bun' was not found on the sandbox's PATH" in (result.reasoning or "")

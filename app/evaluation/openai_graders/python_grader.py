"""``python`` graders: ``grade(sample, item)`` run by the code graders' sandboxed runner.

The source is written into the runner's temporary folder next to a small driver that reads
``{"sample", "item"}`` from stdin and prints ``{"score"}``; the interpreter runs isolated
(``-I``: no environment variables, no user site), under the runner's time and output limits.
Only when the operator enables code graders (``EVAL_CODE_GRADERS``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from app.evaluation.openai_graders.checks import Graded
from app.evaluation.openai_graders.models import PythonGrader
from app.evaluation.openai_graders.scope import GraderProblem
from app.evaluators.code.programs import ProgramError, ProgramRunner

CODE_GRADERS_OFF = (
    "python graders run only when the operator enables code graders (EVAL_CODE_GRADERS=true); "
    "they are off on this service"
)
DRIVER = """\
import json, sys
sys.path.insert(0, ".")
from grader_source import grade
data = json.load(sys.stdin)
score = grade(data["sample"], data["item"])
print(json.dumps({"score": float(score)}))
"""


async def python_grader(
    grader: PythonGrader, scope: Mapping[str, Any], programs: ProgramRunner | None
) -> Graded:
    """The score ``grade`` returns; passes at ``pass_threshold`` (default 1).

    Raises:
        GraderProblem: Code graders are off, or the program failed or printed no score.
    """
    if programs is None:
        raise GraderProblem(CODE_GRADERS_OFF)
    stdin = json.dumps({"sample": scope["sample"], "item": scope["item"]}).encode()
    files = {"grader_source.py": grader.source, "grader_driver.py": DRIVER}
    try:
        result = await programs.run(["python3", "-I", "grader_driver.py"], stdin, files=files)
    except ProgramError as exc:
        raise GraderProblem(f"{grader.name}: {exc}") from None
    try:
        score = float(json.loads(result.stdout.strip().splitlines()[-1])["score"])
    except (ValueError, KeyError, IndexError, TypeError):
        raise GraderProblem(f"{grader.name}: grade() returned no number") from None
    if not math.isfinite(score):
        raise GraderProblem(f"{grader.name}: grade() returned {score}")
    threshold = 1.0 if grader.pass_threshold is None else grader.pass_threshold
    return Graded(score=score, passed=score >= threshold)

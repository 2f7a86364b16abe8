"""The AgentV differential harness on our own corpus (the fast subset CI runs, ~1-2 minutes).

AgentV 4.42.4 is installed from npm once into the git-ignored ``.conformance/`` folder (CI
has npm access; ``AGENTV_CONFORMANCE_DIR`` moves it). The harness fails on a difference
that ``known.py`` does not list, and on a listed one that no longer shows.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.conformance.agentv.compare import Difference, split
from scripts.conformance.agentv.install import ROOT, node_available
from scripts.conformance.agentv.known import DELIBERATE

DESIGN = ROOT / "docs" / "design.md"


@pytest.mark.skipif(not node_available(), reason="node and npm are needed to run AgentV")
def test_our_corpus_grades_as_agentv_grades_it_but_for_the_deliberate_differences() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "scripts.conformance.agentv", "--corpus", "own"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert "| per case: same pass / not-pass |" in done.stdout


def test_every_deliberate_difference_is_explained_in_the_design() -> None:
    design = DESIGN.read_text()
    for entry in DELIBERATE:
        assert f"`[{entry.reason}]`" in design, entry


def test_a_difference_is_unexplained_unless_listed_and_a_listed_one_that_agrees_is_idle() -> None:
    listed = next(entry for entry in DELIBERATE if entry.kind == "grader")
    covered = Difference(listed.suite.replace("*", "x"), "c", listed.kind, listed.detail)
    new = Difference("own/x.yaml", "c", "grader", "something else")
    verdict = Difference(covered.suite, "c", "verdict", "ours pass, AgentV fail")
    unexplained, idle = split([covered, verdict, new], DELIBERATE)
    assert unexplained == [new]
    assert listed not in idle
    unexplained, idle = split([], DELIBERATE)
    assert (unexplained, set(idle)) == ([], set(DELIBERATE))


def test_the_corpus_has_a_suite_per_grader_type_and_formatting_rule() -> None:
    corpus = Path(__file__).parent / "agentv"
    suites = {path.parent.parent.name for path in corpus.glob("*/evals/*.yaml")}
    assert len(suites) >= 10
    assert all(re.fullmatch(r"[a-z-]+", name) for name in suites)


def test_missing_programs_are_deliberate_only_where_bun_and_uv_are_not_shown_to_both_sides(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from scripts.conformance.agentv.__main__ import _with_tools
    from scripts.conformance.agentv.install import TOOLS_VARIABLE

    monkeypatch.delenv(TOOLS_VARIABLE, raising=False)
    assert any(entry.reason == "program-missing" for entry in _with_tools(DELIBERATE))
    monkeypatch.setenv(TOOLS_VARIABLE, "/somewhere/tools")
    kept = _with_tools(DELIBERATE)
    assert len(kept) == len(DELIBERATE) - 1
    assert all(entry.reason != "program-missing" for entry in kept)

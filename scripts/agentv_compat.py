"""Compatibility figures: every eval file of a folder through the suite reader.

For each eval file (AgentV's of 2025 and 2026, the prompts/providers/vars layout) prints
whether it loaded or was refused (with the construct each error names), then the totals:
loaded, refused, and graders dropped, which must be 0 (a grader declared in a file that
loaded but is missing from the suite model). The folder is the workspace root, so paths
with a leading ``/`` and parent-folder searches resolve as they do in AgentV's repository.

Usage: .venv/bin/python scripts/agentv_compat.py [FOLDER ...] [--verbose] [--git-remote PREFIX]
(default: the samples in /work/shared/reference/agentv-2026). ``--git-remote`` reads them
as a service whose operator allows cloning repositories under PREFIX (``EVAL_GIT_REMOTES``;
checking a suite clones nothing).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from app.evaluators.config import DEFAULT_EVALUATOR, EvaluatorConfig
from app.suites.dialects import as_suite
from app.suites.documents.document import parse_suite_text
from app.suites.documents.findings import Findings
from app.suites.files.resolve import FileSource
from app.suites.files.sources import load_sources
from app.suites.loader import SuiteReport, check_suite
from app.suites.prompts_vars.scenarios import scenario_tests
from app.suites.workspaces.git_sources import NO_REPOSITORIES, GitSources

DEFAULT_FOLDERS = sorted(Path("/work/shared/reference/agentv-2026").glob("20*"))
_LIST_KEYS = ("assertions", "assert", "evaluators")
_SKIP = re.compile(
    r"baseline|results|grader-scores|/cases/|/fixtures/|/workspace(-template)?/|\.agentv/"
)


def eval_files(root: Path) -> list[Path]:
    """The eval files under ``root``: suites, JSONL datasets and agent-skills evals.json.

    A YAML file counts under an ``evals/`` folder or with ``eval`` in its name, a JSONL
    file under ``evals/``; a file named as an eval (``*.eval.yaml``, ``EVAL.yaml``,
    ``*.agentv.yaml``) counts wherever it is, test fixtures and workspace templates
    included. A file another eval file reads as its part (``default_test: file://...``,
    ``scenarios: [file://...]``) is not an eval file of its own.
    """
    found: list[Path] = []
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        name = path.name.lower()
        named = name.endswith((".eval.yaml", ".eval.yml", ".agentv.yaml"))
        if not path.is_file() or (_SKIP.search(relative) and not named):
            continue
        in_evals = "/evals/" in f"/{relative}"
        if (
            named
            or (name.endswith((".yaml", ".yml")) and (in_evals or "eval" in name))
            or (name.endswith(".jsonl") and in_evals)
            or name.endswith("evals.json")
        ):
            found.append(path)
    parts = {part for path in found for part in _parts(path)}
    return [path for path in found if path.name not in ("cases.yaml",) and path not in parts]


def _parts(path: Path) -> set[Path]:
    """Files ``path`` reads as parts of itself: a ``default_test`` file, scenario files."""
    if path.suffix not in (".yaml", ".yml"):
        return set()
    try:
        document = yaml.safe_load(path.read_text())
    except (yaml.YAMLError, UnicodeDecodeError):
        return set()
    if not isinstance(document, dict):
        return set()
    references = [document.get("default_test"), document.get("defaultTest")]
    scenarios = document.get("scenarios")
    references += scenarios if isinstance(scenarios, list) else []
    found: set[Path] = set()
    for reference in references:
        if isinstance(reference, str) and reference.startswith("file://"):
            found.update(path.parent.glob(reference.removeprefix("file://")))
    return {part.resolve() for part in found} | set(found)


def _raw_count(graders: Any) -> int:
    """Graders a raw list declares: each mapping (and its children), all strings as one."""
    if not isinstance(graders, list):
        return 0
    count = 1 if any(isinstance(item, str) and item.strip() for item in graders) else 0
    for item in graders:
        if isinstance(item, dict):
            children = next((item[key] for key in _LIST_KEYS if key in item), None)
            count += 1 + _raw_count(children)
    return count


def _model_count(graders: tuple[EvaluatorConfig, ...]) -> int:
    return sum(1 + _model_count(grader.evaluators) for grader in graders)


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _declared(case: dict[str, Any], suite: dict[str, Any]) -> int:
    execution = _mapping(case.get("execution"))
    own = next((case[key] for key in _LIST_KEYS if key in case), execution.get("evaluators"))
    suite_execution = _mapping(suite.get("execution"))
    total = _raw_count(own) if own is not None else _raw_count(suite_execution.get("evaluators"))
    if not execution.get("skip_defaults"):
        total += _raw_count(suite.get("assertions", suite.get("assert")))
    defaults = suite.get("defaultTest", suite.get("default_test"))
    if isinstance(defaults, dict):
        total += _raw_count(defaults.get("assert"))
    turns = case.get("turns")
    for turn in turns if isinstance(turns, list) else []:
        turn_graders = _mapping(turn)
        total += _raw_count(turn_graders.get("assertions", turn_graders.get("assert")))
    return total + (1 if "rubrics" in case else 0)


async def _raw_cases(document: dict[str, Any], source: FileSource) -> list[dict[str, Any]]:
    sources = await load_sources(document, source, Findings(), source_name=None)
    raw: list[Any] = []
    for key in ("tests", "evalcases", "eval_cases"):
        listed = document.get(key)
        if isinstance(listed, list):
            for index, item in enumerate(listed):
                raw.extend(
                    [c for _, c in sources.cases[(key, index)]]
                    if (key, index) in sources.cases
                    else [item]
                )
        elif isinstance(listed, str):
            raw.extend(case for _, case in sources.cases.get((key,), []))
    for where, cases in sources.cases.items():
        if where[0] == "imports":
            raw.extend(case for _, case in cases)
    raw.extend(case for _, case in scenario_tests(document, sources, Findings()))
    return [case for case in raw if isinstance(case, dict)]


@dataclass
class Outcome:
    """One file's result."""

    path: str
    dialect: str
    loaded: bool
    errors: list[str] = field(default_factory=list)
    dropped: int = 0


async def check_file(root: Path, path: Path, git: GitSources = NO_REPOSITORIES) -> Outcome:
    """Read one eval file as a suite named by path under ``root``."""
    relative = path.relative_to(root).as_posix()
    source = FileSource(roots=[root], max_file_bytes=5_000_000, max_request_file_bytes=50_000_000)
    # As a service whose operator enabled code graders (EVAL_CODE_GRADERS=true) reads them.
    report: SuiteReport = await check_suite(
        relative, file_source=source, code_graders=True, git=git
    )
    outcome = Outcome(relative, report.dialect, report.valid)
    outcome.errors = [f"{error.path}: {error.message}" for error in report.errors]
    if report.valid and report.suite is not None:
        outcome.dropped = await _dropped(root, relative, report)
    return outcome


async def _dropped(root: Path, relative: str, report: SuiteReport) -> int:
    assert report.suite is not None
    document = as_suite(parse_suite_text((root / relative).read_text(), source_name=relative).data)
    suite_file = await FileSource(
        roots=[root], max_file_bytes=5_000_000, max_request_file_bytes=50_000_000
    ).open_suite(relative)
    source = FileSource(
        roots=[root], max_file_bytes=5_000_000, max_request_file_bytes=50_000_000
    ).for_suite(suite_file)
    declared = sum(_declared(case, document) for case in await _raw_cases(document, source))
    kept = sum(
        _model_count(tuple(g for g in case.all_graders() if g != DEFAULT_EVALUATOR))
        for case in report.suite.cases
    )
    return declared - kept  # several prompts are arms of one case, not copies of it


def construct(message: str) -> str:
    """The construct an error names, for grouping (its message without paths and values)."""
    text = message.split(": ", 1)[1] if ": " in message else message
    text = re.sub(r"'[^']*'", "'…'", text)
    return text[:110]


async def main(folders: list[Path], verbose: bool, remotes: list[str]) -> int:
    """Print every file's outcome and the totals; exit 1 if any grader was dropped."""
    outcomes: list[Outcome] = []
    git = GitSources.of({}, remotes)
    for folder in folders:
        for path in eval_files(folder):
            outcome = await check_file(folder, path, git)
            outcome.path = f"{folder.name}/{outcome.path}"
            outcomes.append(outcome)
            mark = "loaded " if outcome.loaded else "REFUSED"
            print(f"{mark} {outcome.dialect:24} {outcome.path}")
            if verbose or not outcome.loaded:
                for error in outcome.errors[: None if verbose else 3]:
                    print(f"          {error}")
    constructs = Counter(construct(error) for outcome in outcomes for error in outcome.errors)
    loaded = sum(outcome.loaded for outcome in outcomes)
    dropped = sum(outcome.dropped for outcome in outcomes)
    print(f"\n{len(outcomes)} eval files: {loaded} loaded, {len(outcomes) - loaded} refused")
    by_dialect = Counter((o.dialect, o.loaded) for o in outcomes)
    for (dialect, ok), count in sorted(by_dialect.items()):
        print(f"  {dialect:24} {'loaded' if ok else 'refused':8} {count}")
    print("refusals by construct (errors):")
    for text, count in constructs.most_common():
        print(f"  {count:4}  {text}")
    print(f"graders dropped: {dropped}")
    return 1 if dropped else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*", type=Path, default=DEFAULT_FOLDERS)
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--git-remote", action="append", default=[], dest="remotes")
    arguments = parser.parse_args()
    sys.exit(asyncio.run(main(arguments.folders, arguments.verbose, arguments.remotes)))

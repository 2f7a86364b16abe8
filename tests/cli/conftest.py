"""``evalx`` driven as a subprocess (the installed console script) against a real uvicorn.

- ``suite_file(name, cases)``: writes an AgentV suite of ``cases`` cases ``c0``, ``c1``...;
  case ``cN`` expects the four words ``wNa wNb wNc wNd``.
- Targets (mock, in ``EVAL_TARGETS_FILE``) answer each case with the first ``k`` of its
  words, so the mock judge's score is ``k / 4`` (4 words: passed, 3: borderline, less:
  failed): ``good`` (all four), ``mixed`` (every third case fails), ``base`` and
  ``regressed`` (a planted regression), ``slow`` (``good`` at 300 ms a call).
- ``service``: the service as a real uvicorn process on those targets; its URL.
- ``evalx(*args)``: runs the command, returns the finished process (text output).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from testkit.server import running_service

EVALX = str(Path(sys.executable).parent / "evalx")
CASES = 240
BASE = [3, 4] * 6 + [4] * (CASES - 12)
# c3 falls from every word to none; most of the first twelve lose one (test_viewer's plant).
REGRESSED = [2, 3, 2, 0, 2, 3, 2, 4, 3, 3, 2, 3] + [4] * (CASES - 12)


def words(index: int) -> list[str]:
    return [f"w{index}{letter}" for letter in "abcd"]


def answers(kept: list[int]) -> dict[str, str]:
    return {f"c{i}": " ".join(["Answer:", *words(i)[:k]]) for i, k in enumerate(kept)}


TARGETS = [
    {"name": "good", "provider": "mock", "answers": answers([4] * CASES)},
    {"name": "mixed", "provider": "mock", "answers": answers([2, 4, 4] * (CASES // 3))},
    {"name": "base", "provider": "mock", "answers": answers(BASE)},
    {"name": "regressed", "provider": "mock", "answers": answers(REGRESSED)},
    {"name": "slow", "provider": "mock", "answers": answers([4] * CASES), "latency_ms": 300},
]
SuiteFile = Callable[..., Path]
Evalx = Callable[..., subprocess.CompletedProcess[str]]


def suite(cases: int, dataset: str = "cli") -> dict[str, Any]:
    return {
        "dataset": dataset,
        "evalcases": [
            {
                "id": f"c{i}",
                "expected_outcome": " ".join(words(i)),
                "input_messages": [{"role": "user", "content": f"Question {i}?"}],
            }
            for i in range(cases)
        ],
    }


@pytest.fixture
def suite_file(tmp_path: Path) -> SuiteFile:
    def write(name: str = "suite.yaml", cases: int = 6) -> Path:
        path = tmp_path / "suites" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(suite(cases)), encoding="utf-8")
        return path

    return write


@pytest.fixture
def service_env(tmp_path: Path) -> dict[str, str]:
    targets = tmp_path / "targets.yaml"
    targets.write_text(yaml.safe_dump({"targets": TARGETS}), encoding="utf-8")
    return {
        "PATH": "/usr/bin:/bin",
        "EVAL_DATA_DIR": str(tmp_path / "data"),
        "EVAL_TARGETS_FILE": str(targets),
        "EVAL_SAMPLE_RUN": "false",
    }


@pytest.fixture
def service(service_env: dict[str, str]) -> Iterator[str]:
    with running_service(service_env) as (url, _):
        yield url


@pytest.fixture
def evalx(service_env: dict[str, str], tmp_path: Path) -> Evalx:
    """Run ``evalx`` with the service's environment (for ``--embedded``) in ``tmp_path``."""

    def run(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [EVALX, *args],
            cwd=tmp_path,
            env=service_env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    return run

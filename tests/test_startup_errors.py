"""Start-up with bad settings: one clear message per problem, not a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.settings import Settings

START = "import app.main; app.main.app"


def start(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """Build the default app (what `uvicorn app.main:app` does) in a fresh process."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("EVAL_")}  # noqa: TID251
    clean |= {"EVAL_DATA_DIR": str(tmp_path), "EVAL_SAMPLE_RUN": "false", **env}
    return subprocess.run(
        [sys.executable, "-c", START],
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_setting_that_is_not_valid_names_the_variable_without_a_traceback(tmp_path: Path) -> None:
    started = start(tmp_path, EVAL_MAX_BODY_BYTES="lots")

    assert started.returncode == 1
    assert "Traceback" not in started.stderr
    assert started.stderr.splitlines()[0] == "eval-execution cannot start: a setting is not valid"
    assert "EVAL_MAX_BODY_BYTES:" in started.stderr
    assert "lots" not in started.stderr  # values may be secrets: never echoed


def test_a_missing_variable_of_the_targets_file_names_target_and_variable(tmp_path: Path) -> None:
    targets = tmp_path / "targets.yaml"
    targets.write_text(
        "targets:\n  - name: mine\n    provider: openai\n    model: m\n"
        "    api_key: ${{ NOT_SET_ANYWHERE_KEY }}\n",
        encoding="utf-8",
    )

    started = start(tmp_path, EVAL_TARGETS_FILE=str(targets))

    assert started.returncode == 1
    assert "Traceback" not in started.stderr
    assert "'mine'" in started.stderr
    assert "NOT_SET_ANYWHERE_KEY" in started.stderr


@pytest.mark.parametrize("level", ["info", "Debug", "WARNING"])
def test_log_levels_are_read_in_any_case(level: str) -> None:
    assert Settings(log_level=level).log_level == level.upper()

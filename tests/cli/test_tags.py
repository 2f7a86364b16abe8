"""``evalx run --tag`` and ``--base-from tag:NAME``: CI compares with the newest run of a tag."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from app.cli.problems import EXIT_GATE_FAILED, EXIT_PASSED, EXIT_RUN_FAILED
from tests.cli.conftest import Evalx, SuiteFile, suite

pytestmark = pytest.mark.slow


def run_id(path: Path) -> str:
    found: str = json.loads(path.read_text())["run"]["id"]
    return found


def test_the_base_is_the_newest_completed_run_of_the_suite_carrying_the_tag(
    service: str, suite_file: SuiteFile, evalx: Evalx, tmp_path: Path
) -> None:
    path = str(suite_file(cases=12))
    other = tmp_path / "suites" / "other.yaml"
    other.write_text(yaml.safe_dump(suite(12, dataset="other")), encoding="utf-8")
    common = ["--server", service, "--min-pass-rate", "0"]

    old = evalx(
        "run", path, "--target", "regressed", "--tag", "main", *common, "--json", "old.json"
    )
    base = evalx("run", path, "--target", "base", "--tag", "main", "--tag", "sha:1a2b", *common,
                 "--json", "base.json")  # fmt: skip
    elsewhere = evalx("run", str(other), "--target", "good", "--tag", "main", *common)
    assert EXIT_PASSED == old.returncode == base.returncode == elsewhere.returncode, base.stderr
    base_id = run_id(tmp_path / "base.json")
    assert json.loads((tmp_path / "base.json").read_text())["run"]["tags"] == ["main", "sha:1a2b"]

    gate = ["--base-from", "tag:main", "--fail-on", "regression"]
    head = evalx("run", path, "--target", "regressed", "--tag", "pr-7", *common, *gate,
                 "--json", "head.json")  # fmt: skip
    assert head.returncode == EXIT_GATE_FAILED, head.stderr
    assert f"is significantly worse than {base_id}" in head.stdout
    head_id = run_id(tmp_path / "head.json")

    compared = evalx("compare", head_id, "--base-from", "tag:main", "--server", service,
                     "--json", "compare.json")  # fmt: skip
    assert compared.returncode == EXIT_PASSED, compared.stderr
    comparison = json.loads((tmp_path / "compare.json").read_text())
    assert (comparison["base"]["id"], comparison["head"]["id"]) == (base_id, head_id)

    # The head carrying the tag itself is not its own base: the run before it is.
    again = evalx("run", path, "--target", "base", "--tag", "main", *common,
                  "--base-from", "tag:main", "--json", "again.json")  # fmt: skip
    assert again.returncode == EXIT_PASSED, again.stderr
    again_id = run_id(tmp_path / "again.json")
    assert f"{again_id} is not significantly worse than {base_id}" in again.stdout
    assert json.loads((tmp_path / "again.json").read_text())["comparison"]["base"]["id"] == base_id


def test_a_tag_no_run_carries_exits_2_naming_it(
    service: str, suite_file: SuiteFile, evalx: Evalx
) -> None:
    path = str(suite_file(cases=3))
    first = evalx("run", path, "--server", service, "--target", "good", "--tag", "main")
    assert first.returncode == EXIT_PASSED, first.stderr
    head = evalx("run", path, "--server", service, "--target", "good",
                 "--base-from", "tag:release")  # fmt: skip
    missing = evalx("compare", "run_x", "--base-from", "nope.json", "--server", service)
    bad_tag = evalx("run", path, "--server", service, "--tag", "has space")
    assert head.returncode == EXIT_RUN_FAILED
    assert "no completed run of suite 'cli' carries the tag 'release'" in head.stderr
    assert missing.returncode == EXIT_RUN_FAILED
    assert "no such file" in missing.stderr
    assert bad_tag.returncode == EXIT_RUN_FAILED
    assert "tags[0]" in bad_tag.stderr

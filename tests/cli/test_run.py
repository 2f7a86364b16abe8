"""``evalx run`` against a real uvicorn process: progress, exit codes, interruption."""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import subprocess
from pathlib import Path

import httpx
import pytest

from app.cli.problems import EXIT_GATE_FAILED, EXIT_INTERRUPTED, EXIT_PASSED, EXIT_RUN_FAILED
from tests.cli.conftest import EVALX, Evalx, SuiteFile

pytestmark = pytest.mark.slow
PROGRESS = re.compile(r"^progress: (\d+)/(\d+) cases · pass rate ([\d.]+)% · errors (\d+) · ETA ")


def progress(stderr: str) -> list[tuple[int, int, float]]:
    found = [PROGRESS.match(line) for line in stderr.splitlines()]
    return [(int(m[1]), int(m[2]), float(m[3])) for m in found if m]


def test_progress_of_a_200_case_run(
    service: str, suite_file: SuiteFile, evalx: Evalx, tmp_path: Path
) -> None:
    path = suite_file("big.yaml", cases=200)
    result = evalx("run", str(path), "--server", service, "--target", "mixed",
                   "--min-pass-rate", "0.6", "--json", "out/run.json")  # fmt: skip
    assert result.returncode == EXIT_PASSED, result.stderr
    shown = progress(result.stderr)
    done = [d for d, _, _ in shown]
    # A line per tenth of the run at least, counting up to every case, out of 200.
    assert len(shown) >= 10
    assert done == sorted(done)
    assert done[-1] == 200
    assert {total for _, total, _ in shown} == {200}
    # Every third case fails: the pass rate so far ends at 133 of 200.
    assert shown[-1][2] == pytest.approx(66.5)
    assert "events: 200 cases received over 1 connection" in result.stderr
    report = json.loads((tmp_path / "out/run.json").read_text())
    assert report["run"]["status"] == "completed"
    assert [r["eval_id"] for r in report["records"]] == [f"c{i}" for i in range(200)]
    # The summary table and the verdict go to stdout.
    assert "PASS pass rate 66.5%" in result.stdout
    assert re.search(r"mixed\s*│\s*133\s*│\s*0\s*│\s*67\s*│", result.stdout)


def test_exit_codes_pass_fail_and_min_pass_rate(
    service: str, suite_file: SuiteFile, evalx: Evalx
) -> None:
    path = str(suite_file(cases=6))
    passed = evalx("run", path, "--server", service, "--target", "good")
    failed = evalx("run", path, "--server", service, "--target", "mixed")
    lenient = evalx("run", path, "--server", service, "--target", "mixed", "--min-pass-rate", "0.6")
    strict = evalx("run", path, "--server", service, "--target", "mixed", "--min-pass-rate", "0.7")
    assert passed.returncode == EXIT_PASSED, passed.stderr
    assert failed.returncode == EXIT_GATE_FAILED, failed.stderr
    assert "FAIL 2 of 6 cases did not pass" in failed.stdout
    assert lenient.returncode == EXIT_PASSED
    assert strict.returncode == EXIT_GATE_FAILED
    assert "pass rate 66.7% is below 70.0%" in strict.stdout


def test_a_refused_run_exits_2_with_the_problem(
    service: str, evalx: Evalx, suite_file: SuiteFile, tmp_path: Path
) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text(  # no outcome and no graders: refused (a missing file errs its case)
        "evalcases:\n  - id: a\n    input_messages:\n      - {role: user, content: Hi}\n"
    )
    refused = evalx("run", str(broken), "--server", service)
    unknown_target = evalx("run", str(suite_file()), "--server", service, "--target", "nowhere")
    unreachable = evalx("run", str(broken), "--server", "http://127.0.0.1:9")
    assert refused.returncode == EXIT_RUN_FAILED
    assert "Suite is not valid (HTTP 422)" in refused.stderr
    assert "expected_outcome" in refused.stderr
    assert unknown_target.returncode == EXIT_RUN_FAILED
    assert "nowhere" in unknown_target.stderr
    assert unreachable.returncode == EXIT_RUN_FAILED
    assert "cannot reach http://127.0.0.1:9" in unreachable.stderr


def test_a_local_suite_goes_with_the_files_it_references(
    service: str, evalx: Evalx, tmp_path: Path
) -> None:
    folder = tmp_path / "repo" / "evals"
    (folder / "docs").mkdir(parents=True)
    (tmp_path / "repo" / ".git").mkdir()
    (tmp_path / "repo" / "shared.instructions.md").write_text("Answer with w0a w0b w0c w0d.")
    (folder / "docs" / "policy.md").write_text("w0a w0b w0c w0d")
    (folder / "unrelated.md").write_text("never sent")
    (folder / "suite.yaml").write_text(
        "evalcases:\n  - id: c0\n    expected_outcome: w0a w0b w0c w0d\n    input_messages:\n"
        "      - role: user\n        content: [{type: file, value: docs/policy.md},"
        " {type: file, value: shared.instructions.md}]\n"
    )
    result = evalx("run", str(folder / "suite.yaml"), "--server", service, "--target", "good",
                   "--json", "run.json")  # fmt: skip
    assert result.returncode == EXIT_PASSED, result.stderr
    record = json.loads((tmp_path / "run.json").read_text())["records"][0]
    assert "w0a w0b w0c w0d" in record["raw_request"]["question"]
    assert record["raw_request"]["guideline_paths"] == ["shared.instructions.md"]
    assert "never sent" not in json.dumps(record)


def start_slow_run(
    path: Path, service: str, env: dict[str, str], stdin: int = subprocess.DEVNULL
) -> subprocess.Popen[str]:
    """``evalx run`` of 40 cases on the slow target, two at a time (about 6 s), started."""
    return subprocess.Popen(
        [EVALX, "run", str(path), "--server", service, "--target", "slow",
         "--max-concurrency", "2"],
        env=env, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def test_ctrl_c_cancels_the_run(service: str, suite_file: SuiteFile, service_env) -> None:
    path = suite_file(cases=40)
    process = start_slow_run(path, service, service_env)
    assert process.stderr is not None
    first = process.stderr.readline()
    run_id = re.match(r"run (run_\w+): 40 cases", first)
    assert run_id, first
    for line in process.stderr:  # wait until some cases are done
        if line.startswith("progress: "):
            break
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == EXIT_INTERRUPTED, stderr
    assert f"cancelled run {run_id[1]}" in stderr
    run = httpx.get(f"{service}/runs/{run_id[1]}").json()
    assert run["status"] == "cancelled"
    assert 0 < run["progress"]["done"] < 40


def test_a_run_cancelled_elsewhere_exits_2(
    service: str, suite_file: SuiteFile, service_env
) -> None:
    path = suite_file(cases=40)
    process = start_slow_run(path, service, service_env)
    assert process.stderr is not None
    run_id = re.match(r"run (run_\w+): ", process.stderr.readline())
    assert run_id
    httpx.post(f"{service}/runs/{run_id[1]}/cancel").raise_for_status()
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == EXIT_RUN_FAILED, stderr
    assert f"FAIL run {run_id[1]} ended cancelled" in stdout


def test_ctrl_c_on_a_terminal_asks_before_cancelling(
    service: str, suite_file: SuiteFile, service_env
) -> None:
    path = suite_file(cases=40)
    controller, terminal = pty.openpty()
    process = start_slow_run(path, service, service_env, stdin=terminal)
    os.close(terminal)
    try:
        assert process.stderr is not None
        run_id = re.match(r"run (run_\w+): ", process.stderr.readline())
        assert run_id
        for line in process.stderr:
            if line.startswith("progress: "):
                break
        process.send_signal(signal.SIGINT)
        asked = ""
        while "[y/n]" not in asked:
            asked += process.stderr.read(1)
        assert f"Cancel run {run_id[1]} on the server?" in asked
        os.write(controller, b"n\n")
        _, stderr = process.communicate(timeout=60)
    finally:
        os.close(controller)
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == EXIT_INTERRUPTED, stderr
    assert f"run {run_id[1]} keeps running on {service}" in stderr
    # Declined: the run goes on on the server.
    run = httpx.get(f"{service}/runs/{run_id[1]}").json()
    assert run["status"] in ("queued", "running")
    httpx.post(f"{service}/runs/{run_id[1]}/cancel").raise_for_status()

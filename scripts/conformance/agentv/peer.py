"""AgentV's side: its CLI on one suite file, one case at a time, results read back."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

from scripts.conformance.agentv.fake import Logged, LoggingFake
from scripts.conformance.agentv.model import CaseRun, GraderRun, SuiteRun

KEY = "sk-agentv"
TARGET_NAMES = (
    *("default", "grader", "llm", "agent", "azure", "openai", "judge", "mock"),
    # AgentV's examples name agent programs; here the fake LLM answers for them too
    *("mock_agent", "local_cli", "batch_cli", "mock_extractor", "mock_csv_agent"),
    *("mock_latency_agent", "mock_metrics_agent", "static_trace", "copilot-log"),
    "copilot_grader",
)
_TIMEOUT_SECONDS = 180


def targets_file(folder: Path) -> Path:
    """A targets file where every name the corpus uses is the fake LLM (OpenAI wire)."""
    lines = ["targets:"]
    for name in TARGET_NAMES:
        lines += [
            f"  - name: {name}",
            "    provider: openai",
            "    base_url: ${{ CONFORMANCE_LLM_URL }}",
            "    api_key: ${{ CONFORMANCE_LLM_KEY }}",
            "    model: ${{ CONFORMANCE_LLM_MODEL }}",
        ]
        if name != "grader":
            lines.append("    grader_target: grader")
    path = folder / "targets.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _epoch(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def _verdict(row: dict[str, Any]) -> str:
    status = row.get("execution_status")
    return {"ok": "pass", "quality_failure": "fail"}.get(str(status), "error")


def _graders(row: dict[str, Any]) -> list[GraderRun]:
    return [
        GraderRun(
            name=str(item.get("name")),
            type=str(item.get("type")),
            score=item.get("score"),
            passed=item.get("verdict") == "pass",
        )
        for item in row.get("scores") or []
        if isinstance(item, dict)
    ]


def _last_user_text(messages: list[dict[str, Any]]) -> str | None:
    users = [m for m in messages if m.get("role") == "user"]
    return str(users[-1].get("content")) if users else None


def _transcript_input(folder: Path, row: dict[str, Any]) -> str | None:
    """The last user turn AgentV recorded for a test (its transcript), if any."""
    transcript = folder / str(row.get("transcript_path", ""))
    if not transcript.is_file():
        return None
    lines = [json.loads(line) for line in transcript.read_text().splitlines() if line.strip()]
    lines.sort(key=lambda line: int(line.get("message_index", 0)))
    return _last_user_text(lines)


def read_results(index: Path, log: list[Logged]) -> dict[str, CaseRun]:
    """Cases of an ``index.jsonl``, each with the requests logged while it ran.

    Cases ran one after another (one worker): a case's requests are those logged from its
    start to the next case's start, except its candidate call, found by the last user turn
    its transcript records (under load a call can be logged before its case's start time).
    """
    rows = [json.loads(line) for line in index.read_text().splitlines() if line.strip()]
    rows.sort(key=lambda row: str(row.get("start_time", "")))
    starts = [_epoch(str(row["start_time"])) - 0.005 for row in rows if "start_time" in row]
    candidates = [entry for entry in log if not entry.judge]
    judges = [entry for entry in log if entry.judge]
    inputs = {_transcript_input(index.parent, row) for row in rows}
    answered = {  # a judge grading an answer only one case got (the fake echoes the input)
        id(entry): entry.answer() for entry in judges if entry.answer() in inputs
    }
    cases: dict[str, CaseRun] = {}
    for position, row in enumerate(rows):
        begin = starts[position] if position < len(starts) else float("inf")
        end = starts[position + 1] if position + 1 < len(starts) else float("inf")
        wanted = _transcript_input(index.parent, row)
        requests = [
            entry
            for entry in judges
            if (
                answered.get(id(entry)) == wanted
                if id(entry) in answered
                else begin <= entry.at < end
            )
        ]
        own = next(
            (e for e in candidates if wanted is not None and _last_user_text(e.messages) == wanted),
            None,
        )
        if own is None:
            own = next((e for e in candidates if begin <= e.at < end), None)
        if own is not None:
            candidates.remove(own)
            requests.insert(0, own)
        graders = _graders(row)
        if not graders and _verdict(row) != "error":
            # The default judge ran: AgentV lists no grader for it, the case's score is its.
            passed = _verdict(row) == "pass"
            graders = [GraderRun("llm_judge", "llm-grader", row.get("score"), passed)]
        case = CaseRun(
            case_id=str(row.get("test_id")),
            verdict=_verdict(row),
            score=row.get("score"),
            graders=graders,
            requests=requests,
            error=row.get("error"),
        )
        cases[case.case_id] = case
    return cases


def _cache_file(cwd: Path) -> Path | None:
    """AgentV's ``.agentv/cache.json`` (its last run's folder) that a run would add in ``cwd``.

    None when one is there already; the suites are read in place and must stay as they are.
    """
    cache = cwd / ".agentv" / "cache.json"
    return None if cache.exists() else cache


def _forget(cache: Path | None) -> None:
    if cache is not None:
        cache.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            cache.parent.rmdir()  # only when AgentV made the folder for it


def run_suite(cli: Path, suite: Path, cwd: Path, fake: LoggingFake) -> SuiteRun:
    """Run AgentV on one suite file against the fake LLM."""
    with tempfile.TemporaryDirectory(prefix="agentv-conformance-") as scratch:
        folder = Path(scratch)
        env = dict(
            os.environ,
            CONFORMANCE_LLM_URL=f"{fake.url}/v1",
            CONFORMANCE_LLM_KEY=KEY,
            CONFORMANCE_LLM_MODEL="fake-model",
        )
        command = [
            str(cli), "eval", "run", str(suite), "--targets", str(targets_file(folder)),
            "--target", "default", "--output", str(folder / "out"), "--workers", "1",
            "--no-cache", "--threshold", "0.8",
        ]  # fmt: skip
        fake.take()
        cache = _cache_file(cwd)
        try:
            done = subprocess.run(
                command, cwd=cwd, env=env, capture_output=True, text=True,
                timeout=_TIMEOUT_SECONDS, check=False,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            return SuiteRun(refused=f"AgentV ran over {_TIMEOUT_SECONDS} s")
        finally:
            _forget(cache)
        log = fake.take(KEY)
        index = folder / "out" / "index.jsonl"
        if not index.is_file():
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            return SuiteRun(refused=" | ".join(tail) or f"exit {done.returncode}")
        return SuiteRun(cases=read_results(index, log))

"""The CLI agent provider: argv without a shell, clean environment, timeout and kill."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from app.providers.errors import ProviderError, ProviderTimeout
from tests.providers.conftest import request_for

SCRIPT = textwrap.dedent(
    """
    import json, os, sys, time
    prompt_file, output_file, eval_id, mode = sys.argv[1:5]
    pid_file = os.environ.get("PID_FILE")
    if pid_file:
        open(pid_file, "w").write(str(os.getpid()))
    question = open(prompt_file, encoding="utf-8").read()
    if mode == "file":
        open(output_file, "w", encoding="utf-8").write("FILE: " + question)
        print("ignored stdout")
    elif mode == "stdout":
        print("STDOUT: " + question)
    elif mode == "report":
        print(json.dumps({"argv": sys.argv[1:], "env": sorted(os.environ), "cwd": os.getcwd()}))
    elif mode == "fail":
        print("model exploded", file=sys.stderr)
        sys.exit(3)
    elif mode == "sleep":
        time.sleep(30)
    """
)


def cli_target(tmp_path: Path, mode: str, **extra: Any) -> dict[str, Any]:
    script = tmp_path / "agent.py"
    script.write_text(SCRIPT, encoding="utf-8")
    command = (
        f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} "
        f"{{PROMPT_FILE}} {{OUTPUT_FILE}} {{EVAL_ID}} {mode}"
    )
    return {"name": "agent", "provider": "cli", "command_template": command, **extra}


def process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_answer_comes_from_the_output_file_when_written(tmp_path, make_registry):
    registry = make_registry([cli_target(tmp_path, "file")])
    runtime = registry.get("agent")
    assert runtime.kind == "agent"
    reply = await runtime.complete(request_for(question='Fix the bug in <file: path="a.py">'))
    assert reply.text == 'FILE: Fix the bug in <file: path="a.py">'
    assert reply.raw == {"source": "output_file", "exit_code": 0}


async def test_answer_comes_from_stdout_otherwise(tmp_path, make_registry):
    registry = make_registry([cli_target(tmp_path, "stdout")])
    reply = await registry.get("agent").complete(request_for(question="Hi"))
    assert reply.text == "STDOUT: Hi"


async def test_request_data_stays_one_argument_and_the_environment_is_clean(
    tmp_path, make_registry, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak")
    registry = make_registry([cli_target(tmp_path, "report", env={"AGENT_MODE": "test"})])
    case_id = "c1; rm -rf / $(whoami)"
    reply = await registry.get("agent").complete(request_for(case_id=case_id))
    report = json.loads(reply.text)
    assert report["argv"][2] == case_id
    assert len(report["argv"]) == 4
    assert set(report["env"]) <= {"PATH", "HOME", "LANG", "AGENT_MODE", "LC_CTYPE"}
    assert "OPENAI_API_KEY" not in report["env"]


async def test_a_failing_command_reports_stderr_and_exit_code_once(tmp_path, make_registry):
    registry = make_registry([cli_target(tmp_path, "fail")])
    with pytest.raises(ProviderError) as caught:
        await registry.get("agent").complete(request_for())
    assert "model exploded" in caught.value.detail
    assert "exit code 3" in caught.value.detail
    assert not caught.value.retryable


async def test_timeout_kills_the_process(tmp_path, make_registry):
    pid_file = tmp_path / "pid"
    target = cli_target(tmp_path, "sleep", timeout_seconds=0.5, env={"PID_FILE": str(pid_file)})
    registry = make_registry([target])
    with pytest.raises(ProviderTimeout) as caught:
        await registry.get("agent").complete(request_for())
    assert "timed out after 0.5s" in caught.value.detail
    assert process_gone(int(pid_file.read_text()))


async def test_cancelling_the_caller_kills_the_process(tmp_path, make_registry):
    pid_file = tmp_path / "pid"
    registry = make_registry([cli_target(tmp_path, "sleep", env={"PID_FILE": str(pid_file)})])
    task = asyncio.create_task(registry.get("agent").complete(request_for()))
    for _ in range(500):
        if pid_file.exists() and pid_file.read_text():
            break
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert process_gone(int(pid_file.read_text()))


def test_preview_shows_argv_with_placeholders_and_the_prompt(tmp_path, make_registry):
    registry = make_registry([cli_target(tmp_path, "file")])
    preview = registry.preview(["agent"], request_for(question="Q?", case_id="c7"))["agent"]
    assert preview.body["argv"][2:] == ["<prompt file>", "<output file>", "c7", "file"]
    assert preview.body["prompt"] == "Q?"


REPORTER = textwrap.dedent(
    """
    import json, sys
    args = sys.argv[1:]
    out = args[args.index("--output") + 1]
    files = [(path, open(path).read()) for flag, path in zip(args, args[1:]) if flag == "--file"]
    open(out, "w").write(json.dumps({"args": args, "files": files}))
    """
)


async def test_agentv_command_fills_prompt_files_and_output_file(tmp_path, make_registry):
    script = tmp_path / "reporter.py"
    script.write_text(REPORTER, encoding="utf-8")
    command = (
        f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} "
        "--prompt {PROMPT} {FILES} --output {OUTPUT_FILE} --id {EVAL_ID}"
    )
    registry = make_registry(
        [{"name": "agent", "provider": "cli", "command": command, "files_format": "--file {path}"}]
    )
    question = 'Read <file: path="a.md"> and write to {OUTPUT_FILE}'
    request = request_for(question=question, case_id="c-{ATTEMPT}").model_copy(
        update={"attachments": (("a.md", "A text"), ("../../etc/b.md", "B text"))}
    )
    reply = json.loads((await registry.get("agent").complete(request)).text)
    args = reply["args"]
    assert args[:2] == ["--prompt", question]
    assert args[2] == "--file"
    assert args[4] == "--file"
    assert args[3].endswith("/files/a.md")
    assert args[5].endswith("/files/etc/b.md")
    assert args[6] == "--output"
    assert args[8:] == ["--id", "c-{ATTEMPT}"]
    assert [text for _, text in reply["files"]] == ["A text", "B text"]


def test_files_placeholder_inside_an_argument_joins_the_files():
    from app.providers.adapters.cli import command_argv

    argv = command_argv(
        ["run", "--files={FILES}", "{FILES}", "{GUIDELINES}", "{ATTEMPT}"],
        prompt_file="p",
        output_file="o",
        eval_id="e",
        guidelines="G {PROMPT}",
        attempt=2,
        files=["/w/a b.md", "/w/c.md"],
        files_format="-f {path}",
    )
    assert argv == [
        "run",
        "--files=-f /w/a b.md -f /w/c.md",
        "-f",
        "/w/a b.md",
        "-f",
        "/w/c.md",
        "G {PROMPT}",
        "2",
    ]

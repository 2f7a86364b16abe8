"""The agent provider: runs an operator-defined program per call.

Only the targets file defines the command (``command_template`` or AgentV's ``command``);
requests never do. The template is split with ``shlex`` at load time and run without a shell;
placeholders are replaced inside argv items, so request data can never become shell syntax:
``{PROMPT}`` (the question), ``{PROMPT_FILE}`` (a file holding it), ``{GUIDELINES}``,
``{OUTPUT_FILE}``, ``{EVAL_ID}``, ``{ATTEMPT}`` and ``{FILES}``: the case's attached files,
written into the run's folder, each formatted by the target's ``files_format`` (``--file
{path}``); an argv item that is exactly ``{FILES}`` becomes those arguments. The answer is the
output file if the program wrote one, else its stdout; a JSON object in AgentV's output
format (``agent_output``) also reports tool calls, tokens, cost and duration. The program
runs in the case's workspace when the suite has one, else in the target's ``cwd``, else in
a fresh temporary folder, with a clean environment
(``PATH``, ``HOME``, ``LANG`` and the target's own ``env``), and its whole process group is
killed on timeout or when the caller is cancelled.
"""

from __future__ import annotations

import posixpath
import re
import shlex
import shutil
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from app.providers.base import ProviderKind, ProviderRequest, ProviderResponse
from app.providers.errors import ProviderError, ProviderReplyTooLarge, ProviderTimeout, redact
from app.providers.messages.agent_output import parse_agent_output
from app.providers.preview import ProviderPreview
from app.sandbox.folders import new_folder
from app.sandbox.process import OutputTooLarge, run_command
from app.settings.targets import CliTarget

PROMPT_FILE = "{PROMPT_FILE}"
OUTPUT_FILE = "{OUTPUT_FILE}"
EVAL_ID = "{EVAL_ID}"
FILES = "{FILES}"
_STDERR_TAIL = 2000
DEFAULT_MAX_OUTPUT_BYTES = 16 * 1024 * 1024
"""Most bytes a program may write to stdout (or stderr, or its output file) by default."""
_PLACEHOLDER = re.compile(
    r"\{(?:PROMPT_FILE|OUTPUT_FILE|EVAL_ID|PROMPT|GUIDELINES|ATTEMPT|FILES)\}"
)


def command_argv(
    template: list[str],
    *,
    prompt_file: str,
    output_file: str,
    eval_id: str,
    prompt: str = "",
    guidelines: str = "",
    attempt: int = 0,
    files: Sequence[str] = (),
    files_format: str = "{path}",
) -> list[str]:
    """The argv with placeholders filled in.

    Each item stays one argument, except an item that is exactly ``{FILES}``: it becomes
    the formatted file arguments.
    """
    file_args = [
        argument.replace("{path}", path) for path in files for argument in shlex.split(files_format)
    ]
    values = {
        PROMPT_FILE: prompt_file,
        OUTPUT_FILE: output_file,
        EVAL_ID: eval_id,
        "{PROMPT}": prompt,
        "{GUIDELINES}": guidelines,
        "{ATTEMPT}": str(attempt),
        FILES: " ".join(file_args),
    }
    argv: list[str] = []
    for item in template:
        if item == FILES:
            argv.extend(file_args)
        else:  # one pass: a filled-in value is never read for placeholders again
            argv.append(_PLACEHOLDER.sub(lambda found: values[found.group(0)], item))
    return argv


def attachment_path(folder: Path, written: str, index: int) -> Path:
    """Where an attached file is written for the program: under ``folder``, never outside."""
    parts = posixpath.normpath(written.replace("\\", "/")).split("/")
    safe = [part for part in parts if part not in ("", ".", "..")]
    return folder.joinpath(*safe) if safe else folder / f"file-{index + 1}"


def clean_environment(path: str, home: str, extra: Mapping[str, str]) -> dict[str, str]:
    """The only variables the program sees."""
    return {"PATH": path, "HOME": home, "LANG": "C.UTF-8", **extra}


class CliAdapter:
    """One operator-defined command, run once per call."""

    kind: ProviderKind = "agent"

    def __init__(
        self, target: CliTarget, *, path: str, max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES
    ) -> None:
        self.target = target
        self._max_output = max_output_bytes
        self.name = target.name
        self._argv = target.argv()
        self._path = path
        self._secrets = target.secret_values()

    def preview(self, request: ProviderRequest) -> ProviderPreview:
        """The argv (placeholders named) and the prompt file's content."""
        argv = command_argv(
            self._argv,
            prompt_file="<prompt file>",
            output_file="<output file>",
            eval_id=request.case_id or "",
            prompt=request.question,
            guidelines=request.guidelines,
            attempt=request.attempt,
            files=[f"<file {path}>" for path, _ in request.attachments],
            files_format=self.target.files_format,
        )
        body = {"argv": [redact(item, self._secrets) for item in argv], "prompt": request.question}
        return ProviderPreview(body=body, rewrites=[])

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """Run the command on the question; kill it on timeout or cancellation."""
        workdir = new_folder("cli")
        try:
            return await self._run(request, workdir)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    async def _run(self, request: ProviderRequest, workdir: Path) -> ProviderResponse:
        prompt_file = workdir / "prompt.md"
        output_file = workdir / "answer.txt"
        prompt_file.write_text(request.question, encoding="utf-8")
        files: list[str] = []
        for index, (written, text) in enumerate(request.attachments):
            path = attachment_path(workdir / "files", written, index)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            files.append(str(path))
        argv = command_argv(
            self._argv,
            prompt_file=str(prompt_file),
            output_file=str(output_file),
            eval_id=request.case_id or "",
            prompt=request.question,
            guidelines=request.guidelines,
            attempt=request.attempt,
            files=files,
            files_format=self.target.files_format,
        )
        started = time.perf_counter()
        try:
            exited = await run_command(
                argv,
                b"",
                cwd=Path(request.workspace or self.target.cwd or workdir),
                env=clean_environment(self._path, str(workdir), self.target.env),
                timeout_seconds=self.target.timeout_seconds,
                max_output_bytes=self._max_output,
            )
        except TimeoutError:
            raise ProviderTimeout(
                f"target {self.name!r}: CLI provider timed out after "
                f"{self.target.timeout_seconds:g}s",
                target=self.name,
                retryable=False,
            ) from None
        except OutputTooLarge as exc:
            raise ProviderReplyTooLarge(
                f"target {self.name!r}: the program wrote more than {self._max_output} bytes "
                f"to {exc.stream} (EVAL_CLI_MAX_OUTPUT_BYTES)",
                target=self.name,
            ) from None
        return self._response(exited.code, exited.stdout, exited.stderr, output_file, started)

    def _response(
        self, code: int | None, stdout: bytes, stderr: bytes, output_file: Path, started: float
    ) -> ProviderResponse:
        if code != 0:
            message = (stderr or stdout).decode("utf-8", "replace").strip()[-_STDERR_TAIL:]
            raise ProviderError(
                f"target {self.name!r}: {redact(message, self._secrets)} (exit code {code})",
                target=self.name,
            )
        size = output_file.stat().st_size if output_file.is_file() else 0
        if size > self._max_output:
            raise ProviderReplyTooLarge(
                f"target {self.name!r}: its output file holds more than {self._max_output} "
                "bytes (EVAL_CLI_MAX_OUTPUT_BYTES)",
                target=self.name,
            )
        if size > 0:
            text = output_file.read_text(encoding="utf-8", errors="replace")
            source = "output_file"
        else:
            text = stdout.decode("utf-8", "replace")
            source = "stdout"
        latency_ms = (time.perf_counter() - started) * 1000
        raw = {"source": source, "exit_code": code}
        reported = parse_agent_output(text)
        if reported is None:
            return ProviderResponse(
                text=text.strip(), latency_ms=latency_ms, finish_reason="exit", raw=raw
            )
        return ProviderResponse(
            text=reported.text.strip(),
            usage=reported.usage,
            latency_ms=latency_ms,
            finish_reason="exit",
            raw={**raw, "format": "agent-json"},
            tool_calls=reported.tool_calls,
            content=reported.content,
            cost_usd=reported.cost_usd,
            llm_calls=reported.llm_calls,
            duration_ms=reported.duration_ms,
        )

    async def aclose(self) -> None:
        """Nothing long-lived to release."""

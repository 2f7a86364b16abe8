"""promptfoo's ``python`` and ``ruby`` asserts and ``javascript`` files, run in the sandbox.

The code sees ``output`` (the answer) and ``context`` (``vars``, ``prompt``, ``test``,
``config``), as in promptfoo. Inline Python of one line is an expression; more lines are the
body of a function that ``return``s (``json`` imported for both). ``file://check.py`` calls
``get_assert(output, context)`` of that file of the suite's folder, ``file://check.py:name``
calls ``name``; ``file://check.js`` calls what the module exports (a function, or its
``name`` with ``:name``) with ``node`` (a TypeScript file with ``bun``), awaited when it
returns a promise; when it throws
(or exports no such function) the grader is an error, as promptfoo reports the test.
Inline JavaScript runs in the embedded engine instead (``javascript``); Ruby (inline, or
``file://check.rb[:name]``, ``get_assert`` by default) with ``ruby`` (``ruby``). A
``javascript`` file's result reads as a ``javascript`` assert's does (a boolean, a number, a
grading result ``{pass, score, reason}``); a ``python`` or ``ruby`` assert's as promptfoo reads
it, more strictly (``script_results``). An exception, a timeout or a refusal of the sandbox
fails the grader with the error as its reason; a sandbox whose runtime lacks the interpreter
(``ruby``, ``bun``) makes it an error naming the program. Only when the operator enables code
graders and the suite was read from a workspace root (``app.suites.graders.programs`` places
it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.evaluators.base import EvaluationContext, EvaluatorOutcome
from app.evaluators.code import ruby
from app.evaluators.code.code_judge import placed_program
from app.evaluators.code.javascript import (
    JavascriptEvaluator,
    scored_outcome,
    script_context,
    script_output,
    verdict_outcome,
)
from app.evaluators.code.programs import ProgramError, ProgramNotFound, ProgramRunner
from app.evaluators.code.script_results import script_verdict
from app.evaluators.config import EvaluatorConfig

FILE_PREFIX = "file://"
SOURCE_FILE = "promptfoo_assert_source.py"
MARK = "\x1epromptfoo-assert-result:"
"""Starts the driver's last line: what the assert printed itself comes before it."""
PYTHON_DRIVER = f"""\
import importlib.util, json, os, sys
data = json.load(sys.stdin)
path = sys.argv[1]
sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
try:
    spec = importlib.util.spec_from_file_location("promptfoo_assert", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = getattr(module, data["function"] or "get_assert")(*data["args"])
    if isinstance(result, dict) and "pass_" in result and "pass" not in result:
        result["pass"] = result.pop("pass_")
except BaseException as error:
    result = {{"__threw": f"{{type(error).__name__}}: {{error}}"}}
if result is None:
    result = {{"__undefined": True}}
sys.stdout.write("\\n{MARK}" + json.dumps(result, default=str))
"""
NODE_DRIVER = f"""\
const {{ pathToFileURL }} = require("node:url");
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {{ input += chunk; }});
process.stdin.on("end", async () => {{
  const data = JSON.parse(input);
  let result;
  try {{
    const loaded = await import(pathToFileURL(process.argv[2]).href);
    const module = loaded.default !== undefined ? loaded.default : loaded;
    const named = data.function;
    const fallback = typeof module === "function" ? module : module[data.fallback];
    const grade = named ? module[named] : fallback;
    if (typeof grade !== "function") {{
      throw new Error(`the file exports no function ${{named || ""}}`);
    }}
    result = await grade(...data.args);
  }} catch (error) {{
    result = {{ __threw: String(error && error.message !== undefined ? error.message : error) }};
  }}
  if (result === undefined || result === null) result = {{ __undefined: true }};
  process.stdout.write("\\n{MARK}" + JSON.stringify(result));
}});
"""


@dataclass(frozen=True)
class Language:
    """How one language's assert runs: its interpreter and driver."""

    name: str
    argv: tuple[str, ...]
    driver_file: str
    driver: str
    env: tuple[tuple[str, str], ...] = ()
    throw_fails: bool = False
    """Whether code that throws fails its assert (Python, Ruby) rather than erring its test."""


PYTHON = Language(
    "the Python assert",
    ("python3", "-I"),
    "promptfoo_assert_driver.py",
    PYTHON_DRIVER,
    throw_fails=True,
)
RUBY = Language("the Ruby assert", ("ruby",), ruby.DRIVER_FILE, ruby.driver(MARK), throw_fails=True)
"""Ruby runs as Debian's ``ruby`` in the sandbox, with the driver of ``ruby``; a sandbox
runtime without it refuses the assert by name (``ProgramNotFound``), an error rather than a
failed assert."""
NODE = Language(
    "the JavaScript file",
    ("node",),
    "promptfoo_assert_driver.cjs",
    NODE_DRIVER,
    # the sandbox shows no /etc/ssl: node would stop at start reading OpenSSL's configuration
    env=(("OPENSSL_CONF", "/dev/null"),),
)
BUN = Language(
    "the TypeScript file",
    ("bun",),
    "promptfoo_assert_driver.cjs",
    NODE_DRIVER,
)
"""TypeScript runs under ``bun`` (node 20 has no type stripping), as AgentV's ``.ts`` user
types and hooks run here: the same driver loads the module. A sandbox runtime without
``bun`` refuses the program by name (``ProgramRunner``: not found on the sandbox's PATH)."""
TYPESCRIPT = (".ts", ".mts", ".cts", ".tsx")
_INDENT = re.compile(r"^[ \t]+(?=\S)", re.MULTILINE)


def inline_source(code: str) -> str:
    """The module promptfoo makes of inline code: ``main(output, context)`` (see the module)."""
    if "\n" not in code.strip():
        return f"import json\n\ndef main(output, context):\n    return {code.strip()}\n"
    found = _INDENT.search(code)
    indent = found.group(0) if found else "    "
    body = "\n".join(f"{indent}{line}" for line in code.rstrip().split("\n"))
    return f"import json\n\ndef main(output, context):\n{body}\n"


INLINE: dict[str, tuple[Language, str, Callable[[str], str]]] = {
    "python": (PYTHON, SOURCE_FILE, inline_source),
    "ruby": (RUBY, ruby.SOURCE_FILE, ruby.inline_source),
}
"""Assert types whose inline code runs in the sandbox: its language, the file it is written
to and how the program is made of it. promptfoo reads their results strictly
(``script_results``)."""


def file_reference(code: str) -> tuple[str, str] | None:
    """``(file, function)`` of a ``file://path[:function]`` value ('' for the default)."""
    stripped = code.strip()
    if not stripped.startswith(FILE_PREFIX):
        return None
    file, _, function = stripped[len(FILE_PREFIX) :].partition(":")
    return file, function


def read_result(stdout: str, what: str) -> Any:
    """What the function returned, from the driver's last line."""
    _, found, tail = stdout.rpartition(MARK)
    if not found:
        return {"__threw": f"{what} printed no result"}
    try:
        return json.loads(tail)
    except ValueError:
        return {"__threw": f"{what}'s result is not JSON"}


def needs_program_folder(config: EvaluatorConfig) -> bool:
    """Whether a grader runs a program file: an assert's (``runs_program``), or a transform's."""
    return runs_program(config) or any(file_reference(item) for item in config.transforms)


def runs_program(config: EvaluatorConfig) -> bool:
    """Whether a grader is an assert that runs a program (``python``, ``ruby``, a JS file)."""
    if config.type in INLINE:
        return True
    code = config.value if isinstance(config.value, str) else ""
    return config.type == "javascript" and file_reference(code) is not None


class ProgramAssertEvaluator:
    """Runs a ``python`` or ``ruby`` assert, or a ``javascript`` assert's file, in the sandbox.

    Inline JavaScript goes to the embedded engine (``inline``).
    """

    def __init__(self, inline: JavascriptEvaluator) -> None:
        self.inline = inline

    async def evaluate(
        self, config: EvaluatorConfig, context: EvaluationContext
    ) -> EvaluatorOutcome:
        """The code's verdict on the answer (its errors fail the grader, as in promptfoo)."""
        if not runs_program(config):
            return await self.inline.evaluate(config, context)
        code = config.value if isinstance(config.value, str) else ""
        reference = file_reference(code)
        sources: dict[str, str] = {}
        if reference is None:  # inline Python or Ruby (inline JavaScript runs in the engine)
            language, source_file, make = INLINE[config.type]
            reference = (source_file, "main")
            sources[source_file] = make(code)
        elif config.type == "python":
            language = PYTHON
        else:  # a Ruby assert may name a Python or JavaScript file, and the other way round
            language = language_of(reference[0])
        output = script_output(config, context)
        result = await run_function(config, context, language, reference, output, sources)
        threw = isinstance(result, dict) and "__threw" in result
        if threw and (not language.throw_fails or result.get("__missing")):
            # JavaScript: promptfoo reports the test as an error, not the assert as failed
            # (measured); a missing interpreter is refused by name whatever the language
            raise ProgramError(f"{language.name} threw: {result['__threw']}")
        if config.type in INLINE:
            return verdict_outcome(config, *script_verdict(config, result, language.name))
        return scored_outcome(config, result, language.name)


def language_of(file: str) -> Language:
    """The language a ``file://`` program is run with, by its name."""
    if file.endswith(".py"):
        return PYTHON
    if file.endswith(".rb"):
        return RUBY
    return BUN if file.endswith(TYPESCRIPT) else NODE


async def run_function(
    config: EvaluatorConfig,
    context: EvaluationContext,
    language: Language,
    reference: tuple[str, str],
    output: Any,
    sources: dict[str, str] | None = None,
) -> Any:
    """What ``function`` of a file returned for ``(output, context)``, or ``{__threw}``.

    The file is the suite folder's, or one of ``sources``; it runs in the sandbox.
    """
    try:
        programs, folder = placed_program(config, context)
    except ProgramError as exc:
        return {"__threw": str(exc)}
    arguments = (output, script_context(config, context))
    return await call_function(programs, folder, language, reference, arguments, sources)


async def call_function(
    programs: ProgramRunner,
    folder: Path,
    language: Language,
    reference: tuple[str, str],
    arguments: tuple[Any, ...],
    sources: dict[str, str] | None = None,
    fallback: str = "",
) -> Any:
    """What ``function`` of ``reference``'s file (in ``folder``) returned for ``arguments``.

    A JavaScript module without ``function`` named: its default export, else ``fallback``.
    ``{__threw: why}`` when it threw or could not run in the sandbox (with ``__missing`` when
    the sandbox has no such interpreter).
    """
    file, function = reference
    files = {language.driver_file: language.driver, **(sources or {})}
    stdin = {"function": function, "args": list(arguments), "fallback": fallback}
    try:
        ran = await programs.run(
            [*language.argv, language.driver_file, file],
            json.dumps(stdin, ensure_ascii=False, default=str).encode(),
            folder=folder,
            files=files,
            env=dict(language.env),
        )
        return read_result(ran.stdout, language.name)
    except ProgramNotFound as exc:  # the sandbox's runtime lacks the interpreter
        return {"__threw": str(exc), "__missing": True}
    except ProgramError as exc:
        return {"__threw": str(exc)}

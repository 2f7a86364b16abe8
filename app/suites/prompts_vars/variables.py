"""promptfoo's variables: ``file://`` values read from files, and list values expanded.

A variable ``file://x.txt`` (``.md``, ``.json``, ``.csv``...) is that file's text without its
final line break, ``.yaml``/``.yml`` its value (YAML 1.2 core): measured on promptfoo 0.123.1,
which keeps a JSON file as text (``{{ data.name }}`` is empty there) and reads YAML. The
files are read with the suite's other files (``files.sources.var_file_references``); a PDF is
its text, as promptfoo extracts it (``files.pdf_text``). A program
(``file://x.py``, ``.js``) or another binary file is refused by name; a glob is the list of the
files it matches (so one test per file). A test whose
variables (its own over ``defaultTest``'s) hold lists of plain values becomes one test per
combination, the first list varying slowest, as promptfoo expands them (a list of mappings,
such as messages or ``_conversation``, is a value).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.errors import DocumentError
from app.evaluators.code.javascript import call_source
from app.evaluators.code.js_engine import JsError, run_script_waiting
from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import Findings
from app.suites.documents.parsing import parse_core_yaml
from app.suites.files.listing import is_pattern
from app.suites.files.sources import FILE_PREFIX, VAR_FILE_REFUSED, strip_file_prefix
from app.suites.prompts_vars.program_vars import program_file, programs_allowed
from app.suites.templates import TemplateProblem, TemplateSyntaxProblem, render

MAX_EXPANDED = 1000
"""Most tests one test's list variables may expand into."""
_SCALARS = (str, int, float, bool)


@dataclass(frozen=True)
class VarFiles:
    """The files variables name: texts by path, and the files each glob matched."""

    texts: Mapping[str, str]
    globs: Mapping[str, list[str]]


def loaded_variables(
    variables: Any, path: DocumentPath, files: VarFiles, findings: Findings
) -> Any:
    """``variables`` with each ``file://`` value read (problems recorded at the variable)."""
    if not isinstance(variables, dict):
        return variables
    return {key: _loaded(value, (*path, key), files, findings) for key, value in variables.items()}


def _loaded(value: Any, path: DocumentPath, files: VarFiles, findings: Findings) -> Any:
    if not isinstance(value, str) or not value.strip().startswith(FILE_PREFIX):
        return value
    file = strip_file_prefix(value)
    if is_pattern(file):  # each file it matches (one test per file), as promptfoo reads it
        matched = files.globs.get(file, [])
        return [_loaded(f"{FILE_PREFIX}{name}", path, files, findings) for name in matched] or value
    if program_file(value) is not None and programs_allowed():  # run per prompt: program_vars
        return value
    if file.lower().endswith(VAR_FILE_REFUSED):
        findings.error(
            path,
            f"{value.strip()!r} is not supported: a variable's file is read as text; a program "
            "(promptfoo runs it to make the value) runs only with code graders enabled, for a "
            "suite file under a workspace root, and a binary file (audio, video, office) is "
            "not read; a PDF is read as its text, an image as a data: URI",
        )
        return value
    text = files.texts.get(file)
    if text is None:  # not read: the loader has said why, at this place
        return value
    if file.lower().endswith((".yaml", ".yml")):
        try:
            return parse_core_yaml(text)[1]
        except DocumentError as exc:
            findings.error(path, f"file {file!r}: {exc.detail}")
            return value
    return text.rstrip("\r\n")


def missing_var_files(variables: Mapping[str, Any], missing: frozenset[str]) -> tuple[str, ...]:
    """The files found nowhere that ``file://`` values of ``variables`` name, sorted.

    promptfoo 0.123.1 stops the whole eval at such a file ("No files found for variable");
    here the tests that use it run as errors naming it and the others run (docs/design.md).
    """
    named = (
        strip_file_prefix(value)
        for value in variables.values()
        if isinstance(value, str) and value.strip().startswith(FILE_PREFIX)
    )
    return tuple(sorted({path for path in named if path in missing}))


VARS_TIMEOUT_MS = 500
"""Longest a ``transformVars`` script may run for one test."""


def read_transform_vars(options: Any, path: DocumentPath, findings: Findings) -> str | None:
    """``options.transformVars``: inline JavaScript (a file is refused by name), or None."""
    if not isinstance(options, dict) or options.get("transformVars") is None:
        return None
    code = options["transformVars"]
    where = (*path, "transformVars")
    if not isinstance(code, str) or not code.strip():
        findings.error(where, "must be JavaScript code returning the variables")
        return None
    if code.strip().startswith(FILE_PREFIX):
        findings.error(where, f"{code.strip()!r}: a transformVars file is not supported yet")
        return None
    return code


def transformed_vars(
    code: str, variables: Mapping[str, Any], path: DocumentPath, findings: Findings
) -> dict[str, Any] | None:
    """The variables ``code`` (``transformVars``) returns for ``variables``; None: an error.

    It runs in the embedded JavaScript engine (``vars`` and an empty ``context``, one line an
    expression, more lines a function body), within ``VARS_TIMEOUT_MS``.
    """
    source = call_source(code, {"vars": dict(variables), "context": {}})
    try:
        result = run_script_waiting(source, timeout_ms=VARS_TIMEOUT_MS, what="transformVars")
    except JsError as exc:
        findings.error(path, str(exc))
        return None
    value = result.get("value") if isinstance(result, dict) else None
    if not isinstance(value, dict):
        findings.error(path, f"transformVars must return the variables (an object), not {value!r}")
        return None
    return value


def expanded_tests(
    raw: Any, inherited: Mapping[str, Any], path: DocumentPath, findings: Findings
) -> list[Any]:
    """The tests one test stands for: one per combination of its list variables."""
    own = raw.get("vars") if isinstance(raw, dict) else None
    if not isinstance(own, dict):
        return [raw]
    merged = {**inherited, **own}
    keys = [key for key, value in merged.items() if _is_list(value)]
    if not keys:
        return [raw]
    count = 1
    for key in keys:
        count *= len(merged[key])
    if count > MAX_EXPANDED:
        findings.error(
            (*path, "vars"),
            f"its list variables make {count} tests, more than {MAX_EXPANDED}: split the test",
        )
        return []
    combinations = itertools.product(*(merged[key] for key in keys))
    return [
        {**raw, "vars": {**own, **dict(zip(keys, values, strict=True))}} for values in combinations
    ]


def _is_list(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(item, _SCALARS) for item in value)
    )


def broken_block(variables: Mapping[str, Any]) -> str | None:
    """Why a test cannot run: a variable whose ``{% ... %}`` block does not parse (None: none).

    promptfoo 0.123.1 errs such a test, where a variable with a broken ``{{ ... }}`` (a wiki's
    ``{{tq | ...}}``) is kept as its text (measured: tests/conformance/promptfoo/
    var_not_template.yaml); the reader keeps both as text, and this makes the first an error.
    """
    for name, value in variables.items():
        if not isinstance(value, str) or "{%" not in value:
            continue
        try:
            render(value, {}, lenient=True)
        except TemplateSyntaxProblem as exc:
            return f"variable {name!r} is not a valid template: {exc}"
        except TemplateProblem:
            continue
    return None

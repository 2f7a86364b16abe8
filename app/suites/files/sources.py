"""What a suite reads from other files before its cases can be read.

Case sources (``tests: cases.jsonl``, ``tests: [file://cases/*.yaml]``, a folder of
``case.yaml`` folders, ``imports.tests``), prompt files of the prompts/providers/vars
layout, a ``defaultTest`` file, a workspace file, ``PROMPT.md`` task prompts, and the
``guideline_patterns`` of the nearest ``.agentv/config.yaml``. Every path is read through
the request's ``FileSource`` (inline files, then the workspace roots, with its refusals and
caps); a problem is an error at the place of the suite that names the file.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.errors import DocumentError, FileRefused
from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import Findings, describe
from app.suites.documents.parsing import parse_yaml
from app.suites.files.case_files import CaseFileError, parse_case_file
from app.suites.files.image_data import is_image
from app.suites.files.listing import CASE_FOLDER_FILES, is_pattern
from app.suites.files.pdf_text import is_pdf
from app.suites.files.resolve import FileSource
from app.suites.workspaces.workspace import workspace_reference

FILE_PREFIX = "file://"
PROMPT_MD = "PROMPT.md"
CONFIG_FILE = ".agentv/config.yaml"
USER_TYPE_FOLDERS = (".agentv/assertions", ".agentv/graders", ".agentv/judges")
"""Where AgentV finds user-defined grader types, in its order of precedence."""
USER_TYPE_SUFFIXES = (".ts", ".js", ".mts", ".mjs")
CaseList = list[tuple[DocumentPath, Any]]


@dataclass
class Sources:
    """Everything read from other files, for the dialect readers.

    Attributes:
        cases: Cases read from files, by the place of the suite that names them (each case
            with its own location, the file's path as one part of it).
        texts: Prompt and ``defaultTest`` files, by the path as the suite wrote it.
        globs: The files each prompt glob (``file://prompt*.txt``) matches, sorted.
        config_patterns: ``guideline_patterns`` of the nearest ``.agentv/config.yaml``.
        source_name: The suite file's name when the suite was named by path.
        sibling_prompt: The text of a ``PROMPT.md`` beside the suite, read only when a test
            has no ``input`` and names no ``PROMPT.md`` (AgentV's task prompt fallback).
        grader_types: User-defined grader types (``.agentv/assertions/<type>.ts``): type
            name -> its file, relative to the suite's folder (``graders.user_types``).
        missing_vars: ``file://`` variable files found nowhere: the tests that use them run
            as errors naming them, the others run (a warning at each place, not an error).
    """

    cases: dict[DocumentPath, CaseList] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    globs: dict[str, list[str]] = field(default_factory=dict)
    config_patterns: tuple[str, ...] | None = None
    source_name: str | None = None
    sibling_prompt: str | None = None
    grader_types: dict[str, str] = field(default_factory=dict)
    missing_vars: set[str] = field(default_factory=set)


def strip_file_prefix(reference: str) -> str:
    """A reference without ``file://``."""
    return reference.strip().removeprefix(FILE_PREFIX)


def case_references(document: Mapping[str, Any]) -> dict[DocumentPath, str]:
    """Where the suite names files of cases, and the reference written there."""
    found: dict[DocumentPath, str] = {}
    for key in ("tests", "evalcases", "eval_cases", "scenarios"):
        listed = document.get(key)
        if isinstance(listed, str):
            found[(key,)] = listed
        elif isinstance(listed, list):
            for index, item in enumerate(listed):
                if isinstance(item, str) and item.strip().startswith(FILE_PREFIX):
                    found[(key, index)] = item
    imports = document.get("imports")
    tests = imports.get("tests") if isinstance(imports, dict) else None
    for index, item in enumerate(tests if isinstance(tests, list) else []):
        reference = item.get("path") if isinstance(item, dict) else item
        if isinstance(reference, str):
            found[("imports", "tests", index)] = reference
    return found


PROMPT_PROGRAMS = (".py", ".js", ".cjs", ".mjs", ".ts", ".mts", ".cts", ".tsx")
"""A prompt file of one of these kinds is a program promptfoo runs, not a text."""


def text_references(document: Mapping[str, Any]) -> dict[DocumentPath, str]:
    """Files read as text: prompts and ``defaultTest`` files, a workspace file."""
    found: dict[DocumentPath, str] = {}
    prompts = document.get("prompts")
    for index, item in enumerate(prompts if isinstance(prompts, list) else [prompts]):
        where: DocumentPath = ("prompts", index) if isinstance(prompts, list) else ("prompts",)
        if isinstance(item, str) and item.strip().startswith(FILE_PREFIX):
            found[where] = strip_file_prefix(item)
        elif isinstance(item, dict) and isinstance(item.get("file"), str):
            found[(*where, "file")] = strip_file_prefix(item["file"])
        elif isinstance(item, dict) and str(item.get("id", "")).strip().startswith("file://"):
            found[(*where, "id")] = strip_file_prefix(str(item["id"]))
    for key in ("default_test", "defaultTest"):
        value = document.get(key)
        if isinstance(value, str):
            found[(key,)] = strip_file_prefix(value)
    workspace = workspace_reference(document)
    if workspace is not None:
        found[("workspace",)] = workspace
    found.update(prompt_md_references(document))
    found.update(tool_file_references(document))
    found.update(rubric_prompt_references(document))
    for where in [where for where, path in found.items() if where[0] == "prompts"]:
        if found[where].split(":", 1)[0].lower().endswith(PROMPT_PROGRAMS):
            del found[where]  # a prompt made by a program runs (prompts_vars.program_vars)
    return found


def rubric_prompt_references(document: Mapping[str, Any]) -> dict[DocumentPath, str]:
    """``file://`` rubricPrompts: of ``options`` and of asserts (``defaultTest``'s, tests')."""
    places: list[tuple[DocumentPath, Any]] = [(("defaultTest",), document.get("defaultTest"))]
    tests = document.get("tests")
    places += [(("tests", i), t) for i, t in enumerate(tests if isinstance(tests, list) else [])]
    found: dict[DocumentPath, str] = {}
    for where, place in places:
        if not isinstance(place, dict):
            continue
        holders: list[tuple[DocumentPath, Any]] = [((*where, "options"), place.get("options"))]
        asserts = place.get("assert")
        for index, item in enumerate(asserts if isinstance(asserts, list) else []):
            holders.append(((*where, "assert", index), item))
        for holder, value in holders:
            prompt = value.get("rubricPrompt") if isinstance(value, dict) else None
            if isinstance(prompt, str) and prompt.strip().startswith(FILE_PREFIX):
                found[(*holder, "rubricPrompt")] = strip_file_prefix(prompt)
    return found


VAR_FILE_REFUSED = (
    *(".py", ".js", ".mjs", ".cjs", ".ts", ".mts", ".sh", ".rb"),
    *(".mp3", ".wav", ".mp4"),
    *(".docx", ".xlsx", ".pptx", ".zip"),
)
"""Files a ``file://`` variable is not read from: programs (promptfoo runs them to make the
value) and binary files (which it sends encoded); every other file is read as text, a PDF
as its text (``pdf_text``), an image as a ``data:`` URI (``image_data``)."""


def var_file_references(
    document: Mapping[str, Any], cases: Mapping[DocumentPath, CaseList]
) -> dict[DocumentPath, str]:
    """``file://`` values of variables (the suite's, ``defaultTest``'s, each test's).

    Files read as text, and globs (each file they match); a program or a binary file
    (``VAR_FILE_REFUSED``) is refused by the reader.
    """
    places: list[tuple[DocumentPath, Any]] = [((), document)]
    default = document.get("defaultTest", document.get("default_test"))
    places.append((("defaultTest",), default))
    tests = document.get("tests")
    places += [(("tests", i), t) for i, t in enumerate(tests if isinstance(tests, list) else [])]
    places += [case for listed in cases.values() for case in listed]
    found: dict[DocumentPath, str] = {}
    for where, place in places:
        variables = place.get("vars") if isinstance(place, dict) else None
        for key, value in variables.items() if isinstance(variables, dict) else ():
            if isinstance(value, str) and value.strip().startswith(FILE_PREFIX):
                path = strip_file_prefix(value)
                if not path.lower().endswith(VAR_FILE_REFUSED) or is_pattern(path):
                    found[(*where, "vars", key)] = path
    return found


TOOL_FILE_KEYS = (
    *("tools", "tool_results", "tool_mocks", "response_format", "responseSchema", "functions"),
)
"""Keys whose `file://` value is read as tools (Gemini's `responseSchema` is a response format,
OpenAI's legacy `functions` are tools)."""


def tool_file_references(document: Mapping[str, Any]) -> dict[DocumentPath, str]:
    """Tool declaration and mock tool files named by the suite, its tests or its provider."""
    places: list[tuple[DocumentPath, Any]] = [((), document)]
    tests = document.get("tests")
    places += [(("tests", i), t) for i, t in enumerate(tests if isinstance(tests, list) else [])]
    providers = document.get("providers")
    for index, provider in enumerate(providers if isinstance(providers, list) else []):
        if isinstance(provider, dict):
            places.append((("providers", index, "config"), provider.get("config")))
    found: dict[DocumentPath, str] = {}
    for where, place in places:
        for key in TOOL_FILE_KEYS if isinstance(place, dict) else ():
            value = place.get(key)
            if isinstance(value, str) and value.strip():
                found[(*where, key)] = strip_file_prefix(value)
    return found


def is_prompt_md(path: str) -> bool:
    """A file named exactly ``PROMPT.md`` (AgentV's task prompt file)."""
    return path.replace("\\", "/").rsplit("/", 1)[-1] == PROMPT_MD


def prompt_md_references(document: Mapping[str, Any]) -> dict[DocumentPath, str]:
    """``PROMPT.md`` files listed in ``input_files`` of the suite or of a test with no input."""
    found: dict[DocumentPath, str] = {}
    where: list[tuple[DocumentPath, Any]] = [(("input_files",), document.get("input_files"))]
    tests = document.get("tests")
    for index, test in enumerate(tests if isinstance(tests, list) else []):
        if isinstance(test, dict) and test.get("input") is None:
            where.append((("tests", index, "input_files"), test.get("input_files")))
    for path, files in where:
        for position, name in enumerate(files if isinstance(files, list) else []):
            if isinstance(name, str) and is_prompt_md(name):
                found[(*path, position)] = name
    return found


async def load_sources(
    document: Any, file_source: FileSource, findings: Findings, *, source_name: str | None
) -> Sources:
    """Read every file the suite needs before its cases can be read."""
    sources = Sources(source_name=source_name)
    sources.config_patterns = await _config_patterns(file_source, findings)
    sources.grader_types = await file_source.user_types(USER_TYPE_FOLDERS, USER_TYPE_SUFFIXES)
    if not isinstance(document, dict):
        return sources
    for where, reference in case_references(document).items():
        sources.cases[where] = await _cases(reference, where, file_source, findings)
    var_files = var_file_references(document, sources.cases)
    references = {**text_references(document), **var_files}
    texts = await _expand_globs(references, file_source, sources, findings)
    texts.update(await _bare_prompt_globs(document, file_source, sources))
    pdfs = [path for where, path in texts.items() if is_pdf(path) and "vars" in where]
    images = [path for where, path in texts.items() if is_image(path) and "vars" in where]
    loaded = await file_source.collect(list(texts.values()), pdfs, images)
    for where, path in texts.items():
        if path in loaded.files:
            sources.texts[path] = loaded.files[path]
        elif where in var_files and path not in loaded.refused:
            sources.missing_vars.add(path)
            findings.warn(
                where,
                f"file not found: {path}: the tests that use it are errors (send it in "
                "`files` or put it under a workspace root)",
            )
        else:
            reason = loaded.refused.get(path, "file not found")
            findings.error(where, f"file {path!r}: {reason}")
    if _needs_sibling_prompt(document):  # AgentV's fallback: a PROMPT.md beside the suite
        sibling = await file_source.collect([PROMPT_MD])
        if PROMPT_MD in sibling.files:
            sources.sibling_prompt = sibling.files[PROMPT_MD]
    return sources


async def _bare_prompt_globs(
    document: Mapping[str, Any], file_source: FileSource, sources: Sources
) -> dict[DocumentPath, str]:
    """Prompts written as a glob or a file's name without ``file://``, or such an ``id``.

    ``'*.txt'``, ``prompts.txt``: one that matches files is those files, as promptfoo reads
    it (measured; promptfoo's ``nunjucks-custom-filters`` example names ``prompts.txt`` so);
    one matching none is a text.
    """
    prompts = document.get("prompts")
    found: dict[DocumentPath, str] = {}
    for index, item in enumerate(prompts if isinstance(prompts, list) else []):
        if isinstance(item, dict) and not {"raw", "prompt", "content", "file"} & set(item):
            item = item.get("id")
        if not isinstance(item, str) or item.strip().startswith(FILE_PREFIX):
            continue
        pattern = item.strip()
        if "\n" in pattern or not (is_pattern(pattern) or _names_a_file(pattern)):
            continue
        try:
            files = await file_source.expand(pattern) if is_pattern(pattern) else None
        except FileRefused:
            continue
        if files is None and pattern in (await file_source.collect([pattern])).files:
            files = [pattern]
        if files:
            sources.globs[pattern] = files
            found.update({("prompts", index, number): f for number, f in enumerate(files)})
    return found


def _names_a_file(text: str) -> bool:
    """Whether a one-line prompt could be a file's name: no spaces, a name with an extension."""
    name = text.rsplit("/", 1)[-1]
    return " " not in text and "." in name.strip(".") and not text.endswith(".")


async def _expand_globs(
    texts: dict[DocumentPath, str], file_source: FileSource, sources: Sources, findings: Findings
) -> dict[DocumentPath, str]:
    """``texts`` with each glob replaced by the files it matches (kept in ``sources.globs``)."""
    expanded: dict[DocumentPath, str] = {}
    for where, path in texts.items():
        if not is_pattern(path):
            expanded[where] = path
            continue
        try:
            files = await file_source.expand(path)
        except FileRefused as exc:
            findings.error(where, f"file {path!r}: {exc}")
            continue
        if not files:
            findings.error(where, f"file {path!r}: no file matches")
            continue
        sources.globs[path] = files
        expanded.update({(*where, index): file for index, file in enumerate(files)})
    return expanded


def _needs_sibling_prompt(document: Mapping[str, Any]) -> bool:
    """Some test has neither ``input`` nor a ``PROMPT.md`` among its ``input_files``."""
    tests = document.get("tests")
    listed = document.get("input_files")
    if isinstance(listed, list) and any(isinstance(f, str) and is_prompt_md(f) for f in listed):
        return False
    for test in tests if isinstance(tests, list) else []:
        if isinstance(test, dict) and test.get("input") is None:
            files = test.get("input_files")
            named = isinstance(files, list) and any(
                isinstance(f, str) and is_prompt_md(f) for f in files
            )
            if not named and test.get("input_messages") is None:
                return True
    return False


async def _config_patterns(file_source: FileSource, findings: Findings) -> tuple[str, ...] | None:
    """``guideline_patterns`` of the nearest ``.agentv/config.yaml`` (up to the root)."""
    for candidate in file_source.listing.upward_candidates(CONFIG_FILE):
        loaded = await file_source.collect([f"/{candidate}"])
        text = loaded.files.get(f"/{candidate}")
        if text is None:
            continue
        try:
            config = parse_yaml(text)
        except DocumentError as exc:
            findings.error((), f"{candidate}: {exc.detail}")
            return None
        patterns = config.get("guideline_patterns") if isinstance(config, dict) else None
        if patterns is None:
            continue
        if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
            findings.error((), f"{candidate}: guideline_patterns must be a list of glob patterns")
            return None
        return tuple(patterns)
    return None


async def _cases(
    reference: str, where: DocumentPath, file_source: FileSource, findings: Findings
) -> CaseList:
    path = strip_file_prefix(reference)
    try:
        listed = await file_source.expand(path)
    except FileRefused as exc:
        findings.error(where, f"{path!r}: {exc}")
        return []
    if listed is None:
        return await _file_cases(path, where, file_source, findings)
    if not listed:
        what = "the pattern matched no files" if is_pattern(path) else "the folder has no cases"
        findings.error(where, f"{path!r}: {what}")
    cases: CaseList = []
    for name in listed:
        cases.extend(await _file_cases(name, where, file_source, findings))
    return cases


async def _file_cases(
    path: str, where: DocumentPath, file_source: FileSource, findings: Findings
) -> CaseList:
    loaded = await file_source.collect([path])
    if path not in loaded.files:
        reason = loaded.refused.get(path, "file not found")
        findings.error(where, f"file {path!r}: {reason}")
        return []
    try:
        cases = parse_case_file(path, loaded.files[path])
    except (CaseFileError, DocumentError) as exc:
        findings.error(where, f"file {path!r}: {exc}")
        return []
    if posixpath.basename(path) in CASE_FOLDER_FILES:
        return await _folder_case(path, where, cases, file_source, findings)
    return [((*where, f"@{path}", index), case) for index, case in enumerate(cases)]


async def _folder_case(
    path: str, where: DocumentPath, cases: list[Any], file_source: FileSource, findings: Findings
) -> CaseList:
    """A ``<id>/case.yaml`` case: its id defaults to the folder's name, its files are its own."""
    folder = posixpath.dirname(path)
    case = cases[0] if cases else None
    if not isinstance(case, dict):
        findings.error(
            (*where, f"@{path}"), f"a case file holds one case (a mapping), not {describe(case)}"
        )
        return []
    if await file_source.expand(f"{folder}/workspace") is not None:
        findings.error(
            (*where, f"@{path}"),
            "a case folder with a workspace/ is not supported: it needs an agent workspace",
        )
        return []
    case = {"id": posixpath.basename(folder), **case}
    return [((*where, f"@{path}"), relocate_files(case, folder))]


def relocate_files(value: Any, folder: str) -> Any:
    """``{type: file, value: p}`` parts of a case read from ``folder``: paths from the suite."""
    if isinstance(value, list):
        return [relocate_files(item, folder) for item in value]
    if not isinstance(value, dict):
        return value
    moved = {key: relocate_files(item, folder) for key, item in value.items()}
    file_value = moved.get("value")
    if (
        moved.get("type") == "file"
        and isinstance(file_value, str)
        and not file_value.startswith("/")
    ):
        moved["value"] = posixpath.normpath(posixpath.join(folder, file_value))
    if isinstance(moved.get("input_files"), list):
        moved["input_files"] = [
            posixpath.normpath(posixpath.join(folder, item)) if isinstance(item, str) else item
            for item in moved["input_files"]
        ]
    return moved

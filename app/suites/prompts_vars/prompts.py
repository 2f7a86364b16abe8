"""Prompt templates of the prompts/providers/vars layout, and the messages each one gives.

A prompt is a template string (one user turn), a ``{id, label, raw|prompt|file}`` mapping, or
``file://`` text (several prompts when ``---`` lines split it) or a JSON chat file
(``[{role, content}]``). Rendered
with a test's variables it gives that test's input messages; ``"{{ input }}"`` with
``vars.input`` a list of messages stands for those messages (AgentV's reading).

A JSON chat file that is JSON only once rendered (loops write its messages, ``{% for role,
content in message %}``; an unquoted ``{{ x | dump }}``) is rendered whole and then parsed,
as promptfoo 0.123.1 does (measured: tests/conformance/promptfoo/chat_template.yaml); a
variable that breaks its JSON (a quote in ``"{{ q }}"``) makes that test an error when it
runs, not the suite. A file that is JSON as written is parsed first and each message
rendered, so a quote or a line break in a variable stays text (promptfoo renders it whole
too and errs: a deliberate difference, docs/design.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from app.formatting.messages import Message
from app.suites.case_fields import read_messages, user_message
from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import Findings, describe
from app.suites.files.sources import PROMPT_PROGRAMS, Sources, strip_file_prefix
from app.suites.prompts_vars.program_vars import (
    program_prompt,
    program_values,
    programs_allowed,
)
from app.suites.reading import CaseOrigin, Renderer, refuse
from app.suites.templates import (
    TemplateProblem,
    UndefinedVariable,
    has_template,
    namespace,
    render,
    single_variable,
)

CONVERSATION = "_conversation"
_CONVERSATION = re.compile(r"\b_conversation\b")
SEPARATOR = "---"
"""A line of a prompt file that separates two prompts (promptfoo's default)."""


@dataclass(frozen=True)
class Prompt:
    """One prompt template: its id, and its text or chat messages (templates)."""

    id: str
    text: str | None
    messages: list[Any] | None
    path: DocumentPath
    names: frozenset[str] = frozenset()
    """What a test's ``prompts`` may call it: its id and label (besides ``id``)."""
    chat_template: bool = False
    """``text`` is a JSON chat file with templates: rendered whole, then parsed."""
    program: str | None = None
    """``file://x.py:fn`` / ``x.js``: a program makes the prompt (``program_vars``)."""

    def called(self, name: str) -> bool:
        """Whether a test's ``prompts`` entry names this prompt."""
        return name == self.id or name in self.names


def read_prompts(raw: Any, sources: Sources, findings: Findings) -> list[Prompt]:
    """Every prompt of ``prompts`` (a list or one prompt), each with a unique id."""
    if raw is None:
        return []
    listed = raw if isinstance(raw, list) else [raw]
    prompts: list[Prompt] = []
    for index, item in enumerate(listed):
        path: DocumentPath = ("prompts", index) if isinstance(raw, list) else ("prompts",)
        prompts.extend(_prompt(item, path, index, sources, findings))
    ids = [prompt.id for prompt in prompts]
    for duplicate in sorted({pid for pid in ids if ids.count(pid) > 1}):
        findings.error(
            ("prompts",), f"two prompts share the id {duplicate!r}: give each its own id"
        )
    return prompts


def _prompt(
    item: Any, path: DocumentPath, index: int, sources: Sources, findings: Findings
) -> list[Prompt]:
    default_id = f"prompt-{index + 1}"
    if isinstance(item, str) and not item.strip().startswith("file://"):
        if item.strip() in sources.globs:  # a bare glob matching files: those files
            pattern = item.strip()
            files = sources.globs[pattern]
            return [
                p for f in files for p in _prompt_file(f, f"{pattern}:{f}", path, sources, findings)
            ]
        return [Prompt(default_id, item, None, path)]
    if isinstance(item, str) and strip_file_prefix(item) in sources.globs:
        files = sources.globs[strip_file_prefix(item)]
        return [p for file in files for p in _prompt_file(file, file, path, sources, findings)]
    if isinstance(item, str):
        return _prompt_file(strip_file_prefix(item), default_id, path, sources, findings)
    if not isinstance(item, dict):
        findings.error(path, f"a prompt is a template string or a mapping, not {describe(item)}")
        return []
    names = frozenset(str(item[key]) for key in ("id", "label") if isinstance(item.get(key), str))
    return [
        replace(prompt, names=names)
        for prompt in _mapping(item, path, default_id, sources, findings)
    ]


def _mapping(
    item: dict[str, Any], path: DocumentPath, default_id: str, sources: Sources, findings: Findings
) -> list[Prompt]:
    declared = item.get("id")
    own = any(key in item for key in ("raw", "prompt", "content", "file"))
    if isinstance(declared, str) and not own and not declared.strip().startswith("file://"):
        # promptfoo reads such an id as the prompt: a glob's files, else the text itself
        files = sources.globs.get(declared.strip())
        label = str(item.get("label") or default_id)
        if files:
            where = (*path, "id")
            return [
                p for f in files for p in _prompt_file(f, f"{label}:{f}", where, sources, findings)
            ]
        return [Prompt(label, declared, None, path)]
    if isinstance(declared, str) and declared.strip().startswith("file://"):
        # promptfoo's {id: file://prompt.txt, label: name}: the id is the prompt's file
        label = str(item.get("label") or default_id)
        return _prompt_file(strip_file_prefix(declared), label, (*path, "id"), sources, findings)
    prompt_id = str(declared or item.get("label") or default_id)
    for key in ("raw", "prompt", "content"):
        if isinstance(item.get(key), str):
            return [Prompt(prompt_id, item[key], None, (*path, key))]
    if isinstance(item.get("file"), str):
        return _prompt_file(
            strip_file_prefix(item["file"]), prompt_id, (*path, "file"), sources, findings
        )
    findings.error(path, "a prompt mapping needs 'raw', 'prompt', 'file' or a file:// 'id'")
    return []


def split_prompts(text: str) -> list[str]:
    """A prompt file's prompts: a line of ``---`` (spaces around it allowed) separates two.

    As promptfoo splits them (measured): each part trimmed, empty parts dropped; a file with
    no separator is one prompt, as written.
    """
    lines = text.split("\n")
    if not any(line.strip() == SEPARATOR for line in lines):
        return [text]
    parts: list[list[str]] = [[]]
    for line in lines:
        if line.strip() == SEPARATOR:
            parts.append([])
        else:
            parts[-1].append(line)
    texts = ("\n".join(part).strip() for part in parts)
    return [part for part in texts if part]


def _prompt_file(
    path: str, prompt_id: str, where: DocumentPath, sources: Sources, findings: Findings
) -> list[Prompt]:
    if path.split(":", 1)[0].lower().endswith(PROMPT_PROGRAMS):
        if not programs_allowed():
            why = "it runs only with code graders enabled, for a suite file under a workspace root"
            refuse(findings, where, "a prompt made by a program", why)
            return []
        return [Prompt(prompt_id, None, None, where, program=f"file://{path}")]
    text = sources.texts.get(path)
    if text is None:
        return []  # reported when the file was read
    if path.endswith(".json"):
        try:
            messages = json.loads(text)
        except json.JSONDecodeError as exc:
            if has_template(text):  # JSON once rendered: loops, unquoted ``| dump``
                return [Prompt(prompt_id, text, None, where, chat_template=True)]
            findings.error(where, f"file {path!r} is not JSON: {exc.msg}")
            return []
        if not isinstance(messages, list):
            findings.error(where, f"file {path!r} must hold a list of {{role, content}} messages")
            return []
        return [Prompt(prompt_id, None, messages, where)]
    parts = split_prompts(text)
    if len(parts) == 1:
        return [Prompt(prompt_id, parts[0], None, where)]
    return [Prompt(f"{prompt_id}.{n}", part, None, where) for n, part in enumerate(parts, 1)]


def prompts_named(
    raw: Any, prompts: list[Prompt], path: DocumentPath, findings: Findings
) -> list[Prompt]:
    """The prompts a test's ``prompts`` (ids or labels) names; all of them without it."""
    if raw is None:
        return prompts
    names = raw if isinstance(raw, list) else [raw]
    if not names or not all(isinstance(name, str) for name in names):
        findings.error(path, f"must list prompt ids or labels, not {describe(raw)}")
        return []
    for index, name in enumerate(names):
        if not any(prompt.called(name) for prompt in prompts):
            known = ", ".join(sorted({n for p in prompts for n in (p.id, *p.names)}))
            findings.error((*path, index), f"{name!r} names no prompt of the suite ({known})")
    return [prompt for prompt in prompts if any(prompt.called(name) for name in names)]


@dataclass(frozen=True)
class InputError:
    """Why a test's input cannot be made: the test runs as this error (promptfoo's)."""

    message: str


def prompt_messages(
    prompt: Prompt,
    variables: Mapping[str, Any],
    path: DocumentPath,
    origin: CaseOrigin,
    findings: Findings,
) -> tuple[Message, ...] | InputError | None:
    """The input messages one prompt gives for a test's variables (None: an error).

    Variables made by programs get their output for this prompt first (``program_vars``).
    """
    if prompt.program is not None:  # promptfoo's prompt function: its text or messages
        return _program_messages(prompt, prompt.program, variables, path, origin, findings)
    written = prompt.text if prompt.text is not None else json.dumps(prompt.messages)
    variables = program_values(written, variables, (*path, prompt.id))
    renderer = Renderer(variables, findings, "empty")
    if CONVERSATION not in variables and _CONVERSATION.search(written):
        # promptfoo's first turn of a conversation (``sequential`` fills the later ones)
        variables = {**variables, CONVERSATION: []}
        renderer = Renderer(variables, findings, "empty")
    if prompt.chat_template:
        assert prompt.text is not None
        before = len(findings.errors)
        rendered = renderer.text(prompt.text, (*path, "vars"))
        if len(findings.errors) > before:
            return None
        return _chat(rendered, prompt, origin, findings)
    if prompt.messages is not None:
        return read_messages(prompt.messages, prompt.path, findings, origin.files, renderer)
    assert prompt.text is not None
    name = single_variable(prompt.text)
    value = variables.get(name) if name else None
    if isinstance(value, list):
        return read_messages(value, (*path, "vars", name or ""), findings, origin.files, renderer)
    try:
        return (user_message(render(prompt.text, namespace(variables))),)
    except UndefinedVariable as exc:  # promptfoo renders it empty
        findings.warn((*path, "vars"), f"prompt {prompt.id!r}: {exc}: rendered empty")
        try:
            return (user_message(render(prompt.text, namespace(variables), lenient=True)),)
        except TemplateProblem as problem:
            findings.error((*path, "vars"), f"prompt {prompt.id!r}: {problem}")
    except TemplateProblem as exc:
        findings.error((*path, "vars"), f"prompt {prompt.id!r}: {exc}")
    return None


def _program_messages(
    prompt: Prompt,
    program: str,
    variables: Mapping[str, Any],
    path: DocumentPath,
    origin: CaseOrigin,
    findings: Findings,
) -> tuple[Message, ...] | None:
    """The messages a prompt program made: its chat messages, or its text as one turn."""
    made = program_prompt(program, variables, (*path, prompt.id))
    if isinstance(made, list):
        renderer = Renderer(variables, findings, "empty")
        return read_messages(made, prompt.path, findings, origin.files, renderer)
    return (user_message(made if isinstance(made, str) else ""),)


def _chat(
    rendered: str, prompt: Prompt, origin: CaseOrigin, findings: Findings
) -> tuple[Message, ...] | InputError | None:
    """A rendered JSON chat file's messages.

    promptfoo sends text that is not JSON as one user turn, unless it starts as JSON (``[``
    or ``{``), which is the test's error.
    """
    try:
        parsed = json.loads(rendered)
    except json.JSONDecodeError as exc:
        if rendered.strip().startswith(("[", "{")):
            return InputError(
                f"prompt {prompt.id!r} is not valid JSON once rendered with the test's "
                f"variables: {exc.msg} (line {exc.lineno} column {exc.colno})"
            )
        return (user_message(rendered),)
    if not isinstance(parsed, list):
        return InputError(
            f"prompt {prompt.id!r} rendered must be a list of {{role, content}} messages, "
            f"not {describe(parsed)}"
        )
    plain = Renderer(None, findings)
    return read_messages(parsed, prompt.path, findings, origin.files, plain)

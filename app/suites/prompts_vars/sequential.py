"""promptfoo's tests that read earlier tests: ``options.storeOutputAs`` and ``_conversation``.

Measured against promptfoo 0.123.1 (tests/conformance/promptfoo/store_outputs.yaml and
conversation.yaml): as soon as one test stores its output or one prompt reads
``_conversation``, promptfoo runs the whole config in order, one (test, provider, prompt)
cell at a time, whatever its concurrency. Then:

- ``storeOutputAs: name``: the test's output, after its ``options.transform``, is the
  variable ``name`` of every later cell (over a test's own ``vars.name``), one value for the
  whole config: the last cell that stored it wins, whatever its provider or prompt. A cell
  whose transform throws, or whose output is empty, stores nothing; a failed test stores.
  The variable reaches templates inside other variables (``'Why {{name}}?'``).
- ``_conversation``: for a prompt that reads it, the earlier cells of the same provider,
  prompt and ``metadata.conversationId`` (tests without one share one thread), each
  ``{prompt, input, output}``: the rendered prompt (a chat prompt's messages), its last
  message's content (the prompt's text for a text prompt) and the provider's output
  before any transform. A cell whose transform or graders fail still adds its turn; one
  whose provider call fails adds a turn with an empty output and stores nothing
  (tests/conformance/promptfoo/sequential_errors.yaml).

Such a suite's cases each carry a ``SequenceStep`` (``app.suites.sequencing``);
``render_step`` makes a case's input again with what the earlier cases left.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from app.formatting.messages import Message
from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import Findings, describe
from app.suites.prompts_vars.program_vars import program_file
from app.suites.prompts_vars.prompts import CONVERSATION, InputError, Prompt, prompt_messages
from app.suites.reading import CaseOrigin, case_variables, refuse
from app.suites.sequencing import SequenceStep, StepPrompt

STORE_KEY = "storeOutputAs"
_READS_CONVERSATION = re.compile(rf"\b{CONVERSATION}\b")
Turn = dict[str, Any]


def reads_conversation(prompt: Prompt) -> bool:
    """Whether a prompt reads ``_conversation`` (promptfoo fills it only for those)."""
    written = prompt.text if prompt.text is not None else json.dumps(prompt.messages)
    return bool(_READS_CONVERSATION.search(written))


def store_name(options: Any, path: DocumentPath, findings: Findings) -> str | None:
    """``options.storeOutputAs``: the variable a test's output is stored as, or None."""
    if not isinstance(options, dict) or options.get(STORE_KEY) is None:
        return None
    name = options[STORE_KEY]
    if not isinstance(name, str) or not name.strip():
        findings.error((*path, STORE_KEY), f"must be a variable name, not {describe(name)}")
        return None
    return name


def suite_is_sequential(
    prompts: Sequence[Prompt], tests: Sequence[tuple[DocumentPath, Any]], default_store: bool
) -> bool:
    """Whether promptfoo would run the suite in order (a stored output or a conversation)."""
    if default_store or any(reads_conversation(prompt) for prompt in prompts):
        return True
    return any(
        isinstance(raw, dict)
        and isinstance(raw.get("options"), dict)
        and raw["options"].get(STORE_KEY) is not None
        for _, raw in tests
    )


def sequence_step(
    raw: Mapping[str, Any],
    inherited: Mapping[str, Any],
    path: DocumentPath,
    prompts: Sequence[Prompt],
    store_as: str | None,
    transform: str | None,
    findings: Findings,
) -> SequenceStep | None:
    """What a test of a sequential suite renders its input from once earlier tests ran."""
    if not prompts:
        why = "storeOutputAs and _conversation fill prompts: give the suite 'prompts'"
        refuse(findings, path, "a test without prompts in a suite whose tests run in order", why)
        return None
    for prompt in prompts:
        if prompt.program is not None:
            refuse(findings, (*path, "prompts"), f"prompt program {prompt.program!r}",
                   "a prompt made by a program cannot be made again with stored outputs "
                   "(storeOutputAs, _conversation)")  # fmt: skip
            return None
    if store_as is not None and transform is not None and transform.startswith("file://"):
        why = "an output stored with storeOutputAs is transformed by inline code only"
        refuse(findings, (*path, "options", "transform"), f"transform {transform!r}", why)
        return None
    own = raw.get("vars")
    own = own if isinstance(own, dict) else {}
    metadata = raw.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    thread = metadata.get("conversationId")
    variables = {**inherited, **own}
    made_by_programs = [name for name, value in variables.items() if program_file(value)]
    if made_by_programs:
        why = "a variable made by a program is made while the suite is read, not again later"
        refuse(findings, (*path, "vars", made_by_programs[0]),
               f"variable {made_by_programs[0]!r} made by a program in a suite whose tests "
               "run in order", why)  # fmt: skip
        return None
    try:
        json.dumps(variables)
    except (TypeError, ValueError):
        refuse(findings, (*path, "vars"), "a variable that is not JSON",
               "the variables of a test that runs after others are stored with it")  # fmt: skip
        return None
    return SequenceStep(
        variables=variables,
        prompts=tuple(_step_prompt(prompt) for prompt in prompts),
        store_as=store_as,
        transform=transform if store_as is not None else None,
        conversation=None if thread is None else str(thread),
        path=path,
    )


def _step_prompt(prompt: Prompt) -> StepPrompt:
    return StepPrompt(
        id=prompt.id,
        text=prompt.text,
        messages=prompt.messages,
        chat_template=prompt.chat_template,
        reads_conversation=reads_conversation(prompt),
    )


def step_prompt(step: SequenceStep, prompt_id: str | None) -> StepPrompt:
    """The prompt an arm runs the step with (``None``: the suite's only prompt)."""
    for prompt in step.prompts:
        if prompt_id is None or prompt.id == prompt_id:
            return prompt
    return step.prompts[0]


def render_step(
    step: SequenceStep,
    prompt: StepPrompt,
    stored: Mapping[str, Any],
    turns: Sequence[Turn],
) -> tuple[Message, ...] | str:
    """The step's input with the stored outputs and its conversation's turns, or its error."""
    findings = Findings()
    variables = case_variables(
        None, {"vars": {**step.variables, **stored}}, step.path, findings, undefined="keep"
    )
    variables = dict(variables or {})
    if prompt.reads_conversation:
        variables[CONVERSATION] = list(turns)
    written = Prompt(
        id=prompt.id,
        text=prompt.text,
        messages=prompt.messages,
        path=("prompts",),
        chat_template=prompt.chat_template,
    )
    origin = CaseOrigin(path=step.path, variables=variables)
    made = prompt_messages(written, variables, step.path, origin, findings)
    if isinstance(made, InputError):
        return made.message
    if made is None or findings.errors:
        return "; ".join(error.message for error in findings.errors) or "no input"
    return made


def conversation_turn(prompt: StepPrompt, messages: Sequence[Message], output: str) -> Turn:
    """The turn a cell adds to its conversation: ``{prompt, input, output}``."""
    chat = prompt.chat_template or prompt.messages is not None
    if chat:
        sent = [{"role": m.role, "content": m.content} for m in messages]
        last = sent[-1]["content"] if sent else ""
        return {"prompt": sent, "input": last, "output": output}
    text = messages[-1].content if messages else ""
    return {"prompt": text, "input": text, "output": output}

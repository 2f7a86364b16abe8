"""User-defined grader types: AgentV's ``.agentv/assertions/<type>.ts`` convention.

AgentV registers every ``*.ts``, ``*.js``, ``*.mts`` and ``*.mjs`` file of an
``.agentv/assertions/`` folder (then of ``.agentv/graders/`` and ``.agentv/judges/``) found
from the eval file's folder upward as a grader type named after the file: ``type:
word-count`` runs ``.agentv/assertions/word-count.ts`` as a code grader (``bun run FILE``,
its JSON on stdin, a score on stdout). Its built-in types win over a file of the same name;
the nearest folder wins over those above it.

Here the files are found the same way (``files.sources.load_sources``) for a suite read
from a workspace root (never above the root), and such a type reads as a ``code_judge``
running ``bun run FILE``: it goes through the sandbox like every code grader, and needs code
graders enabled. Its other keys (``min: 3``) reach the program as its ``config``. A suite
sent in a request body has no folder, so it has no user-defined types.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from app.evaluators.catalog import COMMON_KEYS

RUNNER = ("bun", "run")
"""How AgentV 4.42.4 runs a user-defined type's file."""
AGENTV_BUILTINS = frozenset(
    {
        "code-grader", "composite", "contains", "contains-all", "contains-any", "cost",
        "ends-with", "equals", "execution-metrics", "field-accuracy", "icontains",
        "icontains-all", "icontains-any", "inline-assert", "is-json", "latency", "llm-grader",
        "regex", "skill-trigger", "starts-with", "token-usage", "tool-trajectory",
    }
)  # fmt: skip
"""AgentV 4.42.4's registered type names (measured): a file of one of these names is not
used, as in AgentV."""
_KEPT = (COMMON_KEYS - {"type"}) | {"negate", "required", "min_score", "threshold"}

_FOUND: ContextVar[Mapping[str, str] | None] = ContextVar("user_grader_types", default=None)


@contextmanager
def user_types(found: Mapping[str, str]) -> Iterator[None]:
    """Make ``found`` the types in scope while one suite is read.

    ``found``: type name -> its file, relative to the suite's folder.
    """
    token = _FOUND.set(found)
    try:
        yield
    finally:
        _FOUND.reset(token)


def as_program(raw: Mapping[str, Any], declared: str) -> Mapping[str, Any]:
    """``raw`` as the code grader its user-defined type stands for; unchanged otherwise."""
    program = (_FOUND.get() or {}).get(declared.strip())
    if program is None or declared.strip() in AGENTV_BUILTINS:
        return raw
    kept = {key: value for key, value in raw.items() if key in _KEPT}
    config = {key: value for key, value in raw.items() if key not in _KEPT and key != "type"}
    return {
        "name": declared.strip(),
        **kept,
        "type": "code_judge",
        "command": [*RUNNER, program],
        **({"config": config} if config else {}),
    }

"""Deliberate differences: each one is explained in docs/design.md under its ``reason`` tag
(section "Where we knowingly differ from AgentV 4.42.4").

The harness fails on a difference none of these covers, and on an entry that covers none
(the two sides agree there now: drop it, and its paragraph in docs/design.md). A case's
verdict differing is covered when its other differences are.
"""

from __future__ import annotations

from scripts.conformance.agentv.compare import Deliberate

OWN = "agentv/*"
"""Our corpus (``tests/conformance/agentv``): the entries CI checks."""

DELIBERATE: tuple[Deliberate, ...] = (
    Deliberate("messages", OWN, "*", "[whitespace]", "join"),
    Deliberate("grader", OWN, "*", "[not-contains] 0 fail", "not-prefix"),
    Deliberate("verdict", OWN, "*", "file not found: ", "missing-file", whole_case=True),
    # AgentV's own mid-2026 feature examples
    Deliberate("messages", "2026-*", "*", "[whitespace]", "join"),
    Deliberate("question", "2026-*", "*", "[whitespace]", "join"),
    Deliberate("messages", "2026-*", "*", "[guidelines]", "guidelines"),
    Deliberate("question", "2026-*", "*", "[guidelines]", "guidelines"),
    Deliberate("not-run", "2026-*", "*", "is not given: send it in the request's `env`", "env"),
    Deliberate("grader", "2026-*", "*", "was not found on the sandbox's PATH", "program-missing"),
    Deliberate("question", "2026-*", "*", "[conversation]", "conversation"),
    Deliberate("not-run", "2026-*", "*", "workspace 'docker' is not supported", "docker"),
    # `uv run` of a grader whose project (pyproject.toml, uv.lock) is above its folder
    Deliberate("grader", "2026-*/sdk-python/*", "*", "1.0 pass, AgentV", "sandbox-folders"),
)

"""AgentV's ``agentv:agent-rules`` extension end to end (its July files' reading: docs/design.md).

The suite's workdir holds an agent's skills and rules where agents look for them
(``.agents/skills/``, ``AGENTS.md``), or the extension names folders of the suite to stage
into the case's folder (``.agentv/agent-rules/<kind>/``). The agent (a CLI target) reads its
folder; the graders read what the extension found in the case's ``metadata``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.api.test_workspaces import settings
from tests.conftest import ClientFactory

AGENT = """\
from pathlib import Path
staged = Path(".agentv/agent-rules/skills/skills/acme/SKILL.md")
found = Path(".agents/skills/acme/SKILL.md")
print((staged if staged.exists() else found).read_text().strip())
"""


def paths_are(expected: dict[str, list[str]]) -> dict[str, str]:
    """A javascript assert: the case's metadata.agent_rules_paths is ``expected``."""
    seen = "JSON.stringify(context.test.metadata.metadata.agent_rules_paths)"
    compact = json.dumps(expected, separators=(",", ":"))
    return {"type": "javascript", "value": f"{seen} === {json.dumps(compact)}"}


def write_project(root: Path, extension: Any, graders: list[Any]) -> None:
    skill = root / "ws" / ".agents" / "skills" / "acme"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("found acme skill\n")
    (root / "ws" / "AGENTS.md").write_text("Check .agents/skills first.\n")
    staged = root / "rules" / "skills" / "acme"
    staged.mkdir(parents=True)
    (staged / "SKILL.md").write_text("staged acme skill\n")
    (root / "evals").mkdir()
    (root / "agent.py").write_text(AGENT)
    suite = {
        "extensions": [extension],
        "environment": {"type": "host", "workdir": "../ws/"},
        "providers": ["agent"],
        "prompts": ["{{ input }}"],
        "tests": [{"id": "deploy", "vars": {"input": "How do I deploy?"}, "assert": graders}],
    }
    (root / "evals" / "suite.yaml").write_text(yaml.safe_dump(suite))
    command = [sys.executable, str(root / "agent.py")]
    agent = {"name": "agent", "provider": "cli", "command": command}
    (root / "targets.yaml").write_text(yaml.safe_dump({"targets": [agent]}))


async def evaluate(root: Path, make_client: ClientFactory) -> dict[str, Any]:
    async with make_client(settings(root)) as client:
        response = await client.post("/evaluate", json={"suite": "evals/suite.yaml"})
    assert response.status_code == 200, response.text
    [record] = response.json()["results"]
    return dict(record)


async def test_the_extension_finds_the_skills_and_rules_in_the_cases_folder(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    # AgentV's tool-calls-template and agent-skills-evals samples: `- agentv:agent-rules`
    found = {"skills": [".agents/skills"], "rules": ["AGENTS.md"]}
    graders = [{"type": "contains", "value": "found acme skill"}, paths_are(found)]
    write_project(tmp_path, "agentv:agent-rules", graders)
    record = await evaluate(tmp_path, make_client)
    assert record["status"] == "passed", (record["error"], record["evaluator_results"])


async def test_named_skills_are_staged_into_the_cases_folder(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    extension = {"id": "agentv:agent-rules", "hook": "beforeEach", "skills": "../rules/skills"}
    staged = {"skills": [".agentv/agent-rules/skills/skills"], "rules": ["AGENTS.md"]}
    graders = [{"type": "contains", "value": "staged acme skill"}, paths_are(staged)]
    write_project(tmp_path, extension, graders)
    record = await evaluate(tmp_path, make_client)
    assert record["status"] == "passed", (record["error"], record["evaluator_results"])
    assert not (tmp_path / "ws" / ".agentv").exists()  # staged in the case's copy only


@pytest.mark.parametrize(
    ("extension", "path", "message"),
    [
        (
            {"id": "agentv:agent-rules", "skills": ["../rules/missing"]},
            "extensions",
            "agentv:agent-rules skills path '../rules/missing' does not exist",
        ),
        (
            "agentv:agent-rules:afterEach",
            "extensions[0]",
            "agentv:agent-rules at afterEach is not supported",
        ),
        ("agentv:workspace", "extensions[0]", "the built-in extension 'agentv:workspace'"),
    ],
)
async def test_an_extension_that_cannot_stage_is_an_error_at_validation(
    tmp_path: Path, make_client: ClientFactory, extension: Any, path: str, message: str
) -> None:
    write_project(tmp_path, extension, [{"type": "contains", "value": "skill"}])
    async with make_client(settings(tmp_path)) as client:
        response = await client.post("/validate", json={"suite": "evals/suite.yaml"})
    errors = {error["path"]: error["message"] for error in response.json().get("errors", [])}
    assert errors[path].startswith(message), errors

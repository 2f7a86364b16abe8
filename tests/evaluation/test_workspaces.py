"""``file_changes``: what changed in a workspace, as git prints it; what a snapshot reads; what
an AgentV environment's setup is run with."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from app.evaluation.workspaces import MAX_FILE_BYTES, case_workspace, file_changes, snapshot
from app.evaluators.code.programs import ProgramResult, ProgramRunner
from app.suites.model import Workspace, WorkspaceHook
from app.suites.workspaces.environment import WORKSPACE_PATH, in_environment

paths = st.sampled_from(["a.txt", "src/b.py", "src/c/d.md", "e"])
texts = st.text(alphabet="ab\n", max_size=12)
snapshots = st.dictionaries(paths, texts, max_size=4)


@given(snapshots, snapshots)
def test_every_changed_file_has_one_diff_and_no_other_file_has_one(
    before: dict[str, str], after: dict[str, str]
) -> None:
    diff = file_changes(before, after)
    named = re.findall(r"^diff --git a/(\S+) b/\1$", diff, flags=re.MULTILINE)
    changed = sorted(
        path for path in before.keys() | after.keys() if before.get(path) != after.get(path)
    )
    assert named == changed
    for block in re.split(r"(?=^diff --git )", diff, flags=re.MULTILINE)[1:]:
        path = block.split()[2][2:]
        assert ("new file mode" in block) == (path not in before)
        assert ("+++ /dev/null" in block) == (path not in after)


def test_a_snapshot_reads_text_files_only(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("print(1)\n")
    for skipped in (".git", "node_modules", "__pycache__"):
        (tmp_path / skipped).mkdir()
        (tmp_path / skipped / "x").write_text("x")
    (tmp_path / "image.png").write_bytes(b"\x89PNG\0\0")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (tmp_path / "big.txt").write_text("x" * (MAX_FILE_BYTES + 1))
    (tmp_path / "link").symlink_to(tmp_path / "src" / "main.py")
    assert snapshot(tmp_path) == {"src/main.py": "print(1)\n"}


@dataclass(frozen=True)
class RecordingRunner(ProgramRunner):
    """Records what each hook would run, and with which of the sandbox's variables."""

    seen: list[tuple[list[str], dict[str, str]]] = field(default_factory=list)

    async def run(self, argv: Sequence[str], stdin: bytes, **options: Any) -> ProgramResult:
        self.seen.append((list(argv), dict(options["env"])))
        return ProgramResult("", "", 0.0)


async def test_an_environments_variables_reach_its_setup_inside_the_sandbox_only() -> None:
    # The sandbox's own tools (prlimit, bwrap) run as the service with the variables run()
    # gets: a suite's LD_PRELOAD there would run its code outside the sandbox.
    setup = WorkspaceHook(command=("bash", "make.sh", WORKSPACE_PATH), cwd=None)
    environment = in_environment(
        Workspace(before_all=setup, declared_as="environment"), {"LD_PRELOAD": "/x.so"}
    )
    runner = RecordingRunner(roots=())
    async with case_workspace(environment, runner, "c") as folder:
        pass
    [(argv, env)] = runner.seen
    assert argv == ["env", "LD_PRELOAD=/x.so", "bash", "make.sh", str(folder.path)]
    assert env == {"AGENTV_ENVIRONMENT_WORKDIR": str(folder.path)}

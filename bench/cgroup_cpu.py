"""CPU time (user + system) of this process and everything it starts, read from a cgroup.

``getrusage`` cannot count a sandboxed program: bubblewrap's outer process leaves before its
PID namespace's init is reaped, so the program's CPU is never added to ours. A cgroup counts
every process in it, reaped or not. ``CgroupCpu.open()`` makes a child cgroup of this
process's own (cgroup v1 ``cpuacct``, or v2's ``cpu.stat``), moves the process into it, and
moves it back on ``close()``; it returns None where that is not allowed (not root, no such
hierarchy), and benchmarks then say that CPU was not measured.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

CGROUPS = Path("/sys/fs/cgroup")


def _own_path(hierarchy: str) -> str | None:
    """This process's cgroup path in ``hierarchy`` (``cpuacct`` for v1, ``""`` for v2)."""
    for line in Path("/proc/self/cgroup").read_text(encoding="utf-8").splitlines():
        _, controllers, path = line.split(":", 2)
        if hierarchy in controllers.split(",") or (hierarchy == "" and controllers == ""):
            return path.lstrip("/")
    return None


@dataclass
class CgroupCpu:
    """A cgroup holding this process: ``seconds()`` is the CPU its members used so far."""

    folder: Path
    parent: Path
    version: int

    @classmethod
    def open(cls) -> CgroupCpu | None:
        """A fresh child cgroup holding this process, or None where none can be made."""
        candidates = [(CGROUPS / "cpuacct", "cpuacct", 1), (CGROUPS / "unified", "", 2)]
        candidates.append((CGROUPS, "", 2))
        for base, hierarchy, version in candidates:
            path = _own_path(hierarchy)
            stat = "cpuacct.usage" if version == 1 else "cpu.stat"
            if path is None or not (base / path / stat).exists():
                continue
            parent = base / path
            folder = parent / f"eval-bench-{os.getpid()}"
            try:
                folder.mkdir(exist_ok=True)
                (folder / "cgroup.procs").write_text(str(os.getpid()))
            except OSError:
                with contextlib.suppress(OSError):
                    folder.rmdir()
                continue
            return cls(folder, parent, version)
        return None

    def seconds(self) -> float:
        """User plus system CPU of every process that was in the cgroup, in seconds."""
        # The totals, which the scheduler counts exactly; the user/system split is counted in
        # clock ticks (4 ms here), too coarse for one program.
        if self.version == 1:
            return int((self.folder / "cpuacct.usage").read_text()) / 1e9
        fields = dict(line.split() for line in (self.folder / "cpu.stat").read_text().splitlines())
        return int(fields["usage_usec"]) / 1e6

    def close(self) -> None:
        """Move this process back and remove the cgroup (once its other members are gone)."""
        with contextlib.suppress(OSError):
            (self.parent / "cgroup.procs").write_text(str(os.getpid()))
            self.folder.rmdir()

"""The resource limits of one sandboxed program, applied with ``prlimit`` before it starts."""

from __future__ import annotations

from dataclasses import dataclass

MIB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """Resource limits (``setrlimit``) of every process a sandboxed program starts.

    Attributes:
        cpu_seconds: CPU time of each process (``RLIMIT_CPU``).
        memory_bytes: Private writable memory of each process (``RLIMIT_DATA``: heap and
            anonymous maps; address space reserved but never made writable, as V8 does, is
            not counted, so node starts).
        processes: Processes and threads of the sandbox's user (``RLIMIT_NPROC``).
        file_bytes: Largest file a process may write (``RLIMIT_FSIZE``).
        open_files: Open file descriptors of each process (``RLIMIT_NOFILE``).
        tmp_bytes: Size of the private ``/tmp`` (a tmpfs).
    """

    cpu_seconds: int = 60
    memory_bytes: int = 1024 * MIB
    processes: int = 128
    file_bytes: int = 64 * MIB
    open_files: int = 256
    tmp_bytes: int = 64 * MIB

    def prlimit(self) -> list[str]:
        """The ``prlimit`` options setting every limit (soft and hard)."""
        return [
            f"--cpu={self.cpu_seconds}",
            f"--data={self.memory_bytes}",
            f"--nproc={self.processes}",
            f"--fsize={self.file_bytes}",
            f"--nofile={self.open_files}",
            "--core=0",
        ]

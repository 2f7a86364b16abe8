"""Run the AgentV differential harness: ``python -m scripts.conformance.agentv [SUITES...]``.

With no suite, runs the whole corpus: ``tests/conformance/agentv/`` (ours) and AgentV's own
mid-2026 feature examples, read in place. ``--corpus own`` runs ours only (the CI subset).
Prints the four figures and every difference that ``known.py`` does not list; exits 1 if
there is one, or if a deliberate difference no longer shows (the two sides agree there now).
As root, everything runs in a network namespace of its own (loopback only) unless
``--no-isolate``.
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from scripts.conformance.agentv import peer, service
from scripts.conformance.agentv.compare import (
    Deliberate,
    Difference,
    Figures,
    Tally,
    compare_suite,
    split,
)
from scripts.conformance.agentv.fake import LoggingFake, serve
from scripts.conformance.agentv.install import ROOT, TOOLS_VARIABLE, ensure_agentv, ensure_tools
from scripts.conformance.agentv.known import DELIBERATE

OWN_ROOT = ROOT / "tests" / "conformance" / "agentv"
AGENTV_ROOT = Path("/work/shared/reference/agentv-2026/full/2026-07-01_ea3ce9db5")


@dataclass(frozen=True)
class Suite:
    """A suite file, the folder it is read under (the workspace root), and its label."""

    root: Path
    path: Path

    @property
    def relative(self) -> str:
        return self.path.relative_to(self.root).as_posix()

    @property
    def label(self) -> str:
        return f"{self.root.name}/{self.relative}"


def own_suites() -> list[Suite]:
    """Our corpus: each ``*.yaml`` and ``evals.json`` in ``tests/conformance/agentv/*/evals/``."""
    found = [*OWN_ROOT.glob("*/evals/*.yaml"), *OWN_ROOT.glob("*/evals/evals.json")]
    return [Suite(OWN_ROOT, path) for path in sorted(found)]


def agentv_suites() -> list[Suite]:
    """AgentV's mid-2026 feature examples, where they are on this machine."""
    from scripts.agentv_compat import eval_files

    if not AGENTV_ROOT.is_dir():
        return []
    return [
        Suite(AGENTV_ROOT, path)
        for path in eval_files(AGENTV_ROOT)
        if "examples/features/" in path.as_posix()
        and (path.suffix in (".yaml", ".yml") or path.name.endswith("evals.json"))
    ]


def run(suites: list[Suite], verbose: bool = False) -> Figures:
    """Both sides on every suite, compared."""
    cli = ensure_agentv()
    figures = Figures()
    with serve() as fake:
        for root in sorted({suite.root for suite in suites}):
            with service.running(root, fake) as client:
                for suite in (s for s in suites if s.root == root):
                    _one(cli, client, suite, fake, figures, verbose)
    return figures


def _one(
    cli: Path, client: object, suite: Suite, fake: LoggingFake, figures: Figures, verbose: bool
) -> None:
    import httpx

    assert isinstance(client, httpx.Client)
    theirs = peer.run_suite(cli, suite.path, suite.root, fake)
    if theirs.refused is not None:
        print(f"AgentV ran none of {suite.label}: {theirs.refused}", file=sys.stderr)
        return
    ours = service.run_suite(client, suite.relative, list(theirs.cases), fake)
    before = len(figures.differences)
    compare_suite(suite.label, ours, theirs, figures)
    if verbose:
        print(f"{suite.label}: {len(theirs.cases)} cases, "
              f"{len(figures.differences) - before} differences", file=sys.stderr)  # fmt: skip


def report(figures: Figures, labels: list[str]) -> int:
    """Print the figures and the differences; 1 if any is unexplained or a known one is gone.

    Only the deliberate entries of the suites run (``labels``) can be gone.
    """
    relevant = tuple(
        entry
        for entry in _with_tools(DELIBERATE)
        if any(fnmatch.fnmatchcase(label, entry.suite) for label in labels)
    )
    unexplained, idle = split(figures.differences, relevant)
    print("| compared | agree | agree or a deliberate difference |\n|---|---|---|")
    rows = (
        ("candidate chat messages, identical", figures.messages, "messages"),
        ("judge prompt's `[[ ## question ## ]]`", figures.question, "question"),
        ("per grader: same score and pass/fail", figures.graders, "grader"),
        ("per case: same pass / not-pass", figures.cases, "verdict"),
    )
    for label, tally, kind in rows:
        print(f"| {label} | {tally} | {with_deliberate(tally, kind, figures, unexplained)} |")
    print(f"\ncases AgentV ran that the service did not: {figures.not_run}")
    deliberate = len(figures.differences) - len(unexplained)
    print(
        f"differences: {len(figures.differences)}, deliberate: {deliberate}, "
        f"unexplained: {len(unexplained)}"
    )
    for reason, count in sorted(by_reason(figures.differences, unexplained, relevant).items()):
        print(f"  deliberate [{reason}]: {count}")
    for difference in unexplained:
        print(f"  {difference}")
    for entry in idle:
        print(f"  NOW AGREES (drop from known.py and docs/design.md): {entry}")
    return 1 if unexplained or idle else 0


def with_deliberate(
    tally: Tally, kind: str, figures: Figures, unexplained: list[Difference]
) -> Tally:
    """``tally`` counting a comparison whose difference is deliberate as agreeing."""
    left = set(unexplained)
    covered = sum(d.kind == kind and d not in left for d in figures.differences)
    return Tally(agree=tally.agree + covered, total=tally.total)


def by_reason(
    differences: list[Difference], unexplained: list[Difference], entries: tuple[Deliberate, ...]
) -> dict[str, int]:
    """How many explained differences each deliberate reason covers (a case's verdict that
    follows from its other differences counts as ``follows``)."""
    left = set(unexplained)
    counts: dict[str, int] = {}
    for difference in differences:
        if difference in left:
            continue
        entry = next((e for e in entries if e.covers(difference)), None)
        reason = entry.reason if entry is not None else "follows"
        counts[reason] = counts.get(reason, 0) + 1
    return counts


def _isolated(argv: list[str], tools: Path | None) -> int:
    """Re-run this command in a new network namespace with only loopback up.

    With ``tools`` (``bun`` and ``uv``), in a mount namespace of its own too, where they
    are laid over ``/usr/local/bin``: AgentV finds them on its PATH and the service's
    sandbox on its own (``/usr/local/bin`` is on it), and nothing outside sees them.
    """
    unshare = ["unshare", "-n"]
    steps = ["ip link set lo up"]
    if tools is not None:
        unshare += ["-m", "--propagation", "private"]
        overlay = f"mount -t overlay overlay -o lowerdir={tools}:/usr/local/bin /usr/local/bin"
        # Where the overlay cannot be mounted, the programs stay missing on both sides alike.
        steps.append(f"{{ if {overlay}; then export {TOOLS_VARIABLE}={tools.parent}; fi; }}")
    command = " && ".join(steps) + " && exec " + " ".join(
        [sys.executable, "-m", "scripts.conformance.agentv", "--no-isolate",
         *(f"'{a}'" for a in argv)]
    )  # fmt: skip
    return subprocess.run([*unshare, "sh", "-c", command], cwd=ROOT, check=False).returncode


def _with_tools(entries: tuple[Deliberate, ...]) -> tuple[Deliberate, ...]:
    """The deliberate entries that apply: none for missing programs when bun and uv run."""
    if not os.environ.get(TOOLS_VARIABLE):
        return entries
    return tuple(entry for entry in entries if entry.reason != "program-missing")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suites", nargs="*", type=Path, help="suite files (default: the corpus)")
    parser.add_argument("--root", type=Path, help="workspace root of the suites given")
    parser.add_argument("--corpus", choices=("all", "own", "agentv"), default="all")
    parser.add_argument("--no-isolate", action="store_true", help="use the host's network")
    parser.add_argument("--verbose", action="store_true")
    arguments = parser.parse_args(argv)
    ensure_agentv()  # installs from npm before the network goes away
    if not arguments.no_isolate and os.geteuid() == 0 and shutil.which("unshare"):
        return _isolated(argv, ensure_tools())
    if arguments.suites:
        root = (arguments.root or Path.cwd()).resolve()
        suites = [Suite(root, path.resolve()) for path in arguments.suites]
    else:
        suites = (own_suites() if arguments.corpus in ("all", "own") else []) + (
            agentv_suites() if arguments.corpus in ("all", "agentv") else []
        )
    # Deliberate entries can be gone only on a whole corpus, not on suites picked by hand.
    labels = [] if arguments.suites else [suite.label for suite in suites]
    return report(run(suites, arguments.verbose), labels)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

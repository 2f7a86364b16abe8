"""promptfoo conformance: promptfoo 0.123.1 and this service on one fake LLM, compared.

Usage: .venv/bin/python -m scripts.conformance.promptfoo [CONFIG ...] [--fast] [--examples]
[--no-isolate] [--verbose]

With no CONFIG, the corpus: every config under tests/conformance/promptfoo (``--fast``: the
CI subset). ``--examples`` also checks promptfoo's example configs (read in place from
/work/shared/reference/promptfoo-examples): how many of those ``promptfoo validate`` accepts
load here. The whole run happens in a new network namespace with nothing but loopback
(``unshare --net``; ``--no-isolate`` skips that when not root). Exit status 1 when a
difference is not on docs/design.md's deliberate list, or a deliberate one agrees again.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

from scripts.conformance.agentv.install import TOOLS_VARIABLE, ensure_tools
from scripts.conformance.promptfoo import ours, peer
from scripts.conformance.promptfoo.compare import Difference, Tally, deliberate_keys
from scripts.conformance.promptfoo.fake import harness_fake
from scripts.conformance.promptfoo.install import FOLDER, ROOT, ensure_installed
from scripts.conformance.promptfoo.outcomes import ConfigOutcome
from testkit.fake_llm import RunningServer

CORPUS = ROOT / "tests" / "conformance" / "promptfoo"
EXAMPLES = Path("/work/shared/reference/promptfoo-examples")
FAST = (
    *("contains", "equals", "regex", "json", "pass_rule", "no_asserts", "python"),
    *("similar", "tools_call", "select_best", "transform", "is_sql", "provider_output"),
    *("scoring_function", "llm_rubric", "moderation", "provider_config", "image_parts"),
    *("classifier",),
    *("store_outputs", "conversation"),
    *("functions", "function_callbacks"),
)
"""The configs CI runs (about a minute with promptfoo's start-up)."""
_ISOLATED = "--in-namespace"


def loopback_up() -> None:
    """Bring up ``lo`` in this (new) network namespace."""
    with socket.socket() as sock:
        request = struct.pack("16sH22x", b"lo", 0)
        flags = struct.unpack("16sH22x", fcntl.ioctl(sock, 0x8913, request))[1]
        fcntl.ioctl(sock, 0x8914, struct.pack("16sH22x", b"lo", flags | 0x1))


def isolate(argv: list[str]) -> int | None:
    """Run this command again in a loopback-only namespace; None when already there."""
    if _ISOLATED in argv:
        loopback_up()
        return None
    unshare = shutil.which("unshare")
    if unshare is None or os.geteuid() != 0:
        raise SystemExit("needs root and unshare for a loopback-only network (or --no-isolate)")
    module = [sys.executable, "-m", "scripts.conformance.promptfoo", *argv, _ISOLATED]
    tools = ensure_tools()
    if tools is None:
        return subprocess.run([unshare, "--net", *module], check=False).returncode
    # bun (TypeScript asserts, transforms, scoring functions) laid over /usr/local/bin in a
    # mount namespace of this run's own, where the service's sandbox finds it on its PATH
    # (as the AgentV harness does); where the overlay cannot be mounted, TypeScript files are
    # refused by name here and the harness reports the difference.
    overlay = f"mount -t overlay overlay -o lowerdir={tools}:/usr/local/bin /usr/local/bin"
    script = f'{{ if {overlay}; then export {TOOLS_VARIABLE}="{tools.parent}"; fi; }}; exec "$@"'
    command = [unshare, "--net", "-m", "--propagation", "private", "sh", "-c", script, "sh"]
    return subprocess.run([*command, *module], check=False).returncode


def corpus(names: list[str], fast: bool) -> list[Path]:
    """The configs to compare."""
    if names:
        return [Path(name).resolve() for name in names]
    configs = sorted(CORPUS.glob("*.yaml"))
    return [path for path in configs if not fast or path.stem in FAST]


def example_configs() -> list[Path]:
    """promptfoo's example configs, as the reference folder holds them."""
    return sorted(EXAMPLES.rglob("promptfooconfig*.yaml"))


def _print_differences(differences: list[Difference], verbose: bool) -> None:
    for difference in differences:
        if difference.deliberate and not verbose:
            continue
        mark = "deliberate" if difference.deliberate else "DIFFERENT"
        print(f"  {mark} {difference.key}: promptfoo {difference.peer} | here {difference.ours}")


def _line(config: Path, theirs: ConfigOutcome, mine: ConfigOutcome) -> str:
    peer_side = f"{len(theirs.tests)} tests" + (" (refused)" if theirs.refused else "")
    ours_side = f"{len(mine.tests)}" + (f" (refused: {mine.refused})" if mine.refused else "")
    return f"{config.name}: promptfoo {peer_side}, here {ours_side}"


def run(args: argparse.Namespace) -> int:
    """Compare the tools; the exit status."""
    promptfoo = ensure_installed()
    known = deliberate_keys()
    tally = Tally()
    examples_valid = examples_loaded = 0
    not_loaded: list[str] = []
    fake = harness_fake()
    server = RunningServer(fake)
    server.start()
    try:
        with tempfile.TemporaryDirectory(prefix="pf-harness-") as folder:
            home = Path(folder)
            peer_env = peer.peer_env(fake.url, home)
            roots = [CORPUS, EXAMPLES]
            examples = example_configs() if args.examples else []
            names = ours.provider_ids([*examples, *corpus(args.configs, args.fast)])
            embedders = ours.embedding_ids(examples)
            moderators = ours.moderation_ids([*examples, *corpus(args.configs, args.fast)])
            classifiers = ours.classifier_ids([*examples, *corpus(args.configs, args.fast)])
            env = ours.service_env(
                fake.url, roots, home / "data", names, embedders, moderators, classifiers
            )
            with ours.service(env) as client:
                for config in corpus(args.configs, args.fast):
                    theirs = peer.run_eval(promptfoo, config, peer_env)
                    mine = ours.run_eval(client, config, roots)
                    tally.add(config.stem, theirs, mine, known)
                    print(_line(config, theirs, mine))
                if args.examples:
                    cache = FOLDER / "promptfoo-validate.json"
                    verdicts = peer.validate_all(promptfoo, examples, peer_env, cache)
                    for config in examples:
                        if verdicts[config] is not None:
                            continue
                        examples_valid += 1
                        problem = ours.validate(client, config, roots)
                        if problem is None:
                            examples_loaded += 1
                        else:
                            not_loaded.append(f"{config.relative_to(EXAMPLES)}: {problem}")
    finally:
        server.stop()
    print(f"\nconfigs: {tally.configs} ({tally.configs_run} run by both)")
    print(f"assertions agreeing: {tally.ratio(tally.asserts_agreeing, tally.asserts)}")
    print(f"tests agreeing: {tally.ratio(tally.tests_agreeing, tally.tests)}")
    seen = {difference.key for difference in tally.differences}
    _print_differences(tally.differences, args.verbose)
    unexpected = [d for d in tally.differences if not d.deliberate]
    ran = {config.stem for config in corpus(args.configs, args.fast)}
    agreeing_again = sorted(key for key in known if key.split("#")[0] in ran and key not in seen)
    for key in agreeing_again:
        print(f"  AGREES NOW {key}: listed as deliberate in docs/design.md, remove it there")
    if args.examples:
        print(f"\nexample configs promptfoo validates: {examples_valid}; "
              f"loading here: {tally.ratio(examples_loaded, examples_valid)}")  # fmt: skip
        for line in not_loaded:
            print(f"  not loaded: {line}")
    print(f"\nnew differences: {len(unexpected)}; deliberate ones agreeing: {len(agreeing_again)}")
    return 1 if unexpected or agreeing_again else 0


def main() -> None:
    """Parse the command line and run (in a loopback-only namespace unless told not to)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("configs", nargs="*", help="configs to compare (default: the corpus)")
    parser.add_argument("--fast", action="store_true", help="only the CI subset of the corpus")
    parser.add_argument("--examples", action="store_true", help="also promptfoo's examples")
    parser.add_argument("--no-isolate", action="store_true", help="skip the network namespace")
    parser.add_argument("--verbose", action="store_true", help="print deliberate differences")
    parser.add_argument(_ISOLATED, action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.no_isolate:
        status = isolate(sys.argv[1:])
        if status is not None:
            raise SystemExit(status)
    raise SystemExit(run(args))


if __name__ == "__main__":
    main()

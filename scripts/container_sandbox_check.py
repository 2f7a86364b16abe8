"""Container check: a code grader runs confined inside the project's image, run as compose runs it.

The image (built by ``../shared/tools/containers/run-container-checks.sh``, which
``scripts/ci_containers.sh`` runs first) is started with Podman the way ``docker-compose.yml``
starts its ``eval`` service (the options that bear on the sandbox: ``user``, ``security_opt``,
``cap_add``, ``cap_drop``, ``read_only``, ``tmpfs``; a volume on ``/data``), with code graders
on, a fake provider key in its environment and a workspace root mounted read-only. Inside the
container, ``POST /evaluate`` grades one case with three code graders of that root: a benign
one and one in Ruby (promptfoo's ``ruby`` asserts need the image's ``ruby``; their scores
must come back) and a probe that reports what it could see and do. Each fact
is one ``PASS``/``FAIL`` line; the closing line is ``N passed, N failed``; exit status 1 when
a check failed. The container has no network (``--network none``): it is reached through
``podman exec``, and nothing is published on the host.

Run (root, after the shared checks built the image):
    .venv/bin/python -m scripts.container_sandbox_check [--image localhost/eval-execution:local]
    .venv/bin/python -m scripts.container_sandbox_check --app-from app   # this tree's app/
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
IMAGE = "localhost/eval-execution:local"
CONTAINER = "eval-sandbox-check"
SECRET = "sk-fake-CONTAINER-7d2e90a4c1"
SUITES = "/srv/suites"
"""Where the workspace root is mounted in the container."""
APP = "/srv/eval-execution/app"
"""The application's code in the image."""

BENIGN = """\
import json, sys
case = json.load(sys.stdin)
print(json.dumps({"score": 1.0, "reasoning": "graded inside the sandbox"}))
"""

RUBY = """\
require 'json'
question = JSON.parse($stdin.read)['question']
puts JSON.generate({ score: 1.0, reasoning: "ruby #{RUBY_VERSION} graded #{question}" })
"""
"""A grader in Ruby: promptfoo's ``ruby`` asserts need the image's ``ruby`` in the sandbox."""

PROBE = f"""\
import json, os, resource, socket
secret = {SECRET!r}

def readable(path):
    try:
        with open(path, "rb") as handle:
            return len(handle.read(16)) > 0
    except OSError:
        return False

def listed(path):
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []

def writable(path):
    try:
        with open(os.path.join(path, "written-by-a-grader"), "w") as handle:
            handle.write("x")
        return True
    except OSError:
        return False

def connects(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        return True
    except OSError:
        return False

seen = False
for pid in listed("/proc"):
    if pid.isdigit():
        for name in ("environ", "cmdline"):
            try:
                seen = seen or secret in open(f"/proc/{{pid}}/{{name}}", "rb").read().decode()
            except (OSError, UnicodeDecodeError):
                pass
pids = [int(pid) for pid in listed("/proc") if pid.isdigit()]
facts = {{
    "secret_seen": seen or secret in str(os.environ),
    "max_pid": max(pids, default=0),
    "data": listed("/data"),
    "database": readable("/data/eval.db"),
    "data_writable": writable("/data"),
    "grader_folder_writable": writable(os.path.dirname(os.path.abspath(__file__))),
    "root": listed({SUITES!r}),
    "app": listed("/srv/eval-execution"),
    "venv": listed("/opt/venv"),
    "service_port": connects(8000),
    "uid": os.getuid(),
    "limits": [resource.getrlimit(r)[0] for r in (resource.RLIMIT_NPROC, resource.RLIMIT_NOFILE)],
    "scratch_writable": writable("."),
}}
print(json.dumps({{"score": 1.0, "details": facts}}))
"""

REQUEST = """\
import json, sys, urllib.request
body = sys.stdin.buffer.read()
request = urllib.request.Request(
    "http://127.0.0.1:8000/evaluate", data=body, headers={"content-type": "application/json"}
)
print(urllib.request.urlopen(request, timeout=120).read().decode())
"""

HEALTH = "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=3)"


def compose_options(compose_file: Path, service: str = "eval") -> list[str]:
    """The ``podman run`` options for what ``service`` of the compose file sets on its container.

    Only the keys that decide whether the sandbox can start are carried over; a key the
    check does not know how to pass on stops it, so a compose change is never ignored quietly.
    """
    loaded = yaml.safe_load(compose_file.read_text(encoding="utf-8"))
    settings: Mapping[str, Any] = loaded["services"][service]
    known = {
        "security_opt": "--security-opt",
        "cap_add": "--cap-add",
        "cap_drop": "--cap-drop",
        "tmpfs": "--tmpfs",
        "devices": "--device",
    }
    unsupported = {"privileged", "userns_mode", "sysctls", "ulimits", "pid", "ipc", "cgroup"}
    named = sorted(unsupported & set(settings))
    if named:
        raise SystemExit(f"container_sandbox_check: compose key(s) {named} are not carried over")
    options: list[str] = []
    for key, flag in known.items():
        values = settings.get(key) or []
        for value in [values] if isinstance(values, str) else values:
            options += [flag, str(value)]
    if settings.get("read_only"):
        options.append("--read-only")
    if settings.get("user"):
        options += ["--user", str(settings["user"])]
    return options


def write_root(root: Path) -> None:
    """The workspace root: one suite (one case: the benign grader, the probe, a Ruby grader),
    another."""
    folder = root / "sandbox"
    folder.mkdir(parents=True)
    (folder / "benign.py").write_text(BENIGN, encoding="utf-8")
    (folder / "ruby.rb").write_text(RUBY, encoding="utf-8")
    (folder / "probe.py").write_text(PROBE, encoding="utf-8")
    suite = {
        "tests": [
            {
                "id": "graded-in-the-container",
                "criteria": "anything",
                "input": "Say hello",
                "assertions": [
                    {"name": "benign", "type": "code-grader", "command": ["python3", "benign.py"]},
                    {"name": "probe", "type": "code-grader", "command": ["python3", "probe.py"]},
                    {"name": "ruby", "type": "code-grader", "command": ["ruby", "ruby.rb"]},
                ],
            }
        ]
    }
    (folder / "suite.yaml").write_text(yaml.safe_dump(suite), encoding="utf-8")
    other = root / "other"
    other.mkdir()
    (other / "suite.yaml").write_text(yaml.safe_dump({"tests": []}), encoding="utf-8")
    for path in (root, folder, *folder.iterdir(), other, *other.iterdir()):
        path.chmod(0o755 if path.is_dir() else 0o644)


class Checks:
    """PASS/FAIL lines and their counts."""

    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def check(self, name: str, ok: bool) -> None:
        """One check: ``PASS name`` or ``FAIL name``."""
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        print(f"{'PASS' if ok else 'FAIL'}  sandbox in the image: {name}", flush=True)


def podman(podman_bin: str, *args: str, stdin: bytes = b"", timeout: float = 180) -> str:
    """Run podman; its stdout (``CalledProcessError`` when it fails)."""
    done = subprocess.run(
        [podman_bin, *args], input=stdin, capture_output=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        raise subprocess.CalledProcessError(
            done.returncode, args, done.stdout, done.stderr.decode("utf-8", "replace")
        )
    return done.stdout.decode("utf-8", "replace")


def wait_healthy(podman_bin: str, seconds: float) -> bool:
    """Until ``/healthz`` answers inside the container."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            podman(podman_bin, "exec", CONTAINER, "python", "-c", HEALTH, timeout=20)
            return True
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
            time.sleep(0.5)
    return False


def judge(checks: Checks, graders: Sequence[Mapping[str, Any]], uid: int) -> None:
    """The PASS/FAIL lines for the graders' results."""
    by_name = {grader.get("name"): grader for grader in graders}
    probe = by_name.get("probe", {})
    for name, what in (("benign", "a benign code grader"), ("ruby", "a grader in Ruby")):
        grader = by_name.get(name, {})
        checks.check(
            f"{what} runs and scores ({grader.get('score')}, "
            f"{grader.get('status')}: {grader.get('reasoning') or grader.get('error')})",
            grader.get("score") == 1.0 and grader.get("status") != "error",
        )
    facts: Mapping[str, Any] = (probe.get("details") or {}).get("program") or {}
    if not facts:
        checks.check(f"the probe ran: {json.dumps(probe)[:600]}", False)
        return
    expectations: list[tuple[str, Callable[[Any], bool]]] = [
        ("secret_seen", lambda v: v is False),
        ("max_pid", lambda v: 0 <= v < 10),
        ("data", lambda v: v == []),
        ("database", lambda v: v is False),
        ("data_writable", lambda v: v is False),
        ("grader_folder_writable", lambda v: v is False),
        ("root", lambda v: v == ["sandbox"]),
        ("app", lambda v: v == []),
        ("venv", lambda v: v == []),
        ("service_port", lambda v: v is False),
        ("uid", lambda v: v == uid),
        ("limits", lambda v: v == [128, 256]),
        ("scratch_writable", lambda v: v is True),
    ]
    meaning = {
        "secret_seen": "the service's key is not in any /proc it sees nor in its environment",
        "max_pid": "its own PID namespace",
        "data": "/data (the database's folder) is not there",
        "database": "the SQLite database cannot be read",
        "data_writable": "/data cannot be written",
        "grader_folder_writable": "the grader's own folder cannot be written",
        "root": "of the workspace root only the grader's folder is there",
        "app": "the application's code is not there",
        "venv": "the service's virtual environment is not there",
        "service_port": "the service's port on the container's loopback is out of reach",
        "uid": f"runs as the service's unprivileged user ({uid})",
        "limits": "under the default limits on processes and open files",
        "scratch_writable": "its scratch folder is writable",
    }
    for key, expected in expectations:
        value = facts.get(key)
        checks.check(f"{meaning[key]} ({key}={json.dumps(value)})", expected(value))


def log_message(line: str) -> str:
    """The message of one of the service's JSON log lines (the line itself if not JSON)."""
    try:
        return str(json.loads(line).get("message", line))
    except (ValueError, AttributeError):
        return line


def main(argv: Sequence[str] | None = None) -> int:
    """Start the container, grade the suite inside it, print the checks; 1 when one failed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image", default=IMAGE)
    parser.add_argument("--podman", default="podman")
    parser.add_argument("--compose-file", type=Path, default=ROOT / "docker-compose.yml")
    parser.add_argument(
        "--app-from",
        type=Path,
        help="mount this app/ folder over the image's (try a change without rebuilding)",
    )
    args = parser.parse_args(argv)
    checks = Checks()
    if shutil.which(args.podman) is None:
        print(f"container_sandbox_check: {args.podman} not found", file=sys.stderr)
        return 2
    try:
        podman(args.podman, "image", "exists", args.image)
    except subprocess.CalledProcessError:
        print(f"container_sandbox_check: no image {args.image} (run the shared checks first)")
        return 2
    options = compose_options(args.compose_file)
    user = podman(args.podman, "image", "inspect", "--format", "{{.Config.User}}", args.image)
    uid = int(user.strip().split(":")[0] or 0)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="eval-sandbox-check-") as name:
        root = Path(name) / "root"
        write_root(root)
        Path(name).chmod(0o755)
        subprocess.run([args.podman, "rm", "-f", CONTAINER], capture_output=True, check=False)
        try:
            podman(
                args.podman,
                "run",
                "-d",
                "--name",
                CONTAINER,
                "--network",
                "none",
                *options,
                "-v",
                f"{root}:{SUITES}:ro",
                *(["-v", f"{args.app_from.resolve()}:{APP}:ro"] if args.app_from else []),
                "-e",
                "EVAL_CODE_GRADERS=true",
                "-e",
                f"EVAL_WORKSPACE_ROOTS={SUITES}",
                "-e",
                f"FAKE_PROVIDER_API_KEY={SECRET}",
                "-e",
                "EVAL_SAMPLE_RUN=false",
                args.image,
            )
            up = wait_healthy(args.podman, 120)
            checks.check(f"container up with compose's options {options or '(none)'}", up)
            if up:
                grade(args.podman, checks, uid)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            said = getattr(exc, "stderr", "") or ""
            checks.check(f"podman: {exc} {str(said)[-600:]}", False)
        finally:
            logs = subprocess.run(
                [args.podman, "logs", CONTAINER], capture_output=True, text=True, check=False
            )
            said = logs.stdout + logs.stderr
            for line in said.splitlines():
                if "program sandbox runs without" in line:
                    print(f"NOTE  sandbox in the image: {log_message(line)}")
            if checks.failed:
                print(said[-3000:])
            subprocess.run(
                [args.podman, "rm", "-f", "-t", "10", CONTAINER], capture_output=True, check=False
            )
    print(f"sandbox in the image: {time.monotonic() - started:.1f} s")
    print(f"{checks.passed} passed, {checks.failed} failed")
    return 1 if checks.failed else 0


def grade(podman_bin: str, checks: Checks, uid: int) -> None:
    """``POST /evaluate`` the suite inside the container and judge the graders' results."""
    body = json.dumps({"suite": "sandbox/suite.yaml"}).encode()
    said = podman(podman_bin, "exec", "-i", CONTAINER, "python", "-c", REQUEST, stdin=body)
    reply = json.loads(said)
    record = reply["results"][0]
    graders = record.get("evaluator_results") or []
    checks.check(f"the case was graded ({record.get('status')})", bool(graders))
    judge(checks, graders, uid)
    checks.check("no secret in the reply", SECRET not in said)


if __name__ == "__main__":
    sys.exit(main())

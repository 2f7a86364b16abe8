"""A program a suite names sees nothing of the service and can do nothing outside its case.

Each probe runs as a code grader of a suite under the workspace root, on the real service,
and reports what it managed; on an unconfined runner each of these finds the secret, reads
the database, writes outside, connects out or outlives its run.
"""

from __future__ import annotations

import os
import random
import sqlite3
import time
from pathlib import Path

from tests.security.conftest import MEMORY_LIMIT, PROCESS_LIMIT, SECRET, Service, facts, report

SCAN_PROC = f"""
import os
secret = {SECRET!r}
found, service = False, False
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    for name in ("environ", "cmdline"):
        try:
            data = open(f"/proc/{{pid}}/{{name}}", "rb").read().decode("utf-8", "replace")
        except OSError:
            continue
        found = found or secret in data
        service = service or "uvicorn" in data
parent = os.getppid()
try:
    open(f"/proc/{{parent}}/environ", "rb").read()
    parent_env = True
except OSError:
    parent_env = False
pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
"""


def test_a_program_cannot_read_the_services_environment_through_proc(service: Service) -> None:
    program = SCAN_PROC + report(
        found="found", service="service", env="secret in str(os.environ)", pids="pids"
    )
    seen = facts(service.grade("proc", program))
    assert seen["found"] is False
    assert seen["env"] is False
    assert seen["service"] is False  # no process of the host is visible
    assert service.pid not in seen["pids"]
    assert max(seen["pids"]) < 10  # its own PID namespace: a handful of its own processes


def test_a_program_cannot_read_the_database_or_the_data_folder(service: Service) -> None:
    database = service.data / "eval.db"
    assert database.is_file()
    program = """
import os
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
""" + report(
        database=f"readable({str(database)!r})",
        data=f"listed({str(service.data)!r})",
        root=f"listed({str(service.root)!r})",
        outside=f"readable({str(service.outside / 'private.txt')!r})",
        passwd="readable('/etc/passwd')",
    )
    seen = facts(service.grade("database", program))
    assert seen == {
        "database": False,
        "data": [],
        "root": ["database"],  # of the workspace root only its own folder is there
        "outside": False,
        "passwd": False,
    }


def test_a_program_cannot_write_outside_its_case(service: Service) -> None:
    targets = {
        "own_folder": service.root / "write" / "planted.py",
        "root": service.root / "planted.txt",
        "data": service.data / "planted.txt",
        "outside": service.outside / "planted.txt",
        "host_tmp": Path(f"/tmp/eval-security-planted-{os.getpid()}.txt"),
    }
    program = """
def wrote(path):
    try:
        with open(path, "w") as handle:
            handle.write("planted")
        return True
    except OSError:
        return False
""" + report(**{name: f"wrote({str(path)!r})" for name, path in targets.items()})
    seen = facts(service.grade("write", program))
    assert seen["own_folder"] is False  # the grader's own folder is read-only
    assert not any(path.exists() for path in targets.values())
    targets["host_tmp"].unlink(missing_ok=True)


def test_a_program_cannot_connect_anywhere(service: Service) -> None:
    port = int(service.url.rsplit(":", 1)[1])
    program = """
import socket
def reaches(host, port):
    try:
        socket.create_connection((host, port), timeout=2).close()
        return True
    except OSError:
        return False
""" + report(
        service=f"reaches('127.0.0.1', {port})",
        interfaces="sorted(name for _, name in socket.if_nameindex())",
    )
    seen = facts(service.grade("network", program))
    assert seen == {"service": False, "interfaces": ["lo"]}  # nothing but its own loopback


def test_a_program_cannot_take_more_memory_than_its_limit(service: Service) -> None:
    program = f"""
try:
    block = bytearray({2 * MEMORY_LIMIT})
    allocated = True
except MemoryError:
    allocated = False
""" + report(allocated="allocated")
    assert facts(service.grade("memory", program)) == {"allocated": False}


def test_a_program_cannot_start_processes_without_end(service: Service) -> None:
    program = """
import subprocess
children = []
try:
    for _ in range(300):
        children.append(subprocess.Popen(["sleep", "30"]))
except OSError:
    pass
for child in children:
    child.kill()
""" + report(started="len(children)")
    started = facts(service.grade("processes", program))["started"]
    assert 0 < started < PROCESS_LIMIT


def _running(marker: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in command:
            found.append(int(pid))
    return found


def _gone(marker: str, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while _running(marker):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_background_child_does_not_outlive_its_program(service: Service) -> None:
    first, second = (str(random.randrange(10**8, 10**9)) for _ in range(2))
    program = f"""
import subprocess
subprocess.Popen(["sleep", "{first}"], start_new_session=True)
subprocess.Popen(["sh", "-c", "sleep {second} &"])
""" + report(started="True")
    assert facts(service.grade("orphan", program)) == {"started": True}
    assert _gone(first)
    assert _gone(second)


def test_a_program_past_its_time_limit_dies_with_its_whole_tree(service: Service) -> None:
    marker = str(random.randrange(10**8, 10**9))
    program = f"""
import subprocess, time
subprocess.Popen(["sleep", "{marker}"], start_new_session=True)
time.sleep(60)
"""
    result = service.grade("timeout", program)
    assert result["status"] == "error"
    assert "timed out after 5 s" in result["reasoning"]
    assert _gone(marker)


def test_what_a_program_prints_is_stored_without_secrets(service: Service) -> None:
    program = f"""
import json, sys
secret = {SECRET!r}
sys.stderr.write("key: " + secret)
print(json.dumps({{"score": 0.5, "reasoning": "the key is " + secret,
                  "hits": [secret], "details": {{"key": secret}}}}))
"""
    created = service.post("/runs", {"suite": service.write_suite("unredacted", program)})
    assert created.status_code == 202, created.text
    run_id = created.json()["id"]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        run = service.get(f"/runs/{run_id}")
        if run["status"] == "completed":
            break
        time.sleep(0.1)
    results = service.get(f"/runs/{run_id}/results")
    shown = str(results)
    assert "the key is [redacted]" in shown
    assert SECRET not in shown
    with sqlite3.connect(service.data / "eval.db") as database:
        rows = database.execute("SELECT * FROM results").fetchall()
    assert rows
    assert SECRET not in str(rows)

"""What can be checked of the image and the compose file without a Docker engine."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import yaml

from app.settings import Settings
from app.settings.targets import load_targets_file, with_default_target
from scripts.settings_table import env_name

ROOT = Path(__file__).resolve().parents[2]
SETTINGS_VARIABLES = {env_name(name) for name in Settings.model_fields}


def instructions() -> list[tuple[str, str]]:
    """The Dockerfile's instructions as (KEYWORD, arguments), continuation lines joined."""
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    logical = re.sub(r"\\\n(\s*#.*\n)*", " ", text)
    found = []
    for line in logical.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            keyword, _, arguments = line.strip().partition(" ")
            found.append((keyword.upper(), arguments.strip()))
    return found


def arguments_of(keyword: str) -> list[str]:
    return [arguments for name, arguments in instructions() if name == keyword]


def uvicorn_launch(argv: list[str]) -> tuple[str, bool]:
    """(app import string, whether --factory) of a uvicorn command line."""
    start = next(index for index, word in enumerate(argv) if word.endswith("uvicorn"))
    words = argv[start + 1 :]
    app = next(word for word in words if re.fullmatch(r"[\w.]+:\w+", word))
    return app, "--factory" in words


def option(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def image_command() -> list[str]:
    (cmd,) = arguments_of("CMD")
    argv: list[str] = json.loads(cmd)
    return argv


def readme_run_commands() -> list[list[str]]:
    """The uvicorn command lines the README runs: in its code blocks, or in scripts it calls."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    code = "\n".join(re.findall(r"^```[^\n]*\n(.*?)^```", readme, flags=re.MULTILINE | re.DOTALL))
    sources = [code]
    for script in sorted(set(re.findall(r"\b(scripts/serve)\b", code))):
        sources.append((ROOT / script).read_text(encoding="utf-8"))
    commands = []
    for source in sources:
        for line in source.splitlines():
            command = line.split("#", 1)[0].strip().removeprefix("$ ")
            if re.search(r"(^|[\s/])uvicorn\s+\S", command):
                commands.append(shlex.split(command))
    return commands


def test_the_image_starts_the_app_the_way_the_readme_run_command_does() -> None:
    command = image_command()
    readme_commands = readme_run_commands()

    assert readme_commands, (
        "README.md should show how to run the service (uvicorn or scripts/serve)"
    )
    for readme_command in readme_commands:
        assert uvicorn_launch(command) == uvicorn_launch(readme_command), (
            f"Dockerfile CMD {command} and README run command {readme_command} start different apps"
        )
        assert re.search(r"8000\}?$", option(readme_command, "--port"))
        # A SIGTERM during a hanging provider call must not leave the process alive.
        assert option(readme_command, "--timeout-graceful-shutdown") == option(
            command, "--timeout-graceful-shutdown"
        ), f"{readme_command} bounds the graceful shutdown as the image does"
    assert command[0] == "uvicorn", "uvicorn must be PID 1 (exec-form CMD, no shell)"
    assert option(command, "--port") == "8000"
    assert option(command, "--host") == "0.0.0.0"
    assert int(option(command, "--timeout-graceful-shutdown")) > 0


def test_the_image_is_pinned_multi_stage_unprivileged_and_checks_its_health() -> None:
    bases = [words.split()[0] for words in arguments_of("FROM")]
    assert len(bases) >= 2, "build and runtime stages"
    assert all(re.fullmatch(r"python:3\.11\.\d+-slim-bookworm", base) for base in bases), bases
    (user,) = arguments_of("USER")
    assert user.split(":")[0] not in ("root", "0")
    assert arguments_of("EXPOSE") == ["8000"]
    (healthcheck,) = arguments_of("HEALTHCHECK")
    assert "http://127.0.0.1:8000/healthz" in healthcheck
    assert "/data" in " ".join(arguments_of("VOLUME"))
    assert any("EVAL_DATA_DIR=/data" in env for env in arguments_of("ENV"))
    copies = " ".join(arguments_of("COPY"))
    assert "requirements.lock" in copies
    installs = " ".join(arguments_of("RUN"))
    assert "-r /tmp/requirements.lock" in installs


def compose() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return document


def app_services() -> dict[str, dict[str, Any]]:
    return {name: spec for name, spec in compose()["services"].items() if "build" in spec}


def test_every_setting_the_compose_file_passes_exists() -> None:
    for name, service in app_services().items():
        passed = set(service.get("environment", {}))
        unknown = {key for key in passed if key.startswith("EVAL_")} - SETTINGS_VARIABLES
        assert not unknown, f"service {name} passes settings that do not exist: {unknown}"


def test_the_service_waits_for_a_healthy_postgres_and_mounts_the_targets_read_only() -> None:
    services = compose()["services"]
    postgres = services["postgres"]
    assert "healthcheck" in postgres
    assert any(volume.split(":")[0] in compose()["volumes"] for volume in postgres["volumes"])
    for name, service in app_services().items():
        assert service["depends_on"]["postgres"]["condition"] == "service_healthy", name
        targets = service["environment"]["EVAL_TARGETS_FILE"]
        assert f"./deploy/targets.yaml:{targets}:ro" in service["volumes"], name
        assert service["environment"]["EVAL_DATABASE_URL"].startswith("postgresql+asyncpg://")
        assert any(entry["path"] == ".env" for entry in service["env_file"]), name


def test_the_replicas_profile_runs_two_replicas_on_one_database_on_distinct_ports() -> None:
    services = app_services()
    default = [spec for spec in services.values() if "profiles" not in spec]
    replicas = [spec for spec in services.values() if "replicas" in spec.get("profiles", [])]
    started = default + replicas

    assert len(default) == 1
    assert len(started) == 2
    assert len({spec["environment"]["EVAL_DATABASE_URL"] for spec in started}) == 1
    ports = [port.split(":")[0] for spec in started for port in spec["ports"]]
    assert len(set(ports)) == 2


def test_the_example_env_file_lists_every_setting() -> None:
    text = (ROOT / ".env.example").read_text(encoding="utf-8")
    listed = set(re.findall(r"^#? ?(EVAL_[A-Z0-9_]+)=", text, flags=re.MULTILINE))

    assert listed == SETTINGS_VARIABLES


def test_the_example_targets_file_loads() -> None:
    targets = with_default_target(load_targets_file(ROOT / "deploy" / "targets.yaml", environ={}))

    assert "default" in [target.name for target in targets]


def test_the_build_context_holds_the_app_and_the_lock_only() -> None:
    text = (ROOT / ".dockerignore").read_text(encoding="utf-8")
    rules = [line.strip() for line in text.splitlines() if line.strip() and line[0] != "#"]

    assert rules[:3] == ["*", "!requirements.lock", "!app/"]

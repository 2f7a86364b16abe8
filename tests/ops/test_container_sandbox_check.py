"""The container check of the sandbox runs the image with the compose file's own options."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from scripts.container_sandbox_check import ROOT, compose_options


def test_the_compose_files_options_for_the_service_are_carried_over(tmp_path: Path) -> None:
    assert isinstance(compose_options(ROOT / "docker-compose.yml"), list)
    compose = tmp_path / "compose.yml"
    service = {"security_opt": ["seccomp=unconfined"], "cap_drop": ["ALL"], "read_only": True}
    compose.write_text(yaml.safe_dump({"services": {"eval": service}}))
    assert compose_options(compose) == [
        "--security-opt",
        "seccomp=unconfined",
        "--cap-drop",
        "ALL",
        "--read-only",
    ]


def test_an_option_the_check_cannot_carry_over_stops_it(tmp_path: Path) -> None:
    compose = tmp_path / "compose.yml"
    compose.write_text(yaml.safe_dump({"services": {"eval": {"privileged": True}}}))
    with pytest.raises(SystemExit, match="privileged"):
        compose_options(compose)

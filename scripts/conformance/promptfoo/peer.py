"""Run promptfoo itself: ``promptfoo eval`` (JSON output) and ``promptfoo validate``."""

from __future__ import annotations

import hashlib
import json
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from scripts.conformance.promptfoo.install import PROMPTFOO_VERSION, Promptfoo
from scripts.conformance.promptfoo.outcomes import AssertOutcome, ConfigOutcome, TestOutcome

SEARCH_PATH = "/usr/local/bin:/usr/bin:/bin"
FAKE_URL_VARIABLE = "FAKE_LLM_URL"
EVAL_TIMEOUT_SECONDS = 300
QUIET_ENV = {
    "PROMPTFOO_DISABLE_TELEMETRY": "1",
    "PROMPTFOO_DISABLE_UPDATE": "1",
    "PROMPTFOO_DISABLE_SHARING": "1",
    "PROMPTFOO_DISABLE_REMOTE_GENERATION": "1",
    "PROMPTFOO_CACHE_ENABLED": "false",
    "PROMPTFOO_DISABLE_WAL_MODE": "1",
    "NO_COLOR": "1",
    "NODE_NO_WARNINGS": "1",
}
"""No telemetry, no update check, no sharing, no cache, no colours."""


def peer_env(fake_url: str, home: Path) -> dict[str, str]:
    """The environment of promptfoo: quiet, its state under ``home``, OpenAI at the fake server."""
    return {
        "PATH": SEARCH_PATH,
        "HOME": str(home),
        "PROMPTFOO_CONFIG_DIR": str(home / ".promptfoo"),
        "OPENAI_BASE_URL": f"{fake_url}/v1",
        "OPENAI_API_KEY": "fake-key",
        # promptfoo's Hugging Face providers take no base URL from the environment: a corpus
        # config points one at the fake with `apiEndpoint: "{{ env.FAKE_LLM_URL }}/..."`
        FAKE_URL_VARIABLE: fake_url,
        "PROMPTFOO_PYTHON": "python3",  # its prompt functions spawn `python`, absent here
        **QUIET_ENV,
    }


def _component_passed(component: dict[str, Any]) -> bool | None:
    passed = component.get("pass")
    return passed if isinstance(passed, bool) else None


def _test(result: dict[str, Any]) -> TestOutcome:
    response = result.get("response") or {}
    output = response.get("output")
    grading = result.get("gradingResult") or {}
    components = grading.get("componentResults") or []
    asserts = tuple(
        AssertOutcome(
            type=str((component.get("assertion") or {}).get("type", "?")),
            passed=_component_passed(component),
        )
        for component in components
        if isinstance(component, dict)
    )
    error = result.get("error") if not grading else None
    passed = bool(result.get("success")) if not error else None
    return TestOutcome(
        passed=passed,
        output=output if isinstance(output, str) else json.dumps(output),
        asserts=asserts,
    )


def run_eval(promptfoo: Promptfoo, config: Path, env: dict[str, str]) -> ConfigOutcome:
    """``promptfoo eval`` on ``config``; its tests by (test, prompt) order, or its error."""
    with tempfile.TemporaryDirectory(prefix="pf-out-") as folder:
        output = Path(folder) / "out.json"
        command = promptfoo.command(
            "eval", "-c", str(config), "-o", str(output), "--no-cache", "--no-table",
            "--no-progress-bar", "--no-write", "-j", "1",
        )  # fmt: skip
        done = subprocess.run(
            command, cwd=config.parent, env=env, capture_output=True, text=True,
            timeout=EVAL_TIMEOUT_SECONDS, check=False,
        )  # fmt: skip
        if not output.exists():
            return ConfigOutcome(refused=_last_lines(done.stderr or done.stdout))
        data = json.loads(output.read_text())
    results = data["results"]["results"]
    results.sort(key=lambda item: (item.get("testIdx", 0), item.get("promptIdx", 0)))
    return ConfigOutcome(tests=tuple(_test(result) for result in results))


def validate_all(
    promptfoo: Promptfoo, configs: list[Path], env: dict[str, str], cache: Path
) -> dict[Path, str | None]:
    """``validate`` of every config, three at a time, remembered in ``cache`` by content.

    promptfoo takes several seconds of CPU to start, so its verdicts on configs that have not
    changed (nor the files beside them) are kept between runs.
    """
    known: dict[str, str | None] = json.loads(cache.read_text()) if cache.exists() else {}

    def one(config: Path) -> str | None:
        key = _fingerprint(config)
        if key not in known:
            known[key] = validate(promptfoo, config, env)
            cache.write_text(json.dumps(known, indent=1, sort_keys=True))
        return known[key]

    with ThreadPoolExecutor(max_workers=3) as pool:
        return dict(zip(configs, pool.map(one, configs), strict=True))


def _fingerprint(config: Path) -> str:
    digest = hashlib.sha256(f"{PROMPTFOO_VERSION}:{config}".encode())
    for path in sorted(config.parent.rglob("*")):
        if path.is_file() and path.stat().st_size < 10_000_000:
            digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()


def validate(promptfoo: Promptfoo, config: Path, env: dict[str, str]) -> str | None:
    """``promptfoo validate`` on ``config``: None when valid, else its complaint."""
    done = subprocess.run(
        promptfoo.command("validate", "-c", str(config)), cwd=config.parent, env=env,
        capture_output=True, text=True, timeout=EVAL_TIMEOUT_SECONDS, check=False,
    )  # fmt: skip
    if done.returncode == 0:
        return None
    return _last_lines(done.stdout + done.stderr)


def _last_lines(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return " | ".join(lines[-3:]) or "no output"

"""Run this service (a real uvicorn process) on the same configs, against the same fake LLM."""

from __future__ import annotations

import functools
import json
import os
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import yaml

from scripts.conformance.agentv.install import TOOLS_VARIABLE
from scripts.conformance.promptfoo.outcomes import AssertOutcome, ConfigOutcome, TestOutcome
from testkit.server import running_service, wait_until_healthy

SEARCH_PATH = "/usr/local/bin:/usr/bin:/bin"
PROVIDER_IDS = ("openai:chat:fake-model", "openai:fake-model", "openai:gpt-4.1-mini")
"""The provider ids the corpus names, each a target here (the same fake model)."""
EMBEDDING_IDS = ("openai:embedding:fake-embed",)
"""The embedding provider the corpus names: an embeddings target here, on the fake server
(promptfoo's default embedding provider goes to the same server, through OPENAI_BASE_URL)."""
PASSED_STATUS = {"passed": True, "failed": False, "borderline": False}


def provider_ids(configs: Sequence[Path]) -> set[str]:
    """The provider ids and labels the configs name (as an operator maps them to targets)."""
    found: set[str] = set()
    for config in configs:
        try:
            document = yaml.safe_load(config.read_text())
        except (OSError, yaml.YAMLError):
            continue
        providers = document.get("providers") if isinstance(document, dict) else None
        listed = providers if isinstance(providers, list) else [providers]
        for provider in listed:
            if isinstance(provider, str):
                found.add(provider)
            elif isinstance(provider, dict):
                found.update(
                    str(provider[key])
                    for key in ("id", "label")
                    if isinstance(provider.get(key), str)
                )
    return found


_EMBEDDING_ID = re.compile(r"\b[a-z][\w-]*:embeddings?:[\w./:-]+")
_MODERATION_ID = re.compile(r"\b[a-z][\w-]*:moderation:[\w./:-]+")
_CLASSIFIER_ID = re.compile(r"\bhuggingface:text-classification:[\w./-]+")


def _ids_written(configs: Sequence[Path], pattern: re.Pattern[str]) -> set[str]:
    found: set[str] = set()
    for config in configs:
        try:
            found.update(pattern.findall(config.read_text()))
        except OSError:
            continue
    return found


def embedding_ids(configs: Sequence[Path]) -> set[str]:
    """The embedding provider ids the configs write (``openai:embedding:<model>``...)."""
    return _ids_written(configs, _EMBEDDING_ID)


def moderation_ids(configs: Sequence[Path]) -> set[str]:
    """The moderation provider ids the configs write (``replicate:moderation:<model>``...)."""
    return _ids_written(configs, _MODERATION_ID)


def classifier_ids(configs: Sequence[Path]) -> set[str]:
    """The classifier provider ids the configs write (``huggingface:text-classification:...``)."""
    return _ids_written(configs, _CLASSIFIER_ID)


def service_env(
    fake_url: str,
    roots: Sequence[Path],
    data_dir: Path,
    names: Iterable[str] = (),
    embedding_names: Iterable[str] = (),
    moderation_names: Iterable[str] = (),
    classifier_names: Iterable[str] = (),
) -> dict[str, str]:
    """The service's environment: targets on the fake server (the corpus's provider ids and
    ``names``; embeddings targets for ``EMBEDDING_IDS``, first, and ``embedding_names``;
    moderation targets, its ``/moderations``, for ``moderation_names``; classifier targets, its
    Hugging Face text classification, for ``classifier_names``), the corpus folders as
    workspace roots."""
    special = {*embedding_names, *moderation_names, *classifier_names}
    targets = [
        {"name": name, "provider": "openai", "base_url": f"{fake_url}/v1",
         "model": name.rsplit(":", 1)[-1] or "fake-model", "api_key": "fake-key"}
        for name in sorted({*PROVIDER_IDS, *names} - special)
    ]  # fmt: skip
    targets += [
        {"name": name, "provider": "openai", "api_format": "embeddings", "api_key": "fake-key",
         "base_url": f"{fake_url}/v1", "model": name.rsplit(":", 1)[-1]}
        for name in [*EMBEDDING_IDS, *sorted(set(embedding_names) - set(EMBEDDING_IDS))]
    ]  # fmt: skip
    targets += [
        {"name": name, "provider": "openai", "api_format": "moderation", "api_key": "fake-key",
         "base_url": f"{fake_url}/v1", "model": "omni-moderation-latest"}
        for name in sorted(set(moderation_names))
    ]  # fmt: skip
    targets += [
        {"name": name, "provider": "huggingface", "task": "text-classification",
         "base_url": f"{fake_url}/hf-inference", "model": name.split(":", 2)[2]}
        for name in sorted(set(classifier_names))
    ]  # fmt: skip
    return {
        "PATH": SEARCH_PATH,
        "PYTHONPATH": str(Path(sys.executable).parent.parent),
        "EVAL_DATA_DIR": str(data_dir),
        "EVAL_TARGETS": json.dumps(targets),
        "EVAL_WORKSPACE_ROOTS": ",".join(str(root) for root in roots),
        "EVAL_CODE_GRADERS": "true",
        "EVAL_HOSTED_TOOLS": "true",
        "EVAL_IMAGE_URLS": "true",
        "EVAL_RETRY_MAX_ATTEMPTS": "1",
        # bun, where the harness laid it over /usr/local/bin: the sandbox must see its files
        **({"EVAL_SANDBOX_RUNTIME": tools} if (tools := os.environ.get(TOOLS_VARIABLE)) else {}),
    }


@contextmanager
def service(env: dict[str, str]) -> Iterator[httpx.Client]:
    """The service running with ``env``, and a client for it."""
    wait = functools.partial(wait_until_healthy, timeout=180.0)  # a busy machine starts slowly
    started = running_service(env, wait=wait)
    with started as (url, _), httpx.Client(base_url=url, timeout=300) as client:
        yield client


def _problem(reply: httpx.Response) -> str:
    try:
        body = reply.json()
    except ValueError:
        return f"{reply.status_code}: {reply.text[:300]}"
    errors = body.get("errors") or []
    shown = [f"{error.get('path', '')}: {error.get('message', '')}" for error in errors[:6]]
    return " | ".join(shown) or str(body.get("detail", body))


def _test(record: dict[str, Any]) -> TestOutcome:
    asserts = tuple(
        AssertOutcome(type=str(result.get("type")), passed=result.get("passed"))
        for result in record.get("evaluator_results") or []
    )
    return TestOutcome(
        passed=PASSED_STATUS.get(str(record.get("status"))),
        output=record.get("candidate_answer"),
        asserts=asserts,
    )


def suite_path(config: Path, roots: Sequence[Path]) -> str:
    """The config's path relative to the workspace root that holds it."""
    for root in roots:
        if config.is_relative_to(root):
            return config.relative_to(root).as_posix()
    raise ValueError(f"{config} is under none of the workspace roots")


def run_eval(client: httpx.Client, config: Path, roots: Sequence[Path]) -> ConfigOutcome:
    """``POST /evaluate`` with the config's path; its tests in order, or the refusal."""
    reply = client.post("/evaluate", json={"suite": suite_path(config, roots)})
    if reply.status_code != 200:
        return ConfigOutcome(refused=_problem(reply))
    body = reply.json()
    ungraded = body.get("summary", {}).get("ungraded")
    return ConfigOutcome(
        tests=tuple(_test(record) for record in body["results"]),
        ungraded=ungraded if isinstance(ungraded, int) else None,
    )


def validate(client: httpx.Client, config: Path, roots: Sequence[Path]) -> str | None:
    """``POST /validate`` with the config's path: None when it loads, else the errors."""
    reply = client.post("/validate", json={"suite": suite_path(config, roots)})
    if reply.status_code != 200:
        return _problem(reply)
    body = reply.json()
    if body.get("valid") is False:
        return _problem(httpx.Response(422, json=body))
    return None

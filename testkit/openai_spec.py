"""Validate ``/v1`` response bodies against OpenAI's own OpenAPI description, read in place.

The description is third-party material: it is read from ``EVAL_TEST_OPENAI_SPEC`` (default
``/work/shared/reference/openai-openapi/openapi.yaml``) and never copied into the repository;
tests skip with the path in their reason when it is absent. Each response is matched to its
operation (method and path template), its status must be one the operation documents (an
error status falls back to OpenAI's ``ErrorResponse``), and its JSON body is validated with
JSON Schema 2020-12 (OpenAPI 3.1's dialect) against the schema the spec gives for that status.

``ALLOWED`` is the short list of places where the spec contradicts itself (its schema says one
thing, its own examples or request schemas another); each entry says why. Nothing else is
forgiven. One more contradiction is handled where it applies (``ERROR_WRAPPER``): a few
operations document their 400/404 as a bare ``Error`` object, while the API (and the SDK,
which reads ``body["error"]``) wraps every error as ``{"error": Error}`` (``ErrorResponse``,
the schema the spec gives every other error): those are validated as ``ErrorResponse``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import yaml
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

SPEC_VARIABLE = "EVAL_TEST_OPENAI_SPEC"
# shared/ lies beside the repository (CI's clone too).
DEFAULT_SPEC = Path(__file__).resolve().parents[2] / "shared/reference/openai-openapi/openapi.yaml"
SPEC_URI = "urn:openai-openapi"
PREFIX = "/v1"
EXTENSIONS = ("/v1/imports/",)
"""This service's own routes under ``/v1`` (the migration's far end), not OpenAI's API."""


@dataclass(frozen=True)
class Allowance:
    """A contradiction inside the spec, and the errors it excuses.

    Errors at ``where`` (a regex over the JSON path) whose keyword is ``keyword`` (and, if
    set, whose instance is ``value``) are not violations.
    """

    where: str
    keyword: str
    reason: str
    value: Any = "<any>"
    overlap: bool = False
    """Only a ``oneOf`` the instance matches more than one branch of (no branch failing)."""

    def covers(self, error: jsonschema.ValidationError) -> bool:
        """Whether ``error`` is this contradiction."""
        if error.validator != self.keyword or not re.fullmatch(self.where, error.json_path):
            return False
        if self.overlap and error.context:
            return False
        return bool(self.value == "<any>" or error.instance == self.value)


ALLOWED: tuple[Allowance, ...] = (
    Allowance(
        r".*\.(template|input)\[\d+\]",
        "oneOf",
        "a plain `{role, content}` message is both an EasyInputMessage and an EvalItem, the "
        "two `oneOf` branches the spec offers for template and grader messages",
        overlap=True,
    ),
    Allowance(
        r"\$(\.data\[\d+\])?\.error",
        "type",
        "EvalRun.error is a required EvalApiError, yet every run example of the spec "
        "(createEvalRun, getEvalRun, cancelEvalRun, getEvalRuns) has `error: null` when none",
        value=None,
    ),
    Allowance(
        r"\$(\.data\[\d+\])?\.sample\.error",
        "type",
        "EvalRunOutputItem.sample.error is a required EvalApiError, yet the spec's output item "
        "examples have `error: null` on a sample that succeeded",
        value=None,
    ),
    Allowance(
        r"\$(\.data\[\d+\])?\.testing_criteria\[\d+\]",
        "oneOf",
        "Eval.testing_criteria lists five grader types, yet CreateEvalRequest accepts `multi` "
        "(GraderMulti) and stores it: the spec's list of eval graders lacks it",
    ),
    Allowance(
        r"\$(\.data\[\d+\])?\.purpose",
        "enum",
        "OpenAIFile.purpose omits `evals`, which CreateFileRequest.purpose offers and the "
        "Evals file_id sources require",
        value="evals",
    ),
)


def spec_path() -> Path:
    """Where the description is read from."""
    import os

    return Path(os.environ.get(SPEC_VARIABLE) or DEFAULT_SPEC)  # noqa: TID251


@cache
def load_spec(path: Path) -> dict[str, Any]:
    """The parsed description (the C loader: about a second for its 3 MB)."""
    with path.open(encoding="utf-8") as handle:
        loaded: dict[str, Any] = yaml.load(
            handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        )
    return loaded


def _pointer(*parts: str) -> str:
    return "/".join(part.replace("~", "~0").replace("/", "~1") for part in parts)


@dataclass(frozen=True)
class Operation:
    """One operation of the spec: its method, path pattern and documented responses."""

    method: str
    template: str
    pattern: re.Pattern[str]
    responses: dict[str, Any]


ALIASES = {("post", "/evals/{eval_id}/runs/{run_id}/cancel"): "/evals/{eval_id}/runs/{run_id}"}
"""Paths the SDK calls that the description spells otherwise (the SDK cancels on ``/cancel``)."""


class SpecValidator:
    """Checks responses against the description; ``violations`` collects what it finds."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self._spec = spec
        resource = Resource.from_contents(spec, default_specification=DRAFT202012)
        self._registry: Registry[Any] = Registry().with_resource(SPEC_URI, resource)
        self._operations: list[Operation] = []
        for template, item in spec["paths"].items():
            for method, operation in item.items():
                if isinstance(operation, dict) and "responses" in operation:
                    self._operations.append(_operation(method, template, operation["responses"]))
        for (method, alias), template in ALIASES.items():
            self._operations.append(
                _operation(method, alias, spec["paths"][template][method]["responses"])
            )
        self.violations: list[str] = []
        self.checked = 0

    def _find(self, method: str, path: str) -> Operation | None:
        candidates = [
            op for op in self._operations if op.method == method and op.pattern.fullmatch(path)
        ]
        # A literal segment beats a parameter: the longest template without braces first.
        candidates.sort(key=lambda op: -len(re.sub(r"\{[^}]+\}", "", op.template)))
        return candidates[0] if candidates else None

    def errors(self, method: str, path: str, status: int, body: Any) -> list[str]:
        """What is wrong with the answer to ``method path``: empty when it is as documented."""
        method = method.lower()
        path = path.removeprefix(PREFIX)
        where = f"{method.upper()} {path} {status}"
        operation = self._find(method, path)
        if operation is None:
            return [f"{where}: no such operation in the description"]
        response = operation.responses.get(str(status))
        if status >= 400 and _bare_error(response):
            response = None  # ERROR_WRAPPER: validated as the ErrorResponse every error is
        if response is None and status >= 400:
            ref = f"{SPEC_URI}#/components/schemas/ErrorResponse"
        elif response is None:
            documented = sorted(operation.responses)
            return [f"{where}: status {status} is not documented (documented: {documented})"]
        else:
            media = (response.get("content") or {}).get("application/json")
            if media is None or "schema" not in media:
                return []
            ref = (
                f"{SPEC_URI}#/"
                + _pointer(
                    "paths", _spec_template(operation.template), method, "responses", str(status)
                )
                + "/content/application~1json/schema"
            )
        validator = jsonschema.Draft202012Validator({"$ref": ref}, registry=self._registry)
        return [
            f"{where}: {error.json_path}: {_short(error)}"
            for error in _leaves(validator.iter_errors(body))
        ]

    def check(self, response: httpx.Response) -> None:
        """Validate one response (its body already read) and note any violation."""
        request = response.request
        path = request.url.path
        if not path.startswith(PREFIX + "/") or path.startswith(EXTENSIONS):
            return
        content_type = response.headers.get("content-type", "")
        body: Any = None
        if "json" in content_type:
            body = json.loads(response.content)
        elif response.is_success:
            return  # a file's content: bytes, not JSON
        self.checked += 1
        self.violations.extend(
            self.errors(request.method, request.url.path, response.status_code, body)
        )

    def sync_hook(self, response: httpx.Response) -> None:
        """An ``httpx.Client`` response event hook."""
        response.read()
        self.check(response)

    async def async_hook(self, response: httpx.Response) -> None:
        """An ``httpx.AsyncClient`` response event hook."""
        await response.aread()
        self.check(response)


def _bare_error(response: dict[str, Any] | None) -> bool:
    schema = ((response or {}).get("content") or {}).get("application/json", {}).get("schema")
    return bool(schema == {"$ref": "#/components/schemas/Error"})


def _spec_template(template: str) -> str:
    return next((real for (_, alias), real in ALIASES.items() if alias == template), template)


def _operation(method: str, template: str, responses: dict[str, Any]) -> Operation:
    regex = re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template))
    return Operation(method, template, re.compile(regex), responses)


def _leaves(errors: Iterator[jsonschema.ValidationError]) -> Iterator[jsonschema.ValidationError]:
    """The errors the allow-list does not excuse, down to the field at fault.

    A ``oneOf``/``anyOf`` no branch matches is replaced by the errors of its closest branch
    (one whose ``type`` constant matches, then the fewest errors).
    """
    for error in errors:
        if any(allowance.covers(error) for allowance in ALLOWED):
            continue
        if error.validator not in ("oneOf", "anyOf") or not error.context:
            yield error
            continue
        by_branch: dict[Any, list[jsonschema.ValidationError]] = {}
        for sub in error.context:
            by_branch.setdefault(sub.relative_schema_path[0], []).append(sub)
        closest = min(by_branch.values(), key=lambda subs: (_discriminated_away(subs), len(subs)))
        yield from _leaves(iter(closest))


def _discriminated_away(errors: list[jsonschema.ValidationError]) -> bool:
    """Whether a branch failed on its ``type`` constant (another kind of object)."""
    return any(
        list(error.relative_path) == ["type"] and error.validator in ("enum", "const")
        for error in errors
    )


def _short(error: jsonschema.ValidationError) -> str:
    return error.message if len(error.message) < 300 else error.message[:300] + "..."

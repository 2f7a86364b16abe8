"""The requests Swagger UI sends for the examples of the OpenAPI document, built from it.

Swagger UI fills each operation with the first example of each parameter and of the JSON
body; the other named examples (and the YAML body's) are one pick away. These are the same
requests, so tests can check that each one succeeds on a fresh server.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import orjson

METHODS = ("get", "post", "put", "patch", "delete")


@dataclass(frozen=True)
class ExampleRequest:
    """One operation called with one of its examples."""

    operation_id: str
    example: str
    method: str
    path: str
    content_type: str | None = None
    content: bytes | None = None

    def __str__(self) -> str:
        return f"{self.method.upper()} {self.path} ({self.operation_id}: {self.example})"


FRESH_SERVER_REFUSALS = {
    "register_webhook_endpoint": 409,
    "get_webhook_endpoint": 404,
    "delete_webhook_endpoint": 404,
}
"""Operations whose prefilled example a fresh server answers with a documented refusal: it
has no webhook endpoint, and registering one needs EVAL_WEBHOOK_SECRETS_KEY (set, the
examples' URL would be posted to). tests/runs/test_webhook_endpoints.py runs them with it."""


def operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """``(path, method, operation)`` in document order, deletions last (they remove runs).

    Deletions go the most nested path first: an eval's run before the eval (which takes its
    runs with it).
    """
    found = [
        (path, method, item[method])
        for path, item in document["paths"].items()
        for method in METHODS
        if method in item
    ]
    return sorted(found, key=lambda e: (e[1] == "delete", -e[0].count("/") * (e[1] == "delete")))


def example_requests(document: dict[str, Any], *, every_example: bool) -> list[ExampleRequest]:
    """The prefilled request of every operation, or one request per example of each body."""
    requests = []
    for path, method, operation in operations(document):
        url = fill_path(path, operation) + fill_query(operation)
        bodies = body_examples(operation.get("requestBody"), document, every_example=every_example)
        if not bodies:
            requests.append(ExampleRequest(operation["operationId"], "no body", method, url))
        for name, content_type, content in bodies:
            requests.append(
                ExampleRequest(operation["operationId"], name, method, url, content_type, content)
            )
    return requests


def fill_path(path: str, operation: dict[str, Any]) -> str:
    """``path`` with each path parameter replaced by its first example."""
    for parameter in operation.get("parameters", []):
        if parameter["in"] == "path":
            examples = parameter.get("examples")
            assert examples, f"{path}: path parameter {parameter['name']} has no example"
            value = next(iter(examples.values()))["value"]
            path = path.replace("{" + parameter["name"] + "}", str(value))
    return path


def fill_query(operation: dict[str, Any]) -> str:
    """The query string of the required query parameters, each with its first example."""
    pairs = []
    for parameter in operation.get("parameters", []):
        if parameter["in"] == "query" and parameter.get("required"):
            examples = parameter.get("examples")
            assert examples, f"required query parameter {parameter['name']} has no example"
            pairs.append((parameter["name"], next(iter(examples.values()))["value"]))
    return f"?{urlencode(pairs)}" if pairs else ""


def body_examples(
    body: dict[str, Any] | None, document: dict[str, Any], *, every_example: bool
) -> list[tuple[str, str, bytes]]:
    """``(name, content type, bytes)`` of the JSON body's first example, or of every example."""
    if body is None:
        return []
    content = body["content"]
    if "multipart/form-data" in content:
        return [multipart_example(content["multipart/form-data"]["schema"], document)]
    json_examples = content["application/json"].get("examples", {})
    assert json_examples, f"JSON body without examples: {body}"
    found = [
        (name, "application/json", orjson.dumps(example["value"]))
        for name, example in json_examples.items()
    ]
    if not every_example:
        return found[:1]
    yaml_example = content.get("application/yaml", {}).get("example")
    if yaml_example is not None:
        found.append(("yaml body", "application/yaml", yaml_example.encode()))
    return found


def multipart_example(schema: dict[str, Any], document: dict[str, Any]) -> tuple[str, str, bytes]:
    """The form Swagger UI fills from each field's first example (a file field's is the file)."""
    name = schema["$ref"].rsplit("/", 1)[-1]
    properties = document["components"]["schemas"][name]["properties"]
    boundary = "prefilled-example-boundary"
    parts = []
    for field, field_schema in properties.items():
        examples = field_schema.get("examples")
        assert examples, f"multipart field {field} has no example"
        disposition = f'form-data; name="{field}"'
        if "contentMediaType" in field_schema:
            disposition += f'; filename="{field}.example"'
        parts.append(f"--{boundary}\r\nContent-Disposition: {disposition}\r\n\r\n{examples[0]}\r\n")
    body = "".join(parts) + f"--{boundary}--\r\n"
    return "form", f"multipart/form-data; boundary={boundary}", body.encode()

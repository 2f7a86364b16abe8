"""The OpenAPI document, made to tell the truth about what crosses the wire.

FastAPI's document is completed here with what it cannot see: the schemas of bodies that
routes parse themselves (JSON or YAML), the problem documents every refusal is (401 and 429
from the access middleware, 413 from the body limit, 422 from parameter validation, all as
``application/problem+json``), and the bearer scheme on exactly the operations that need a
key once keys are configured (every one but the public paths of ``app.api.middleware.auth``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel

from app.api.middleware.auth import PUBLIC_PATHS, SECURITY_SCHEME, SECURITY_SCHEME_NAME, is_public
from app.api.openai_evals.errors import OpenAIError, is_openai_path, openai_responses
from app.api.problems import PROBLEM_MEDIA_TYPE, Problem, problem_responses

METHODS = ("get", "put", "post", "delete", "patch")
# FastAPI's own 422 schemas: the service answers problem documents instead.
FASTAPI_VALIDATION_SCHEMAS = ("HTTPValidationError", "ValidationError")


def install_openapi(
    app: FastAPI,
    models: tuple[type[BaseModel], ...] = (),
    public: frozenset[str] = PUBLIC_PATHS,
) -> None:
    """Make ``app.openapi()`` the completed document (built once, then cached).

    Args:
        app: The application.
        models: Models no route signature names, to add to ``components.schemas``.
        public: The paths served without a key (``public_paths``).
    """

    def openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        schema = get_openapi(
            title=app.title,
            version=app.version,
            description=app.description,
            routes=app.routes,
        )
        add_models(schema, (*models, Problem, OpenAIError))
        document_refusals(schema, lambda path: is_public(path, public))
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


def add_models(schema: dict[str, Any], models: tuple[type[BaseModel], ...]) -> None:
    """Put ``models`` (and the models they use) under ``components.schemas``."""
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    for model in models:
        model_schema = model.model_json_schema(
            ref_template="#/components/schemas/{model}", mode="validation"
        )
        for name, definition in model_schema.pop("$defs", {}).items():
            components.setdefault(name, definition)
        components.setdefault(model.__name__, model_schema)


def document_refusals(schema: dict[str, Any], public: Callable[[str], bool]) -> None:
    """Declare the bearer scheme, and every refusal as a problem document, on each operation.

    Operations on non-public paths get ``security``, 401 and 429; operations with a body get
    413; each problem example gets the operation's path as its ``instance``. Under ``/v1``
    these refusals are OpenAI error objects instead, as that surface answers them. FastAPI adds a
    422 of its own schema to every operation with parameters, even those whose parameters
    cannot fail; it is dropped, since each route declares the 422 it can answer.
    """
    for path, operations in schema.get("paths", {}).items():
        for method in METHODS:
            if method in operations:
                document_operation(operations[method], path, secured=not public(path))
    components = schema.setdefault("components", {})
    components.setdefault("securitySchemes", {})[SECURITY_SCHEME_NAME] = SECURITY_SCHEME
    for name in FASTAPI_VALIDATION_SCHEMAS:
        if f'"#/components/schemas/{name}"' not in json.dumps(schema):
            components.get("schemas", {}).pop(name, None)


def document_operation(operation: dict[str, Any], path: str, *, secured: bool) -> None:
    """One operation's security and problem responses (see ``document_refusals``)."""
    responses = operation.setdefault("responses", {})
    added = [413] if "requestBody" in operation else []
    if secured:
        operation["security"] = [{SECURITY_SCHEME_NAME: []}]
        added += [401, 429]
    validation = responses.get("422", {}).get("content", {})
    if validation and PROBLEM_MEDIA_TYPE not in validation:
        del responses["422"]
    refusals = openai_responses if is_openai_path(path) else problem_responses
    for code, response in refusals(*added).items():
        responses.setdefault(str(code), response)
    for response in responses.values():
        problem = response.get("content", {}).get(PROBLEM_MEDIA_TYPE)
        if problem is not None:
            problem["example"] = {**problem["example"], "instance": path}
    operation["responses"] = dict(sorted(responses.items()))

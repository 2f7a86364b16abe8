"""OpenAPI document: adds the schemas of bodies that routes parse themselves (JSON or YAML)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel

from app.api.problems import Problem


def install_openapi(app: FastAPI, body_models: tuple[type[BaseModel], ...] = ()) -> None:
    """Make ``app.openapi()`` include ``body_models`` and ``Problem`` under components."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        schema = get_openapi(
            title=app.title,
            version=app.version,
            description=app.description,
            routes=app.routes,
        )
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        models: tuple[type[BaseModel], ...] = (*body_models, Problem)
        for model in models:
            model_schema = model.model_json_schema(
                ref_template="#/components/schemas/{model}", mode="validation"
            )
            for name, definition in model_schema.pop("$defs", {}).items():
                components.setdefault(name, definition)
            components.setdefault(model.__name__, model_schema)
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]

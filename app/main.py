"""Application factory: wiring only. Importing this module has no side effects.

Run with ``uvicorn app.main:app`` (the attribute is built on first access) or
``uvicorn --factory app.main:create_app``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import cache
from typing import Any

from fastapi import FastAPI
from fastapi.routing import APIRoute
from pydantic import ValidationError

from app.api import DOCUMENTED_MODELS, api_router
from app.api.middleware.auth import install_access_control, public_paths
from app.api.middleware.limits import BodySizeLimit
from app.api.middleware.request_context import install_observability
from app.api.openapi_docs.docs import install_docs
from app.api.openapi_docs.openapi import install_openapi
from app.api.problems import install_problem_handlers
from app.api.ui.routes import install_ui
from app.errors import ApiKeysFileError, TargetsFileError
from app.heap import freeze_startup_heap
from app.runs.postgres.rate_buckets import DatabaseRateBuckets
from app.services.container import build_services
from app.settings import Settings, load_settings, with_targets_file

VERSION = "0.1.0"
DESCRIPTION = (
    "Formats eval cases (`input_messages` -> `question`, `guidelines`, `chatPrompt`) and runs "
    "evaluations of LLMs and agents: a candidate answers, a judge grades. Errors are RFC 9457 "
    "problem documents. Browse runs and their cases in the results viewer: [/ui](./ui)."
)


def _operation_id(route: APIRoute) -> str:
    return route.operation_id or route.name


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app: settings (the targets file read here), lifespan resources, routes.

    Raises:
        TargetsFileError: The targets file cannot be read or a target in it is not valid.
    """
    settings = with_targets_file(settings or load_settings())

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        services = await build_services(settings, metrics)
        app.state.services = services
        if services.store.job_queue:  # PostgreSQL: every replica shares the request rates
            app.state.rate_limiter.share(DatabaseRateBuckets(services.store.engine))
        freeze_startup_heap()
        try:
            yield
        finally:
            await services.aclose()

    app = FastAPI(
        title="eval-execution",
        version=VERSION,
        description=DESCRIPTION,
        lifespan=lifespan,
        generate_unique_id_function=_operation_id,
        docs_url=None,
        redoc_url=None,
    )
    app.state.settings = settings
    install_problem_handlers(app)
    install_openapi(app, DOCUMENTED_MODELS, public_paths(settings))
    install_docs(app)
    install_access_control(app, settings)
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_body_bytes)
    metrics = install_observability(app, settings)
    app.include_router(api_router)
    install_ui(app)
    return app


@cache
def _default_app() -> FastAPI:
    return create_app()


def startup_error_message(error: ValidationError | TargetsFileError | ApiKeysFileError) -> str:
    """One line per problem of the settings or the targets file, for a person starting the service.

    A traceback of the settings' validation says the same in fifty lines, the cause last.
    """
    if isinstance(error, TargetsFileError | ApiKeysFileError):
        return f"eval-execution cannot start: {error.detail}"
    lines = ["eval-execution cannot start: a setting is not valid"]
    for problem in error.errors(include_url=False, include_input=False):
        field = ".".join(str(part) for part in problem["loc"])
        lines.append(f"  EVAL_{field.upper()}: {problem['msg']}")
    return "\n".join(lines)


def __getattr__(name: str) -> Any:
    """Build ``app`` lazily so that importing the module reads no environment.

    Raises:
        SystemExit: The settings or the targets file are not valid (the message says why).
    """
    if name == "app":
        try:
            return _default_app()
        except (ValidationError, TargetsFileError, ApiKeysFileError) as exc:
            raise SystemExit(startup_error_message(exc)) from None
    raise AttributeError(name)

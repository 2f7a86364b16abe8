"""HTTP routes: thin adapters from HTTP to one service call and back.

The only package that imports the web framework (with ``app.main``). Must not hold business
logic; must not import httpx or provider adapters directly.
"""

from fastapi import APIRouter
from pydantic import BaseModel

from app.api.openai_evals import files as openai_files
from app.api.openai_evals import imports as openai_imports
from app.api.openai_evals import routes as openai_routes
from app.api.openapi_docs import run_docs
from app.api.routes import compare as compare_routes
from app.api.routes import evaluate as evaluate_routes
from app.api.routes import format as format_routes
from app.api.routes import health, ops, report, reviews, runs, targets, webhooks
from app.api.routes import validate as validate_routes

api_router = APIRouter()
api_router.include_router(health.router)
api_router.include_router(ops.router)
api_router.include_router(format_routes.router)
api_router.include_router(targets.router)
api_router.include_router(validate_routes.router)
api_router.include_router(evaluate_routes.router)
# Before the runs router: /runs/compare is not a run id.
api_router.include_router(compare_routes.router)
api_router.include_router(runs.router)
api_router.include_router(reviews.router)
api_router.include_router(report.router)
api_router.include_router(openai_routes.router)
api_router.include_router(openai_files.router)
api_router.include_router(openai_imports.router)
api_router.include_router(webhooks.router)

# Models no route signature names (bodies that routes parse themselves, JSON or YAML, and
# the data of run events); their schemas go into the OpenAPI document.
DOCUMENTED_MODELS: tuple[type[BaseModel], ...] = (
    *(
        body.model
        for body in (
            format_routes.FORMAT_BODY,
            validate_routes.VALIDATE_BODY,
            evaluate_routes.EVALUATE_BODY,
            runs.RUN_BODY,
        )
    ),
    *run_docs.EVENT_MODELS,
)

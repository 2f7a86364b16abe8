"""HTTP routes: thin adapters from HTTP to one service call and back.

Must not hold business logic; must not import httpx or provider adapters directly.
"""

from fastapi import APIRouter
from pydantic import BaseModel

from app.api import format as format_routes
from app.api import health
from app.schemas.format import FormatRequest

api_router = APIRouter()
api_router.include_router(health.router)
api_router.include_router(format_routes.router)

# Bodies that routes parse themselves (JSON or YAML); their schemas go into the OpenAPI document.
BODY_MODELS: tuple[type[BaseModel], ...] = (FormatRequest,)

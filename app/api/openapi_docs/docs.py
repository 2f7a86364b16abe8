"""``/docs`` (Swagger UI) and ``/redoc``, served with their assets by the service itself.

The pages load nothing from another host: the Swagger UI and ReDoc bundles and the favicon
come from the ``fastapi-offline`` package (pinned in ``requirements.lock``) and are served
under ``/docs/assets``, so the documentation works in closed networks. A content security
policy holds the pages to their own origin (ReDoc's bundle would fetch its logo from a CDN).
Swagger UI opens every operation ready to execute with its first example
(``tryItOutEnabled``) and never asks the public validator service for a badge
(``validatorUrl: null``).
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.openapi.docs import (
    get_redoc_html,
    get_swagger_ui_html,
    get_swagger_ui_oauth2_redirect_html,
)
from fastapi.staticfiles import StaticFiles
from starlette.responses import HTMLResponse

DOCS_PATH = "/docs"
REDOC_PATH = "/redoc"
OAUTH2_REDIRECT_PATH = "/docs/oauth2-redirect"
ASSETS_PATH = "/docs/assets"
ASSETS_DIRECTORY = Path(str(files("fastapi_offline") / "static"))
# Inline scripts and styles are the pages' own (the Swagger UI set-up, ReDoc's styles); ReDoc
# runs its search in a worker made from a blob.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; worker-src 'self' blob:; connect-src 'self'; "
    "frame-ancestors 'self'"
)
SWAGGER_UI_PARAMETERS: dict[str, Any] = {
    "validatorUrl": None,
    "tryItOutEnabled": True,
    "displayRequestDuration": True,
    "persistAuthorization": True,
    "defaultModelsExpandDepth": 0,
}


def install_docs(app: FastAPI) -> None:
    """Serve Swagger UI at ``/docs`` and ReDoc at ``/redoc``, assets included.

    The app must be built with ``docs_url=None`` and ``redoc_url=None``. The pages are
    module functions reading their app from the request: FastAPI keeps what it learns of an
    endpoint in a process-wide cache, and closures made per app kept every app built alive.
    """
    app.mount(ASSETS_PATH, StaticFiles(directory=ASSETS_DIRECTORY), name="docs-assets")
    app.add_api_route(DOCS_PATH, swagger_ui, methods=["GET"], include_in_schema=False)
    app.add_api_route(
        OAUTH2_REDIRECT_PATH, swagger_ui_redirect, methods=["GET"], include_in_schema=False
    )
    app.add_api_route(REDOC_PATH, redoc, methods=["GET"], include_in_schema=False)


def _root(request: Request) -> str:
    return str(request.scope.get("root_path", ""))


async def swagger_ui(request: Request) -> HTMLResponse:
    """Swagger UI, its assets served by the service."""
    prefix, app = _root(request), request.app
    page = get_swagger_ui_html(
        openapi_url=f"{prefix}{app.openapi_url}",
        title=f"{app.title} - Swagger UI",
        swagger_js_url=f"{prefix}{ASSETS_PATH}/swagger-ui-bundle.js",
        swagger_css_url=f"{prefix}{ASSETS_PATH}/swagger-ui.css",
        swagger_favicon_url=f"{prefix}{ASSETS_PATH}/favicon.png",
        oauth2_redirect_url=f"{prefix}{OAUTH2_REDIRECT_PATH}",
        swagger_ui_parameters=SWAGGER_UI_PARAMETERS,
    )
    return with_policy(page)


async def swagger_ui_redirect() -> HTMLResponse:
    """Swagger UI's OAuth2 redirect page."""
    return with_policy(get_swagger_ui_oauth2_redirect_html())


async def redoc(request: Request) -> HTMLResponse:
    """ReDoc, its assets served by the service."""
    prefix, app = _root(request), request.app
    page = get_redoc_html(
        openapi_url=f"{prefix}{app.openapi_url}",
        title=f"{app.title} - ReDoc",
        redoc_js_url=f"{prefix}{ASSETS_PATH}/redoc.standalone.js",
        redoc_favicon_url=f"{prefix}{ASSETS_PATH}/favicon.png",
        with_google_fonts=False,
    )
    return with_policy(page)


def with_policy(page: HTMLResponse) -> HTMLResponse:
    """``page`` held to its own origin by a content security policy."""
    page.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    return page

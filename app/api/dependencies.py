"""Typed dependencies routes declare: the settings and the services bundle."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from app.container import Services
from app.settings import Settings


async def get_services(request: Request) -> Services:
    """The app's services bundle, built by the lifespan."""
    services: Services = request.app.state.services
    return services


async def get_settings(request: Request) -> Settings:
    """The app's settings."""
    settings: Settings = request.app.state.settings
    return settings


ServicesDep = Annotated[Services, Depends(get_services)]
SettingsDep = Annotated[Settings, Depends(get_settings)]

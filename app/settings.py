"""Service settings: the one place that reads the environment (prefix ``EVAL_``)."""

from __future__ import annotations

from pathlib import Path

from typing import Annotated, Any

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

MIB = 1024 * 1024


class Settings(BaseSettings):
    """Every setting of the service, read once by ``create_app`` and passed down.

    Each field is documented by its ``description``; the README settings table is checked
    against this class by a test.
    """

    model_config = SettingsConfigDict(env_prefix="EVAL_", extra="ignore")

    max_body_bytes: int = Field(
        5 * MIB, ge=1024, description="Largest request body accepted, in bytes (413 above)."
    )
    data_dir: Path = Field(
        Path("data"), description="Folder for the SQLite database and other local state."
    )
    workspace_roots: Annotated[list[Path], NoDecode] = Field(
        default_factory=list,
        description="Folders from which suites may read referenced files (comma-separated).",
    )
    max_file_bytes: int = Field(
        1 * MIB, ge=1, description="Largest single referenced file, in bytes."
    )
    max_request_file_bytes: int = Field(
        20 * MIB, ge=1, description="Largest total of referenced files per request, in bytes."
    )

    @field_validator("workspace_roots", mode="before")
    @classmethod
    def _split_paths(cls, value: Any) -> Any:
        """Accept a comma-separated string as well as a list."""
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value


def load_settings() -> Settings:
    """Read the settings from the environment (called only by ``create_app``)."""
    return Settings()

"""Azure OpenAI: Chat Completions on a deployment, authenticated with the ``api-key`` header.

``POST {endpoint}/openai/deployments/{deployment}/chat/completions?api-version=...``. The
body and reply are OpenAI's (the model is the deployment, so the body names none). Azure sends
``retry-after-ms`` as well as ``Retry-After`` on 429; both are honoured.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from app.providers.adapters.http import HttpAdapter, UpstreamError
from app.providers.adapters.openai import (
    chat_completions_body,
    parse_chat_completion,
    parse_openai_error,
)
from app.providers.base import ProviderRequest, ProviderResponse
from app.settings.targets import AzureTarget


class AzureAdapter(HttpAdapter[AzureTarget]):
    """One Azure OpenAI deployment."""

    api = "Azure OpenAI"

    def build_body(self, request: ProviderRequest) -> tuple[dict[str, Any], list[str]]:
        """The Chat Completions body without ``model``."""
        return chat_completions_body(
            request,
            model=None,
            temperature=self.target.temperature,
            max_output_tokens=self.target.max_output_tokens,
            schema_in_json_mode=False,
        )

    def url(self) -> str:
        """The deployment's chat completions URL with its ``api-version``."""
        deployment = quote(self.target.deployment, safe="")
        return (
            f"{self.target.endpoint_url()}/deployments/{deployment}/chat/completions"
            f"?api-version={quote(self.target.version, safe='')}"
        )

    def headers(self) -> dict[str, str]:
        """The ``api-key`` header."""
        return {"api-key": self._key}

    def parse_reply(self, payload: Any, request: ProviderRequest) -> ProviderResponse:
        """OpenAI's reply shape."""
        return parse_chat_completion(payload, request)

    def parse_error(self, payload: Any) -> UpstreamError | None:
        """OpenAI's error shape."""
        return parse_openai_error(payload)

"""The response cache of runs with ``cache: true``, kept in the runs database.

Implements the evaluation layer's ``ResponseCache`` protocol. Keys are hashes of the exact
provider request, computed by the caller; only successful replies are ever put here.
"""

from __future__ import annotations

from app.providers.base import ProviderResponse
from app.runs.storage.store import RunStore


class StoredResponseCache:
    """Provider replies stored under request hashes; a hit comes back marked ``cached``."""

    def __init__(self, store: RunStore) -> None:
        self._store = store

    async def get(self, key: str) -> ProviderResponse | None:
        """The reply stored under ``key``, marked as a cache hit, or None."""
        stored = await self._store.get_cached_response(key)
        if stored is None:
            return None
        response = ProviderResponse.model_validate_json(stored)
        return response.model_copy(update={"cached": True})

    async def put(self, key: str, response: ProviderResponse) -> None:
        """Store a successful reply under ``key`` (the first stored reply wins)."""
        stored = response.model_copy(update={"cached": False})
        await self._store.put_cached_response(key, stored.model_dump_json())

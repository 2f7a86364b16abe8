"""Files of the OpenAI surface: JSONL uploads with ``purpose=evals`` that runs read rows from."""

from __future__ import annotations

import uuid

from app.errors import NotFound
from app.evaluators.offload.cpu_process import run_in_process
from app.runs.openai_evals.openai_store import OpenAIEvalStore, StoredFile
from app.runs.storage.store_base import utc_now
from app.schemas.openai_evals import FileDeleted, FileObject, ListPage
from app.schemas.openai_examples import SAMPLE_FILE_CONTENT, SAMPLE_FILE_ID
from app.services.openai_cases import check_file, invalid
from app.settings import Settings

PURPOSES = frozenset({"evals"})


def file_object(stored: StoredFile) -> FileObject:
    """The ``file`` object."""
    return FileObject(
        id=stored.id,
        bytes=stored.bytes,
        created_at=int(stored.created_at.timestamp()),
        filename=stored.filename,
        purpose=stored.purpose,
    )


class OpenAIFiles:
    """Upload, show, read and delete files (each caller sees its own)."""

    def __init__(self, settings: Settings, store: OpenAIEvalStore) -> None:
        self._settings = settings
        self._store = store

    async def upload(
        self, filename: str, purpose: str, content: bytes, caller: str | None
    ) -> FileObject:
        """Store a JSONL file of ``{item, sample?}`` rows (every line checked now)."""
        if purpose not in PURPOSES:
            raise invalid("purpose", f"{purpose!r} is not accepted here; use 'evals'")
        # Seconds of CPU for a large file: in a process of its own (a thread shares the GIL).
        check = await run_in_process(check_file, content, filename)
        if check.problem is not None:
            raise invalid(*check.problem)
        stored = StoredFile(
            id=f"file-{uuid.uuid4().hex[:24]}",
            owner=caller,
            filename=filename,
            purpose=purpose,
            bytes=len(content),
            content=content.decode("utf-8"),
            created_at=utc_now(),
            rows=check.rows,
        )
        await self._store.add_file(stored)
        return file_object(stored)

    async def add_sample(self) -> None:
        """Store the sample file (no owner) unless it exists."""
        sample = StoredFile(
            id=SAMPLE_FILE_ID,
            owner=None,
            filename="sample.jsonl",
            purpose="evals",
            bytes=len(SAMPLE_FILE_CONTENT.encode()),
            content=SAMPLE_FILE_CONTENT,
            created_at=utc_now(),
        )
        await self._store.add_file(sample, exists_ok=True)

    async def list(
        self, caller: str | None, *, purpose: str | None, after: str | None, limit: int, order: str
    ) -> ListPage[FileObject]:
        """One page of the caller's files (of ``purpose`` when given)."""
        files, more = await self._store.list_files(
            caller, purpose=purpose, after=after, limit=limit, order=order
        )
        ids = [stored.id for stored in files]
        return ListPage[FileObject](
            data=[file_object(stored) for stored in files],
            first_id=ids[0] if ids else "",
            last_id=ids[-1] if ids else "",
            has_more=more,
        )

    async def get(self, file_id: str, caller: str | None) -> FileObject:
        """The file's description."""
        return file_object(await self._store.get_file(file_id, caller))

    async def content(self, file_id: str, caller: str | None) -> str:
        """The file's text."""
        return (await self._store.get_file(file_id, caller)).content

    async def delete(self, file_id: str, caller: str | None) -> FileDeleted:
        """Remove the file (runs that read it keep their rows)."""
        await self._store.get_file(file_id, caller)
        await self._store.delete_file(file_id)
        return FileDeleted(id=file_id)

    async def get_stored(self, file_id: str, caller: str | None, *, param: str) -> StoredFile:
        """The file a data source names; a missing one is a 400 naming ``param``."""
        try:
            return await self._store.get_file(file_id, caller)
        except NotFound:
            raise invalid(param, f"no file has the id {file_id!r}") from None

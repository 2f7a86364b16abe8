"""``/v1/files``: JSONL files (``purpose=evals``) that runs' ``file_id`` sources read."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Form, Path, UploadFile
from fastapi.responses import PlainTextResponse

from app.api.auth import CallerDep
from app.api.openai_evals.routes import ERRORS, SAMPLE_SUMMARY, EvalsDep
from app.schemas.openai_evals import FileDeleted, FileObject
from app.schemas.openai_examples import SAMPLE_FILE_CONTENT, SAMPLE_FILE_ID

router = APIRouter(prefix="/v1/files", tags=["openai-evals"])
FileId = Annotated[
    str,
    Path(
        max_length=100,
        description="The file's id (`file-...`).",
        openapi_examples={"sample": {"summary": SAMPLE_SUMMARY, "value": SAMPLE_FILE_ID}},
    ),
]


@router.post("", operation_id="openai_upload_file", summary="Upload a file", responses=ERRORS)
async def upload_file(
    file: Annotated[
        UploadFile,
        File(description="JSONL: one `{item, sample?}` per line.", examples=[SAMPLE_FILE_CONTENT]),
    ],
    purpose: Annotated[str, Form(description="`evals`.", examples=["evals"])],
    evals: EvalsDep,
    caller: CallerDep,
) -> FileObject:
    """Store the file; every line is checked now."""
    content = await file.read()
    return await evals.files.upload(file.filename or "upload.jsonl", purpose, content, caller.id)


@router.get("/{file_id}", operation_id="openai_get_file", summary="A file", responses=ERRORS)
async def get_file(file_id: FileId, evals: EvalsDep, caller: CallerDep) -> FileObject:
    """The file's description."""
    return await evals.files.get(file_id, caller.id)


@router.get(
    "/{file_id}/content",
    operation_id="openai_get_file_content",
    summary="A file's content",
    response_class=PlainTextResponse,
    responses=ERRORS,
)
async def get_file_content(file_id: FileId, evals: EvalsDep, caller: CallerDep) -> str:
    """The file as uploaded."""
    return await evals.files.content(file_id, caller.id)


@router.delete(
    "/{file_id}", operation_id="openai_delete_file", summary="Delete a file", responses=ERRORS
)
async def delete_file(file_id: FileId, evals: EvalsDep, caller: CallerDep) -> FileDeleted:
    """Remove the file."""
    return await evals.files.delete(file_id, caller.id)

"""``POST /validate`` request and response models."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from app.errors import FieldError
from app.formatting.messages import ChatMessage
from app.suites.reading import Dialect

MAX_ENV_VALUES = 200
ENV_DESCRIPTION = (
    "Values of the suite's `${{ NAME }}` references (AgentV 2026 and prompts/providers/vars "
    "files), by name. The service never reads its own environment for a suite; a reference "
    "not given here is an error naming it. The values become part of the suite (prompts, "
    "records): not for secrets."
)


class ValidateRequest(BaseModel):
    """A suite to check, and the files its cases reference."""

    model_config = ConfigDict(extra="forbid")
    suite: dict[str, Any] | str = Field(
        description=(
            "The suite (an AgentV eval file): an object, its YAML or JSON text, or the path "
            "of a suite file under a workspace root (`evals/review.yaml`)."
        )
    )
    files: dict[str, str] = Field(
        default_factory=dict,
        description="Inline file contents, keyed by the path the cases use; checked first.",
    )
    env: dict[str, str] = Field(
        default_factory=dict, max_length=MAX_ENV_VALUES, description=ENV_DESCRIPTION
    )
    case_ids: list[str] | None = Field(
        None, description="Check only these cases (all when absent)."
    )
    allow_missing_files: bool = Field(
        False, description="Report files found nowhere as warnings instead of errors."
    )


class CaseCheck(BaseModel):
    """One case as the candidate would see it (formatted in LM mode)."""

    model_config = ConfigDict(validate_by_name=True, validate_by_alias=True)

    id: str
    role_markers: bool = Field(description="Whether the question carries `@[Role]:` markers.")
    guideline_paths: list[str] = Field(description="Guideline files, moved out of the turns.")
    files: list[str] = Field(description="Every file the case references, in order, each once.")
    question: str | None = Field(None, description="The formatted question (with `?prompts=true`).")
    guidelines: str | None = Field(None, description="The guidelines (with `?prompts=true`).")
    chat_prompt: list[ChatMessage] | None = Field(
        None, alias="chatPrompt", description="The chatPrompt (with `?prompts=true`)."
    )


class ValidateResponse(BaseModel):
    """Whether the suite can run, and every problem found (200 even when it cannot)."""

    valid: bool
    dialect: Dialect = Field(
        "unknown",
        description=(
            "The eval file dialect the suite was read as: AgentV's late-2025 files "
            "(`evalcases`), AgentV's 2026 files (`tests` with `input`/`criteria`/"
            "`assertions`), or the prompts/providers/vars layout (promptfoo's, AgentV's "
            "since July 2026); `unknown` when the document is not a suite."
        ),
    )
    errors: list[FieldError] = Field(
        default_factory=list,
        description="Problems that stop the suite from running: path, line/column (YAML).",
    )
    warnings: list[str] = Field(default_factory=list)
    cases: list[CaseCheck] = Field(default_factory=list)
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "valid": False,
                    "dialect": "agentv-2025",
                    "errors": [
                        {
                            "path": "evalcases[0].input_messages[1].role",
                            "line": 14,
                            "column": 15,
                            "message": "Input should be 'system', 'user', 'assistant' or 'tool'",
                        }
                    ],
                    "warnings": [
                        "evalcases[0].evaluators[1].id (line 21): unknown key of grader type "
                        "'contains', kept unused"
                    ],
                    "cases": [],
                }
            ]
        }
    )

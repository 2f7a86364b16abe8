"""``POST /format`` request and response models, with the examples shown in ``/docs``."""

from __future__ import annotations

from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.formatting.messages import (
    DEFAULT_GUIDELINE_PATTERNS,
    DEFAULT_SYSTEM_PROMPT,
    ChatMessage,
    MarkerStyle,
    Message,
    Mode,
)
from app.providers.preview import ProviderPreview
from app.settings.tools import ToolChoice, ToolSpec, read_tool_choice, read_tools


class FormatRequest(BaseModel):
    """An eval case's input messages and the options to format them with."""

    model_config = ConfigDict(extra="forbid")
    input_messages: list[Message] = Field(
        min_length=1, description="The conversation: system, user, assistant and tool turns."
    )
    files: dict[str, str] = Field(
        default_factory=dict, description="Inline file contents, keyed by the path cases use."
    )
    guideline_patterns: list[str] = Field(
        default_factory=lambda: list(DEFAULT_GUIDELINE_PATTERNS),
        description="Globs naming guideline files (`**` matches zero or more folders).",
    )
    mode: Mode = Field("lm", description="`lm` embeds file contents; `agent` references files.")
    marker_style: MarkerStyle = Field(
        "at", description="`at` writes `@[Role]:` markers; `bracket` the legacy `[Role]:`."
    )
    system_prompt: str | None = Field(
        None, description="First part of the chatPrompt system message."
    )
    default_system_prompt: str = Field(
        DEFAULT_SYSTEM_PROMPT,
        description=(
            "The system message when the case has no system turn and no `system_prompt` is "
            "given (AgentV's wording by default, as a run sends it unless the target or the "
            'suite sets its own); `""` sends none.'
        ),
    )
    allow_missing_files: bool = Field(
        False, description="Skip referenced files that were not supplied, with a warning."
    )
    providers: list[str] | None = Field(
        None,
        description=(
            "Targets whose exact request bodies to preview (no call is made). A name that "
            "is no target's but a provider's (`openai`, `azure`, `anthropic`, `gemini`) "
            "previews a stand-in target of that provider."
        ),
    )
    tools: tuple[ToolSpec, ...] = Field(
        (),
        description=(
            "Function tools the candidate may call, in any API's spelling (OpenAI Chat or "
            "Responses, Anthropic, Gemini); previewed in each provider's own form."
        ),
    )
    tool_choice: ToolChoice | None = Field(
        None, description="`auto`, `none`, `required` or a tool, in any API's spelling."
    )

    @field_validator("tools", mode="before")
    @classmethod
    def _read_tools(cls, value: Any) -> Any:
        return read_tools(value) if isinstance(value, list | dict) else value

    @field_validator("tool_choice", mode="before")
    @classmethod
    def _read_tool_choice(cls, value: Any) -> Any:
        return read_tool_choice(value) if isinstance(value, str | dict) else value


class FormatResponse(BaseModel):
    """The formatted case."""

    model_config = ConfigDict(validate_by_name=True, validate_by_alias=True)
    question: str
    guidelines: str
    guideline_paths: list[str]
    chat_prompt: list[ChatMessage] = Field(alias="chatPrompt")
    role_markers: bool
    warnings: list[str]
    provider_requests: dict[str, ProviderPreview] | None = Field(
        None, description="Per requested target: the exact body its adapter would send."
    )


FORMAT_YAML = """\
# The /format body as YAML: the same fields as JSON. The guideline file moves out of the
# turns into `guidelines` (and the chatPrompt's system message).
input_messages:
  - role: system
    content:
      - type: file
        value: .github/review.instructions.md
  - role: user
    content: Please review the change in parser.py.
files:
  .github/review.instructions.md: |
    # Review rules
    - Prefer small functions.
    - Name things for what they hold.
"""
"""The YAML body shown in ``/docs`` (also the ``guideline_file`` JSON example)."""

FORMAT_EXAMPLES: dict[str, Any] = {
    "single_turn": {
        "summary": "One user message (flat question, no markers)",
        "value": {"input_messages": [{"role": "user", "content": "What is 2 + 2?"}]},
    },
    "guideline_file": {
        "summary": "System guideline file + user message",
        "value": yaml.safe_load(FORMAT_YAML),
    },
    "provider_preview": {
        "summary": "Preview the body each provider's API would be sent (no call is made)",
        "value": {
            "input_messages": [
                {"role": "user", "content": "Check the weather in Oslo."},
                {"role": "assistant", "content": "Calling the weather tool."},
                {"role": "tool", "content": {"temp_c": 4, "sky": "overcast"}},
                {"role": "user", "content": "Should I bring an umbrella?"},
            ],
            "providers": ["openai", "anthropic", "gemini"],
        },
    },
    "multi_turn_tool": {
        "summary": "Multi-turn with files and a tool turn",
        "value": {
            "input_messages": [
                {"role": "system", "content": "You are an on-call assistant."},
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "value": "The deploy failed. Here is the log:"},
                        {"type": "file", "value": "logs/deploy.txt"},
                        {"type": "file", "value": "ops/oncall.instructions.md"},
                    ],
                },
                {"role": "assistant", "content": "Let me check the service status."},
                {"role": "tool", "content": {"service": "api", "status": "crashloop"}},
                {"role": "user", "content": "What should I do first?"},
            ],
            "files": {
                "logs/deploy.txt": "12:01 starting api\n12:02 error: missing DATABASE_URL\n",
                "ops/oncall.instructions.md": "Always name the failing component first.\n",
            },
        },
    },
}

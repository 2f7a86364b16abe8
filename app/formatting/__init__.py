"""The formatting core: input messages + already-loaded file texts -> prompts.

PURE: no I/O, no clock, no randomness. Must not import fastapi, httpx, sqlalchemy, asyncio,
os, pathlib or anything that touches the filesystem; ``tests/formatting/test_purity.py``
enforces it. Everything else calls these functions; nothing re-implements them.
"""

from app.formatting.evaluator_prompt import (
    DEFAULT_EVALUATOR_TEMPLATE,
    EVALUATOR_VARIABLES,
    FILE_CHANGES_SECTION,
    TOOL_CALLS_SECTION,
    render_evaluator_prompt,
)
from app.formatting.guidelines import GuidelineMatcher
from app.formatting.images import ImagePart
from app.formatting.messages import (
    DEFAULT_GUIDELINE_PATTERNS,
    DEFAULT_SYSTEM_PROMPT,
    ChatMessage,
    FilePart,
    FormatOptions,
    FormattedPrompt,
    Message,
    TextPart,
)
from app.formatting.prompt import format_prompt, referenced_files

__all__ = [
    "DEFAULT_EVALUATOR_TEMPLATE",
    "DEFAULT_GUIDELINE_PATTERNS",
    "DEFAULT_SYSTEM_PROMPT",
    "EVALUATOR_VARIABLES",
    "FILE_CHANGES_SECTION",
    "TOOL_CALLS_SECTION",
    "ChatMessage",
    "FilePart",
    "FormatOptions",
    "FormattedPrompt",
    "GuidelineMatcher",
    "ImagePart",
    "Message",
    "TextPart",
    "format_prompt",
    "referenced_files",
    "render_evaluator_prompt",
]

"""Where the viewer lives: public shells and assets, and fragments behind the API key."""

from __future__ import annotations

UI_PATH = "/ui"
ASSETS_PATH = "/ui/assets"
FRAGMENTS_PATH = "/ui/fragments"


def is_public_ui(path: str) -> bool:
    """Whether ``path`` is a viewer page shell or asset (no data: served without a key)."""
    if path == UI_PATH:
        return True
    return path.startswith(UI_PATH + "/") and not path.startswith(FRAGMENTS_PATH + "/")

"""promptfoo's top-level ``env``: values its templates read as ``{{ env.NAME }}``.

promptfoo also sets them in its own process environment (``PROMPTFOO_EVAL_TIMEOUT_MS``, API
keys). A suite never sets or reads this service's environment: here they are template values
only (given to templates as the variable ``env``, which a test's own ``env`` variable
replaces), and a warning names them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.suites.documents.findings import Findings, describe

KEY = "env"
_SCALARS = (str, int, float, bool)


def suite_env(document: Mapping[str, Any], findings: Findings) -> dict[str, Any] | None:
    """The file's ``env`` values (None without one; problems recorded)."""
    raw = document.get(KEY)
    if raw is None:
        return None
    if not isinstance(raw, dict) or not all(
        isinstance(name, str) and isinstance(value, _SCALARS) for name, value in raw.items()
    ):
        findings.error((KEY,), f"must map names to text or numbers, not {describe(raw)}")
        return None
    if raw:
        findings.warn(
            (KEY,),
            f"{', '.join(sorted(raw))}: read as {{{{ env.NAME }}}} in templates only; promptfoo "
            "also sets them in its own process environment, which a suite never does here "
            "(the service's settings, such as its case time limit, apply)",
        )
    return dict(raw)

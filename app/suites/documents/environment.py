"""``${{ NAME }}`` in AgentV 2026 and prompts/providers/vars files, filled from the request.

AgentV fills these from the environment of the machine that runs it. This service never
reads its own environment for a suite (it holds the service's keys): the caller sends the
values in the request's ``env``. A name the request does not give is an error naming it and
where it is (AgentV would use an empty string; here an empty value is given as one).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import Findings
from app.suites.files.sources import CaseList

REFERENCE = re.compile(r"\$\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def interpolate(
    value: Any, env: Mapping[str, str], findings: Findings, path: DocumentPath = ()
) -> Any:
    """``value`` with every ``${{ NAME }}`` in its strings replaced by ``env[NAME]``.

    Keys are left as written; each missing name is an error at the string that names it.
    """
    if isinstance(value, str):
        return _filled(value, env, findings, path) if "${{" in value else value
    if isinstance(value, list):
        return [interpolate(item, env, findings, (*path, i)) for i, item in enumerate(value)]
    if isinstance(value, dict):
        return {
            key: interpolate(item, env, findings, (*path, str(key))) for key, item in value.items()
        }
    return value


def interpolate_cases(
    cases: Mapping[DocumentPath, CaseList], env: Mapping[str, str], findings: Findings
) -> dict[DocumentPath, CaseList]:
    """Cases read from other files, each filled in (errors at the case's own location)."""
    return {
        where: [(path, interpolate(case, env, findings, path)) for path, case in listed]
        for where, listed in cases.items()
    }


def _filled(text: str, env: Mapping[str, str], findings: Findings, path: DocumentPath) -> str:
    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in env:
            return env[name]
        findings.error(
            path,
            f"'${{{{ {name} }}}}' is not given: send it in the request's `env` "
            f'(`"env": {{"{name}": "..."}}`); a suite never reads the service\'s '
            "environment",
        )
        return match.group(0)

    return REFERENCE.sub(substitute, text)

"""A test's own ``providers``: the suite providers (arms) it runs on, as promptfoo matches them.

Measured on promptfoo 0.123.1 (tests/conformance/promptfoo/test_providers.yaml): a name
matches a provider by its ``label`` or its ``id``, ``openai:*`` by the start of either, and a
legacy prefix (``openai``, ``openai:chat``) every id it starts followed by ``:``. A name that
matches no provider of the suite is an error (promptfoo refuses the config too). The test runs
only on the arms of the providers it names, as a test's ``prompts`` narrows its prompts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import Findings, describe


@dataclass(frozen=True)
class ProviderName:
    """One provider of the suite: the target (arm) it is here, and the id and label it has."""

    target: str
    id: str
    label: str | None

    def matches(self, name: str) -> bool:
        """Whether a test's ``providers`` entry ``name`` names this provider."""
        if name in (self.id, self.label):
            return True
        if name.endswith("*"):
            start = name[:-1]
            return self.id.startswith(start) or bool(self.label and self.label.startswith(start))
        return self.id.startswith(f"{name}:")


def suite_providers(document: Mapping[str, Any]) -> list[ProviderName]:
    """The suite's providers, each with its target name (its label, else its id)."""
    providers = document.get("providers", document.get("target"))
    found: list[ProviderName] = []
    for provider in providers if isinstance(providers, list) else [providers]:
        if isinstance(provider, str) and provider.strip():
            found.append(ProviderName(provider.strip(), provider.strip(), None))
        elif isinstance(provider, dict):
            raw_id, label = provider.get("id"), provider.get("label")
            label = label.strip() if isinstance(label, str) and label.strip() else None
            ident = raw_id.strip() if isinstance(raw_id, str) and raw_id.strip() else label
            if ident:
                found.append(ProviderName(label or ident, ident, label))
    return found


def providers_named(
    raw: Any, providers: list[ProviderName], path: DocumentPath, findings: Findings
) -> tuple[str, ...]:
    """The targets a test's ``providers`` names, in the suite's order; () without it."""
    if raw is None:
        return ()
    names = raw if isinstance(raw, list) else [raw]
    if not names or not all(isinstance(name, str) and name.strip() for name in names):
        findings.error(path, f"must list provider labels or ids, not {describe(raw)}")
        return ()
    for index, name in enumerate(names):
        if not any(provider.matches(name.strip()) for provider in providers):
            known = (
                ", ".join(f"{p.label} ({p.id})" if p.label else p.id for p in providers) or "none"
            )
            findings.error(
                (*path, index) if isinstance(raw, list) else path,
                f"{name!r} names no provider of the suite ({known})",
            )
    chosen = [p.target for p in providers if any(p.matches(n.strip()) for n in names)]
    return tuple(dict.fromkeys(chosen))

"""Eval suites: the eval files people have (three dialects) -> one typed suite, with its files.

``loader`` is the entry point (``read_suite`` and ``format_cases`` for ``/evaluate`` and
``/runs``, ``check_suite`` for ``/validate``); ``dialects`` picks the reader (``agentv`` for
AgentV's 2025 and 2026 files, ``prompts_vars`` for the prompts/providers/vars layout);
``files.FileSource`` reads referenced files safely; ``model`` holds the shared types.
Formatting is delegated to ``app.formatting``.

Must not import fastapi, httpx or the provider adapters: suites are loaded the same way
whichever route or worker asks.
"""

"""Eval suites: AgentV-compatible YAML/JSON documents -> typed suites, with their files.

``loader`` is the entry point (``check_suite`` for ``/validate``, ``load_suite`` for
``/evaluate`` and ``/runs``); ``files.FileSource`` reads referenced files safely; ``model``
holds the shared types. Formatting is delegated to ``app.formatting``.

Must not import fastapi, httpx or the provider adapters: suites are loaded the same way
whichever route or worker asks.
"""

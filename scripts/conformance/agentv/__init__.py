"""Differential harness: AgentV 4.42.4 and this service grade the same suites on one fake LLM.

``python -m scripts.conformance.agentv`` installs AgentV from npm into a git-ignored folder,
starts one deterministic fake LLM on 127.0.0.1 that logs every request, runs AgentV's CLI
and the service (a uvicorn process) on each suite, and prints the agreement figures and every
difference that is not a deliberate one (``known.py``, each explained in docs/design.md).
"""

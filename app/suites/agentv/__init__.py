"""AgentV's eval files into an ``EvalSuite``.

Both generations (late 2025 ``evalcases``, 2026 ``tests``), live conversations, and the keys
AgentV adds to the prompts/providers/vars layout (its files since July 2026).
"""

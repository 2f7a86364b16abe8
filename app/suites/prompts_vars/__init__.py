"""The prompts/providers/vars layout (promptfoo's; AgentV's since July 2026).

Its reader into an ``EvalSuite`` and its prompt templates.
"""

"""Evaluators: grade one candidate answer (LLM judge, rubrics, deterministic checks, composite).

Each evaluator type is one class behind the ``Evaluator`` protocol, found by its ``type`` in
``registry.EVALUATORS``; nothing else branches on evaluator types. The judge is reached only
through the ``JudgeClient`` protocol. Parsing judge replies (``judge_output``) is pure.

Must not import fastapi, httpx or sqlalchemy.
"""

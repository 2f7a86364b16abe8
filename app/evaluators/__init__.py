"""Evaluators: grade one candidate answer (LLM judge, rubrics, deterministic checks, composite).

``catalog`` lists every grader type eval files use (canonical names, aliases); each type that
runs is one class behind the ``Evaluator`` protocol, registered under its canonical name in
``registry.EVALUATORS``; nothing else branches on evaluator types. The judge is reached only
through the ``JudgeClient`` protocol. Parsing judge replies (``judge_output``) is pure.

Must not import fastapi, httpx or sqlalchemy.
"""

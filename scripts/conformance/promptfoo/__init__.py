"""The promptfoo differential harness: promptfoo 0.123.1 and this service on the same configs.

``python -m scripts.conformance.promptfoo`` (see ``__main__``) installs promptfoo from npm
into ``.conformance/`` (git-ignored, once), starts one deterministic fake LLM on 127.0.0.1
(``fake``), runs ``promptfoo eval`` (``peer``) and this service (``ours``) on each config of
the corpus, and prints per-assertion and per-test agreement and every difference that is
not on docs/design.md's list of deliberate ones (``compare``).
"""

"""eval-execution: formats eval cases and runs LLM and agent evaluations over HTTP."""

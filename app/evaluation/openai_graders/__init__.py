"""The graders of the OpenAI Evals surface (``testing_criteria``), run by the durable runs.

``models`` holds the grader objects as the OpenAI API writes them, ``formula`` the safe
evaluator of a ``multi`` grader's ``calculate_output``, ``scope`` the template namespace
(``{{item.*}}``, ``{{sample.output_text}}``, ``{{sample.output_json}}``) rendered by the suite
templates' sandbox, ``checks`` the string and similarity graders, ``model_graders`` the
``label_model`` and ``score_model`` graders (judge targets), ``python_grader`` the code
grader on the sandboxed program runner, and ``runner`` the registry a run uses.
"""

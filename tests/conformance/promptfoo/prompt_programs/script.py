"""A Python prompt file named without a function (prompt_programs.yaml): promptfoo runs it
with the context's JSON as its argument and sends what it prints."""

import json
import sys

context = json.loads(sys.argv[1])
print(f"REPLY:script {context['vars']['topic']}:END")

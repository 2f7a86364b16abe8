"""A code grader: scores 1 when the answer says yes, else 0 (JSON on stdout)."""

import json
import sys

payload = json.load(sys.stdin)
answer = str(payload.get("output") or payload.get("answer") or payload.get("candidate_answer"))
passed = "yes" in answer
result = {"score": 1.0 if passed else 0.0, "assertions": [{"text": "says yes", "passed": passed}]}
print(json.dumps(result))

"""Limits that hold under load: a cli target's flood of output, concurrent proxy batches."""

from __future__ import annotations

from tests.security.conftest import CLI_CAP, Service, facts

RACE = """
import json, os, threading, urllib.error, urllib.request
url = os.environ["AGENTV_TARGET_PROXY_URL"] + "/invokeBatch"
token = os.environ["AGENTV_TARGET_PROXY_TOKEN"]
answered = []
def batch():
    body = json.dumps({"requests": [{"question": "hi", "target": "slow"}] * 4}).encode()
    headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
    request = urllib.request.Request(url, data=body, headers=headers)
    try:
        reply = json.load(urllib.request.urlopen(request, timeout=30))
    except urllib.error.HTTPError:
        answered.append(0)
        return
    answered.append(sum(not r["rawText"].startswith("Error") for r in reply["responses"]))
threads = [threading.Thread(target=batch) for _ in range(3)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(json.dumps({"score": 1, "details": {"answered": sum(answered)}}))
"""


def test_a_cli_target_that_floods_its_output_fails_at_the_cap(service: Service) -> None:
    suite = {"tests": [{"id": "c1", "criteria": "x", "input": "Hi"}]}
    response = service.post("/evaluate", {"suite": suite, "target": "flood"})
    assert response.status_code == 200, response.text
    record = response.json()["results"][0]
    assert record["status"] == "error"
    assert f"wrote more than {CLI_CAP} bytes to stdout" in record["error"]
    assert len(response.content) < CLI_CAP


def test_concurrent_proxy_batches_never_pass_max_calls(service: Service) -> None:
    result = service.grade("race", RACE, grader={"target": {"max_calls": 6}})
    assert facts(result)["answered"] <= 6
    assert result["details"]["target_proxy"]["call_count"] <= 6
    assert result["details"]["target_proxy"]["max_calls"] == 6

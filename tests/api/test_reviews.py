"""People review results: verdicts by hand beside the graders', in summaries, comparisons,
regrades, the viewer's queue, and exported as regression cases."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import SecretStr

from app.settings import Settings
from tests.conftest import ClientFactory, wait_for_run

SUITE: dict[str, Any] = {
    "name": "greetings",
    "tests": [
        {"id": f"case-{i}", "input": f"Say hello {i}", "criteria": "greets",
         "assertions": [{"type": "contains", "value": "hello"}]}
        for i in range(3)
    ],
}  # fmt: skip


async def test_a_review_wins_in_the_summary_and_the_record_keeps_the_graders_result(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    async with make_client(Settings(data_dir=tmp_path / "data", sample_run=False)) as client:
        run_id = (await client.post("/runs", json={"suite": SUITE})).json()["id"]
        await wait_for_run(client, run_id)
        before = (await client.get(f"/runs/{run_id}")).json()["summary"]
        set_review = await client.put(
            f"/runs/{run_id}/cases/1/review",
            json={"verdict": "fail", "score": 0.1, "comment": "Too curt."},
        )
        after = (await client.get(f"/runs/{run_id}")).json()["summary"]
        listed = (await client.get("/runs")).json()["runs"][0]["summary"]
        reviews = (await client.get(f"/runs/{run_id}/reviews")).json()["reviews"]
        case_page = await client.get(f"/ui/fragments/runs/{run_id}/cases/1")
        queue = await client.get(f"/ui/fragments/runs/{run_id}", params={"review": "reviewed"})
        removed = await client.delete(f"/runs/{run_id}/cases/1/review")
        again = (await client.get(f"/runs/{run_id}")).json()["summary"]
        missing = await client.delete(f"/runs/{run_id}/cases/1/review")
        beyond = await client.put(f"/runs/{run_id}/cases/9/review", json={"verdict": "pass"})
        invalid = await client.put(f"/runs/{run_id}/cases/0/review", json={"verdict": "meh"})

    assert set_review.status_code == 200, set_review.text
    assert before["counts"]["passed"] == 3
    assert before["reviewed"] == 0
    assert after["counts"]["passed"] == 2
    assert after["counts"]["failed"] == 1
    assert after["reviewed"] == 1
    assert after["scores"]["min"] == 0.1
    assert listed == after
    assert reviews[0]["seq"] == 1
    assert reviews[0]["eval_id"] == "case-1"
    assert reviews[0]["graded_status"] == "passed"
    assert reviews[0]["verdict"] == "fail"
    assert 'id="review-current"' in case_page.text
    assert "Too curt." in case_page.text
    assert '<tr data-seq="1"' in queue.text
    assert '<tr data-seq="0"' not in queue.text
    assert removed.status_code == 204
    assert again == before
    assert missing.status_code == 404
    assert beyond.status_code == 404
    assert invalid.status_code == 422


async def test_comparisons_and_regrades_use_the_reviews_unless_asked_not_to(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    async with make_client(Settings(data_dir=tmp_path / "data", sample_run=False)) as client:
        base = (await client.post("/runs", json={"suite": SUITE})).json()["id"]
        await wait_for_run(client, base)
        head = (await client.post("/runs", json={"suite": SUITE})).json()["id"]
        await wait_for_run(client, head)
        await client.put(f"/runs/{head}/cases/0/review", json={"verdict": "fail", "score": 0.0})
        compared = (await client.get("/runs/compare", params={"base": base, "head": head})).json()
        kept = (await client.post(f"/runs/{head}/regrade", json={})).json()["id"]
        fresh = (await client.post(f"/runs/{head}/regrade", json={"keep_reviews": False})).json()
        await wait_for_run(client, kept)
        await wait_for_run(client, fresh["id"])
        kept_summary = (await client.get(f"/runs/{kept}")).json()["summary"]
        fresh_summary = (await client.get(f"/runs/{fresh['id']}")).json()["summary"]

    assert compared["counts"]["regression"] == 1
    [worst] = [row for row in compared["cases"] if row["change"] == "regression"]
    assert worst["eval_id"] == "case-0"
    assert worst["head"]["verdict"] == "fail"
    assert kept_summary["reviewed"] == 1
    assert kept_summary["counts"]["failed"] == 1
    assert fresh_summary["reviewed"] == 0
    assert fresh_summary["counts"]["passed"] == 3


async def test_reviewed_cases_export_as_a_suite_that_runs_again(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    async with make_client(Settings(data_dir=tmp_path / "data", sample_run=False)) as client:
        run_id = (await client.post("/runs", json={"suite": SUITE})).json()["id"]
        await wait_for_run(client, run_id)
        await client.put(f"/runs/{run_id}/cases/2/review", json={"verdict": "pass"})
        await client.put(
            f"/runs/{run_id}/cases/0/review", json={"verdict": "fail", "comment": "No name."}
        )
        exported = (await client.get(f"/runs/{run_id}/reviews/suite")).json()
        rerun = await client.post("/evaluate", json=exported)

    cases = {case["id"]: case for case in exported["suite"]["evalcases"]}
    assert set(cases) == {"case-0", "case-2"}
    assert (
        "A reviewer marked an earlier answer fail: No name." in cases["case-0"]["expected_outcome"]
    )
    assert cases["case-2"]["expected_messages"] == [{"role": "assistant", "content": "Say hello 2"}]
    assert "expected_messages" not in cases["case-0"]
    assert rerun.status_code == 200, rerun.text
    assert {r["eval_id"] for r in rerun.json()["results"]} == {"case-0", "case-2"}


async def test_reviews_belong_to_the_runs_owner(make_client: ClientFactory, tmp_path: Path) -> None:
    keys = [SecretStr("owner-key"), SecretStr("other-key")]
    settings = Settings(data_dir=tmp_path / "data", sample_run=False, api_keys=keys)
    owner, other = ({"Authorization": f"Bearer {k.get_secret_value()}"} for k in keys)
    async with make_client(settings) as client:
        client.headers.update(owner)
        run_id = (await client.post("/runs", json={"suite": SUITE})).json()["id"]
        await wait_for_run(client, run_id)
        refused = await client.put(
            f"/runs/{run_id}/cases/0/review", json={"verdict": "fail"}, headers=other
        )
        accepted = await client.put(
            f"/runs/{run_id}/cases/0/review", json={"verdict": "fail"}, headers=owner
        )

    assert refused.status_code == 404
    assert accepted.json()["reviewer"]

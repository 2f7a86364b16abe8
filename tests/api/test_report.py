"""``GET /runs/{id}/report.html``: one self-contained HTML file per run, behind the run's key."""

from __future__ import annotations

import re
from pathlib import Path

from app.api.ui.report import content_security_policy, stylesheet
from app.settings import Settings
from tests.api.test_runs import wait_for_run_as
from tests.conftest import ClientFactory, wait_for_run

KEY_A, KEY_B = "key-a-0123456789abcdef", "key-b-0123456789abcdef"
SUITE = {
    "dataset": "report",
    "evalcases": [
        {
            "id": "capital",
            "expected_outcome": "Paris is the capital of France",
            "input_messages": [
                {"role": "system", "content": "Answer in one line."},
                {"role": "user", "content": "Paris is the capital of France?"},
            ],
        },
        {
            "id": "escape-<b>",
            "expected_outcome": "Names the largest planet",
            "input_messages": [{"role": "user", "content": "<script>alert(1)</script> planet?"}],
        },
    ],
}


async def test_the_report_holds_every_case_and_nothing_external(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    async with make_client(Settings(data_dir=tmp_path / "data")) as client:
        run = (await client.post("/runs", json={"suite": SUITE})).json()
        await wait_for_run(client, run["id"])
        response = await client.get(f"/runs/{run['id']}/report.html")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["content-security-policy"] == content_security_policy()
    html = response.text
    # The stylesheet is inlined (the CSP allows it by hash), and nothing is fetched.
    assert f"<style>{stylesheet()}</style>" in html
    assert not re.search(r"<(script|link|img|iframe)\b", html)
    assert not re.search(
        r"""(src|href)=["'](https?:)?//""",
        html.replace(f'href="http://testserver/ui/runs/{run["id"]}"', ""),
    )
    # Summary, histogram, the case table and each case's conversation, answer and graders.
    assert 'class="chart histogram"' in html
    assert html.count('<tr data-seq="') == 2
    assert html.count('<section class="case"') == 2
    assert "Answer in one line." in html
    assert "Paris is the capital of France?" in html
    assert 'data-grader="llm_judge"' in html
    # Case text is escaped, never markup.
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert f'href="http://testserver/ui/runs/{run["id"]}"' in html
    async with make_client(Settings(data_dir=tmp_path / "data")) as client:
        bare = await client.get(f"/runs/{run['id']}/report.html?viewer_link=false")
    assert "Open in the viewer" not in bare.text
    assert "http://" not in bare.text


async def test_another_key_gets_404_and_no_key_401(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    settings = Settings(data_dir=tmp_path / "data", api_keys=[KEY_A, KEY_B])
    owner = {"authorization": f"Bearer {KEY_A}"}
    async with make_client(settings) as client:
        created = await client.post("/runs", json={"suite": SUITE}, headers=owner)
        run_id = created.json()["id"]
        await wait_for_run_as(client, run_id, owner)
        mine = await client.get(f"/runs/{run_id}/report.html", headers=owner)
        other = await client.get(
            f"/runs/{run_id}/report.html", headers={"authorization": f"Bearer {KEY_B}"}
        )
        anonymous = await client.get(f"/runs/{run_id}/report.html")
    assert mine.status_code == 200
    assert other.status_code == 404
    assert other.headers["content-type"] == "application/problem+json"
    assert anonymous.status_code == 401


async def test_the_report_shows_the_runs_tags_and_no_judge_a_regrade_never_called(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    says = {"evaluators": [{"name": "says_paris", "type": "contains", "value": "Paris"}]}
    async with make_client(Settings(data_dir=tmp_path / "data")) as client:
        run = (await client.post("/runs", json={"suite": SUITE, "tags": ["main"]})).json()
        await wait_for_run(client, run["id"])
        regrade = (await client.post(f"/runs/{run['id']}/regrade", json=says)).json()
        await wait_for_run(client, regrade["id"])
        first = (await client.get(f"/runs/{run['id']}/report.html")).text
        second = (await client.get(f"/runs/{regrade['id']}/report.html")).text

    def judge(html: str) -> str:
        return html.split("<dt>Judge</dt><dd>")[1].split("</dd>")[0]

    assert re.findall(r'<dd id="tags"><span class="tag run-tag">([^<]*)</span>', first) == ["main"]
    assert judge(first) == "default"
    assert 'id="tags"' not in second  # a regrade does not take its source's tags
    assert judge(second) == "–"

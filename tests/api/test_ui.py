"""The viewer's routes through the ASGI app: public shells, key-scoped fragments, escaping."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from pydantic import SecretStr

from app.settings import Settings
from app.settings.targets import MockTarget
from tests.conftest import ClientFactory, wait_for_run

KEY = "ui-key"
HOSTILE = '<img src=x onerror="alert(1)">'


async def test_shells_are_public_and_strict_and_fragments_need_the_key(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    settings = Settings(data_dir=tmp_path / "data", api_keys=[SecretStr(KEY)], sample_run=False)
    async with make_client(settings) as client:
        shell = await client.get("/ui/runs/run_x")
        asset = await client.get("/ui/assets/ui.js")
        fragment = await client.get("/ui/fragments/runs")
        allowed = await client.get("/ui/fragments/runs", headers={"Authorization": f"Bearer {KEY}"})

    assert shell.status_code == 200
    assert 'data-fragment="/ui/fragments/runs/run_x"' in shell.text
    policy = shell.headers["content-security-policy"]
    assert "script-src 'self';" in policy
    assert "unsafe-inline" not in policy
    assert asset.status_code == 200
    assert fragment.status_code == 401
    assert allowed.status_code == 200


async def test_fragments_escape_what_runs_hold_and_csv_has_a_row_per_case(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    target = MockTarget(name="hostile", response=HOSTILE)
    settings = Settings(data_dir=tmp_path / "data", targets=[target], sample_run=False)
    suite = {
        "dataset": "ui",
        "evalcases": [
            {
                "id": f"c{i}",
                "expected_outcome": "x",
                "input_messages": [{"role": "user", "content": HOSTILE}],
            }
            for i in range(3)
        ],
    }
    async with make_client(settings) as client:
        run_id = (await client.post("/runs", json={"suite": suite, "target": "hostile"})).json()[
            "id"
        ]
        await wait_for_run(client, run_id)
        run_page = await client.get(f"/ui/fragments/runs/{run_id}")
        case_page = await client.get(f"/ui/fragments/runs/{run_id}/cases/1")
        past_end = await client.get(f"/ui/fragments/runs/{run_id}/cases/3")
        exported = await client.get(f"/ui/fragments/runs/{run_id}/export.csv")

    for page in (run_page, case_page):
        assert page.status_code == 200
        assert HOSTILE not in page.text
        assert "&lt;img src=x onerror=" in page.text
    assert 'id="previous" href="/ui/runs/' in case_page.text
    assert past_end.status_code == 404
    rows = list(csv.DictReader(io.StringIO(exported.text)))
    assert [row["eval_id"] for row in rows] == ["c0", "c1", "c2"]
    assert exported.headers["content-type"].startswith("text/csv")

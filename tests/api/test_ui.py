"""The viewer's routes through the ASGI app: public shells, key-scoped fragments, escaping."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest
from pydantic import SecretStr

from app.api.ui import views
from app.api.ui.views import records_csv
from app.schemas.viewer import NumberedRecord
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
        # The answers are HOSTILE too: the text filter finds them, and its value is echoed.
        run_page = await client.get(f"/ui/fragments/runs/{run_id}", params={"text": HOSTILE})
        case_page = await client.get(f"/ui/fragments/runs/{run_id}/cases/1")
        past_end = await client.get(f"/ui/fragments/runs/{run_id}/cases/3")
        exported = await client.get(f"/ui/fragments/runs/{run_id}/export.csv")

    for page in (run_page, case_page):
        assert page.status_code == 200
        assert HOSTILE not in page.text
        assert "&lt;img src=x onerror=" in page.text
    assert 'id="previous" href="/ui/runs/' in case_page.text
    assert "3 of 3 shown" in run_page.text
    assert past_end.status_code == 404
    rows = list(csv.DictReader(io.StringIO(exported.text)))
    assert [row["eval_id"] for row in rows] == ["c0", "c1", "c2"]
    assert exported.headers["content-type"].startswith("text/csv")


async def test_the_run_page_sums_the_cost_targets_report_per_role(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    target = MockTarget(name="priced", cost_usd=0.0125)
    settings = Settings(data_dir=tmp_path / "data", targets=[target], sample_run=False)
    suite = {
        "evalcases": [
            {
                "id": f"c{i}",
                "expected_outcome": "x",
                "input_messages": [{"role": "user", "content": "hi"}],
            }
            for i in range(4)
        ]
    }
    async with make_client(settings) as client:
        priced = (await client.post("/runs", json={"suite": suite, "target": "priced"})).json()[
            "id"
        ]
        unpriced = (await client.post("/runs", json={"suite": suite})).json()["id"]
        await wait_for_run(client, priced)
        await wait_for_run(client, unpriced)
        priced_page = (await client.get(f"/ui/fragments/runs/{priced}")).text
        unpriced_page = (await client.get(f"/ui/fragments/runs/{unpriced}")).text

    def cost_cells(page: str) -> list[str]:
        table = page[page.index('id="tokens"') : page.index("</table>", page.index('id="tokens"'))]
        return [
            row.rsplit('<td class="num">', 1)[1].split("<")[0] for row in table.split("<tr>")[2:]
        ]

    assert cost_cells(priced_page) == ["0.0500", "–"]
    assert cost_cells(unpriced_page) == ["–", "–"]


async def test_the_run_page_filters_sorts_and_pages_its_cases_on_the_service(
    make_client: ClientFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(views, "ROWS_PER_PAGE", 2)
    target = MockTarget(name="plain", response="the answer")
    settings = Settings(data_dir=tmp_path / "data", targets=[target], sample_run=False)
    wanted = ["answer", "absent", "answer", "absent", "answer"]
    tests = [
        {"id": f"c{i}", "criteria": "x", "input": "Q?", "assertions": [
            {"name": "has-it", "type": "contains", "value": value}]}
        for i, value in enumerate(wanted)
    ]  # fmt: skip
    async with make_client(settings) as client:
        created = await client.post("/runs", json={"suite": {"tests": tests}, "target": "plain"})
        run_id = created.json()["id"]
        await wait_for_run(client, run_id)

        async def listed(**query: str) -> tuple[list[int], str]:
            page = await client.get(f"/ui/fragments/runs/{run_id}", params=query)
            assert page.status_code == 200, page.text
            seqs = [int(seq) for seq in re.findall(r'<tr data-seq="(\d+)"', page.text)]
            return seqs, re.sub(r"\s+", " ", page.text)

        first, first_html = await listed()
        second, _ = await listed(page="1")
        failed, failed_html = await listed(status="failed")
        by_score, _ = await listed(sort="score", order="desc")
        clamped, clamped_html = await listed(page="9")
        found, _ = await listed(text="C3")
        missed, _ = await listed(missed="has-it", sort="id", order="desc")

    assert (first, second, clamped) == ([0, 1], [2, 3], [4])
    assert "1–2 of 5 shown · page 1 of 3" in first_html  # the rows on the page, not all 5
    assert 'id="page-next" data-query="page=1"' in first_html
    assert "page 3 of 3" in clamped_html
    assert failed == [1, 3]
    assert "2 of 5 shown" in failed_html
    assert 'id="page-next"' not in failed_html  # one page: no pager
    assert by_score == [0, 2]  # score 1.0 first, then in case order
    assert found == [3]
    assert missed == [3, 1]


async def test_runs_are_listed_by_suite_name_and_a_failed_case_says_why_at_the_top(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    settings = Settings(data_dir=tmp_path / "data", sample_run=False)
    suite = {
        "name": "refund-policy",
        "tests": [{"id": "needs-word", "input": "Say hello", "criteria": "c",
                   "assertions": [{"type": "contains", "value": "goodbye", "required": True}]}],
    }  # fmt: skip
    async with make_client(settings) as client:
        run = (await client.post("/runs", json={"suite": suite})).json()
        await wait_for_run(client, run["id"])
        shown = (await client.get(f"/runs/{run['id']}")).json()
        listing = await client.get("/ui/fragments/runs")
        run_page = await client.get(f"/ui/fragments/runs/{run['id']}")
        case_page = await client.get(f"/ui/fragments/runs/{run['id']}/cases/0")

    assert shown["name"] == "refund-policy"
    assert ">refund-policy</a>" in listing.text
    assert 'data-text="refund-policy run_' in listing.text
    assert "<h1>refund-policy <small>" in run_page.text
    assert 'id="why"' in case_page.text
    why = re.sub(r"\s+", " ", case_page.text.split('id="why"')[1].split("</div>")[0])
    assert "goodbye" in why
    assert "📎" not in case_page.text


async def test_comparing_runs_without_a_shared_case_says_so_instead_of_a_verdict(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    settings = Settings(data_dir=tmp_path / "data", sample_run=False)

    def suite(case_id: str) -> dict[str, object]:
        return {"tests": [{"id": case_id, "input": "hi", "criteria": "greets"}]}

    async with make_client(settings) as client:
        base = (await client.post("/runs", json={"suite": suite("a")})).json()["id"]
        head = (await client.post("/runs", json={"suite": suite("b")})).json()["id"]
        await wait_for_run(client, base)
        await wait_for_run(client, head)
        page = await client.get("/ui/fragments/compare", params={"base": base, "head": head})

    assert page.status_code == 200
    assert "Nothing to compare" in page.text
    assert "Not significant" not in page.text


@pytest.mark.parametrize(
    ("value", "shown"), [(0.224, "0.2"), (9.96, "10.0"), (10.4, "10"), (None, "–")]
)
def test_latencies_below_ten_milliseconds_keep_a_decimal(value: float | None, shown: str) -> None:
    from app.api.ui.render import environment

    assert environment().filters["milliseconds"](value) == shown


@pytest.mark.parametrize(
    "hostile",
    ['=HYPERLINK("http://127.0.0.1/x","click")', "+1+2", "-2+3", "@SUM(A1)", "\tx", "\rx"],
)
def test_csv_export_neutralises_formulas(hostile: str) -> None:
    arm = {"index": 0, "target": hostile, "prompt": None}
    record = {"eval_id": hostile, "status": "ok", "score": -0.5, "error": hostile, "arm": arm}
    exported = records_csv([NumberedRecord(seq=0, record=record)])
    row = next(csv.DictReader(io.StringIO(exported)))
    assert row["eval_id"] == row["arm"] == "'" + hostile
    assert row["error"] == "'" + hostile
    assert row["score"] == "-0.5"  # numbers stay numbers


def judged(
    *verdicts: tuple[str, str | None], status: str = "failed", **extra: object
) -> dict[str, object]:
    results = [
        {"name": f"g{i}", "type": kind, "verdict": v} for i, (kind, v) in enumerate(verdicts)
    ]
    return {"status": status, "evaluator_results": results, **extra}


@pytest.mark.parametrize(
    ("record", "reasons"),
    [
        (judged(("llm_judge", "pass"), ("contains", "pass"), status="passed"), set()),
        (judged(("llm_judge", "pass"), ("contains", "fail")), {"disagree"}),
        (judged(("llm-rubric", "fail"), ("regex", "pass")), {"disagree"}),
        # Two judges that disagree, checks agreeing with one of them: a judge and a check differ.
        (judged(("llm_judge", "pass"), ("llm_judge", "fail"), ("contains", "fail")), {"disagree"}),
        (judged(("contains", "pass"), ("regex", "fail")), {"disagree"}),  # no judge: checks
        (judged(("llm_judge", "fail"), ("contains", "fail")), set()),
        (judged(("llm_judge", None), status="judge_error"), {"judge_error"}),
        (judged(("llm_judge", "borderline"), status="borderline"), {"borderline"}),
        (judged(status="passed", trials={"count": 3, "passed": 2}), {"low_confidence"}),
        (judged(status="passed", trials={"count": 3, "passed": 3}), set()),
        (judged(status="failed", trials={"count": 3, "passed": 0}), set()),
    ],
)
def test_each_case_is_queued_for_review_for_its_reasons(
    record: dict[str, object], reasons: set[str]
) -> None:
    assert views.review_reasons(record) == reasons


def test_the_queues_take_unreviewed_cases_of_their_reason_or_those_picked_by_hand() -> None:
    rows = [
        NumberedRecord(seq=0, record=judged(("llm_judge", "pass"), ("contains", "fail"))),
        NumberedRecord(seq=1, record=judged(("llm_judge", None), status="judge_error")),
        NumberedRecord(
            seq=2,
            record={
                **judged(("llm_judge", None), status="judge_error"),
                "review": {"verdict": "pass"},
            },
        ),
        NumberedRecord(seq=3, record=judged(("llm_judge", "pass"), status="passed")),
    ]

    def listed(**query: object) -> list[int]:
        lines = [views.case_row(row) for row in rows]
        return [line.seq for line in lines if line.matches(views.CaseQuery(**query))]  # type: ignore[arg-type]

    assert listed(review="to_review") == [0, 1]
    assert listed(review="judge_error") == [1]
    assert listed(review="disagree") == [0]
    assert listed(review="reviewed") == [2]
    assert listed(cases=(3, 0)) == [0, 3]
    assert listed(cases=(3, 0), review="to_review") == [0]
    step = views.queue_step(rows, views.CaseQuery(review="to_review"), 0)
    assert (step.previous, step.next, step.position, step.count) == (None, 1, 1, 2)
    assert views.queue_step(rows, views.CaseQuery(review="to_review"), 2).previous == 1  # left it


async def test_a_queue_chosen_by_hand_may_hold_many_cases(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    settings = Settings(data_dir=tmp_path / "data", sample_run=False)
    cases = [{"id": f"c{i}", "input": "hi", "criteria": "greets"} for i in range(3)]
    async with make_client(settings) as client:
        run_id = (await client.post("/runs", json={"suite": {"tests": cases}})).json()["id"]
        await wait_for_run(client, run_id)
        picked = ",".join(str(seq) for seq in range(2, 2000))  # ~9,000 characters
        page = await client.get(f"/ui/fragments/runs/{run_id}", params={"cases": picked})
        case = await client.get(f"/ui/fragments/runs/{run_id}/cases/2", params={"cases": picked})

    assert page.status_code == 200
    assert re.findall(r'<tr data-seq="(\d+)"', page.text) == ["2"]
    assert "1998 case(s) chosen by hand" in page.text
    assert case.status_code == 200
    assert "1 of 1" in case.text

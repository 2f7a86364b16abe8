"""promptfoo tests that read earlier tests, over real HTTP on the fake LLM: ``storeOutputAs``
and ``_conversation``, on ``/evaluate`` and on durable runs (resumed after a restart too).

Measured against promptfoo 0.123.1: tests/conformance/promptfoo/store_outputs.yaml and
conversation.yaml run both tools (``app.suites.prompts_vars.sequential`` says what they do).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from sqlalchemy import delete, update
from sqlalchemy.ext.asyncio import create_async_engine

from app.runs.tables import CaseRow, ResultRow, RunRow
from app.settings import Settings
from app.settings.targets import OpenAITarget
from testkit.fake_llm import FakeLLM, RecordedRequest, Reply
from testkit.fake_wire import last_user_text
from tests.conftest import ClientFactory, wait_for_run

EXAMPLES = Path("/work/shared/reference/promptfoo-examples")


def echo(recorded: RecordedRequest) -> Reply:
    """``<model> says <last user text>``: each answer shows what its cell was asked."""
    return Reply(text=f"{recorded.json['model']} says {last_user_text(recorded)}")


def settings_for(
    tmp_path: Path,
    fake: FakeLLM,
    database_url: str | None = None,
    names: tuple[str, ...] = ("a", "b"),
) -> Settings:
    fake.responder = echo
    targets = [
        OpenAITarget(name=name, provider="openai", base_url=f"{fake.url}/v1", model=name)
        for name in names
    ]
    return Settings(
        data_dir=tmp_path / "data",
        targets=targets,
        retry_max_attempts=1,
        sample_run=False,
        database_url=database_url,
    )


STORING = {
    "prompts": ["Respond: {{message}}"],
    "providers": ["a", "b"],
    "tests": [
        {
            "vars": {"message": "pick a fruit"},
            "options": {"storeOutputAs": "fruit", "transform": "output.split(' ')[0]"},
        },
        {"vars": {"message": "why {{fruit}}?"}, "options": {"storeOutputAs": "reason"}},
        {"vars": {"message": "rebut {{fruit}}: {{reason}}"}},
    ],
}

STORED_ORDER = [
    ("a", "Respond: pick a fruit"),
    ("b", "Respond: pick a fruit"),
    ("a", "Respond: why b?"),
    ("b", "Respond: why b?"),
    ("a", "Respond: rebut b: b says Respond: why b?"),
    ("b", "Respond: rebut b: b says Respond: why b?"),
]
"""One cell at a time, test by test, provider by provider; the last provider's output
(after the transform: its first word) is what the later tests read, on both arms."""

CHAT = """[{"role": "system", "content": "{{ system_message }}"},
{% for completion in _conversation %}
  {"role": "user", "content": "{{ completion.prompt[completion.prompt.length - 1].content }}"},
  {"role": "assistant", "content": "{{ completion.output }}"},
{% endfor %}
{"role": "user", "content": "{{ question }}"}]"""

CONVERSING = {
    "prompts": [{"id": "file://chat.json", "label": "chat"}],
    "providers": ["a"],
    "defaultTest": {"vars": {"system_message": "be helpful"}},
    "tests": [
        {"vars": {"question": "q1"}, "metadata": {"conversationId": "x"}},
        {"vars": {"question": "r1"}, "metadata": {"conversationId": "y"}},
        {"vars": {"question": "q2"}, "metadata": {"conversationId": "x"}},
        {"vars": {"question": "q3"}, "metadata": {"conversationId": "x"}},
    ],
}


def turns(recorded: RecordedRequest) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in recorded.json["messages"]]


async def evaluate(client: Any, suite: dict[str, Any] | str, **request: Any) -> dict[str, Any]:
    files = {key: value for key, value in request.items() if key == "files"}
    validated = await client.post("/validate", json={"suite": suite, **files})
    assert validated.status_code == 200, validated.text
    assert validated.json()["valid"], validated.text
    response = await client.post("/evaluate", json={"suite": suite, **request})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_a_stored_output_is_the_variable_of_later_tests_one_value_for_every_arm(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    async with make_client(settings_for(tmp_path, fake_llm)) as client:
        body = await evaluate(client, STORING, max_concurrency=8)
    asked = [(r.json["model"], last_user_text(r)) for r in fake_llm.requests]
    # one cell at a time, test by test, provider by provider; the last provider's output
    # (after the transform: its first word) is what the later tests read, on both arms
    assert asked == STORED_ORDER
    assert [r["status"] for r in body["results"]] == ["passed"] * 6


async def test_a_conversation_holds_the_earlier_turns_of_its_thread(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    async with make_client(settings_for(tmp_path, fake_llm)) as client:
        await evaluate(client, CONVERSING, files={"chat.json": CHAT}, max_concurrency=8)
    system = ("system", "be helpful")
    assert [turns(r) for r in fake_llm.requests] == [
        [system, ("user", "q1")],
        [system, ("user", "r1")],
        [system, ("user", "q1"), ("assistant", "a says q1"), ("user", "q2")],
        [
            *(system, ("user", "q1"), ("assistant", "a says q1")),
            *(("user", "q2"), ("assistant", "a says q2"), ("user", "q3")),
        ],
    ]


async def test_a_durable_run_reads_the_stored_records_of_the_earlier_tests(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory, database_url: str
) -> None:
    async with make_client(settings_for(tmp_path, fake_llm, database_url)) as client:
        created = await client.post("/runs", json={"suite": STORING, "max_concurrency": 4})
        assert created.status_code in (200, 201, 202), created.text
        run = await wait_for_run(client, created.json()["id"])
        results = (await client.get(f"/runs/{run['id']}/results?limit=100")).json()["results"]
    assert run["status"] == "completed"
    assert [(r.json["model"], last_user_text(r)) for r in fake_llm.requests] == STORED_ORDER
    answers = [(r["arm"]["target"], r["candidate_answer"]) for r in results]
    assert answers[-1] == ("b", "b says Respond: rebut b: b says Respond: why b?")


async def test_a_resumed_run_sees_the_outputs_stored_before_the_restart(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory, database_url: str
) -> None:
    """As after kill -9 with two tests answered: the restarted service runs the last two
    only, and they still read the earlier turns of their conversation from the database."""
    url = database_url
    settings = settings_for(tmp_path, fake_llm, url)
    suite = yaml.safe_dump(CONVERSING)
    async with make_client(settings) as client:
        created = await client.post("/runs", json={"suite": suite, "files": {"chat.json": CHAT}})
        run_id = created.json()["id"]
        await wait_for_run(client, run_id)
    engine = create_async_engine(url)
    async with engine.begin() as connection:  # the last two tests back to not run
        await connection.execute(
            delete(ResultRow).where(ResultRow.run_id == run_id, ResultRow.case_seq >= 2)
        )
        await connection.execute(
            update(CaseRow).where(CaseRow.run_id == run_id, CaseRow.seq >= 2).values(pending=True)
        )
        await connection.execute(
            update(RunRow).where(RunRow.id == run_id).values(status="running", finished_at=None)
        )
    await engine.dispose()
    fake_llm.reset()
    async with make_client(settings) as client:
        resumed = await wait_for_run(client, run_id)
    assert resumed["status"] == "completed"
    assert [turns(r)[1:] for r in fake_llm.requests] == [
        [("user", "q1"), ("assistant", "a says q1"), ("user", "q2")],
        [
            *(("user", "q1"), ("assistant", "a says q1")),
            *(("user", "q2"), ("assistant", "a says q2"), ("user", "q3")),
        ],
    ]


async def test_promptfoos_two_examples_load_and_run_in_order(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    # the operator's targets named as the examples' providers (as the harness names them)
    settings = settings_for(tmp_path, fake_llm, names=("openai:gpt-4o", "openai:gpt-4.1-mini"))
    asked: dict[str, list[RecordedRequest]] = {}
    for name in ("store-and-reuse-outputs", "config-multi-turn"):
        folder = EXAMPLES / name
        suite = (folder / "promptfooconfig.yaml").read_text()
        files = {p.name: p.read_text() for p in folder.iterdir() if p.suffix == ".json"}
        fake_llm.reset()
        async with make_client(settings) as client:
            body = await evaluate(client, suite, files=files)
        assert [r["status"] for r in body["results"]] == ["passed"] * len(body["results"])
        asked[name] = list(fake_llm.requests)
    # the first answer's first word (its transform) is the favourite fruit of the next tests
    stored = [last_user_text(r) for r in asked["store-and-reuse-outputs"]]
    assert stored[1] == "Respond to the user: Why do you like openai:gpt-4o so much?"
    rebuttal = "Write a snarky 2 sentence rebuttal to this argument for loving openai:gpt-4o"
    assert stored[2].startswith(f'Respond to the user: {rebuttal}: \\"openai:gpt-4o says')
    # the third Facebook question carries the two before it and their answers
    third = turns(asked["config-multi-turn"][2])
    assert [role for role, _ in third] == ["system", *["user", "assistant"] * 2, "user"]
    assert third[1:3] == [
        ("user", "Who founded Facebook?"),
        ("assistant", "openai:gpt-4.1-mini says Who founded Facebook?"),
    ]

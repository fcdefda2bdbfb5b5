"""A conversation kept by the server, through every door and for every answerer (#35).

Each case sends a first question with a ``session_id``, then a follow-up with the same id and NO
history: the answer must carry the ``session_id`` back, and the follow-up must be read from the
stored turns (its ``standalone_question`` names what the first question was about). The doors:
``POST /api/v1/qa`` (and its SSE stream), each app's own route, the OpenAI front door
(``/v1/chat/completions`` with only the last message) and the CLI (``zhiwen ask --session``).
The answerers: generic QA, recipes, policy, listings, the advisor — over one home with every
app's KBs built small (:func:`front_support.build_all`).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from zhiwen.appkit.context import build_context
from zhiwen.appkit.registry import HomeKBs, load_apps
from zhiwen.config import Settings, reset_settings_cache
from zhiwen.conversation import service as conversation
from zhiwen.conversation.request import AskRequest
from zhiwen.conversation.store import ConversationMemory, Session, forget_memories

FRONT = Path(__file__).resolve().parents[1] / "openai_front" / "front_support.py"


def _front_support() -> Any:
    spec = importlib.util.spec_from_file_location("conversation_front_support", FRONT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Dialogue:
    target: str  # a KB or an app's name (the /api/v1/qa ``kb``, the /v1 ``model``, ``--kb``)
    first: str
    follow_up: str
    understood: Callable[[str], bool]  # the follow-up's standalone question says what it follows


DIALOGUES = [
    Dialogue("demo", "管理接口需要什么配置？", "它用来做什么？", lambda s: "管理接口" in s),
    Dialogue("recipes", "西红柿炒鸡蛋怎么做？", "需要哪些原料？", lambda s: s.startswith("西红柿炒鸡蛋")),
    Dialogue(
        "policy",
        "中国公民去泰国需要签证吗？",
        "那塞尔维亚呢？",
        lambda s: s == "中国公民去塞尔维亚需要签证吗？",
    ),
    Dialogue(
        "listings",
        "上海浦东800万以内的两房",
        "要南北通透的",
        lambda s: s == "上海浦东新区 800万以内 2室 南北通透",
    ),
    Dialogue(
        "advisor",
        "总价250万，首付35%，贷款25年，利率3%，月供多少？",
        "如果贷款年限改成30年呢？",
        lambda s: s.startswith("按总价250万元、首付35%（87.5万元）、贷款30年") and s.endswith("改成30年呢？"),
    ),
]
IDS = [d.target for d in DIALOGUES]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    front = _front_support()
    for needed in ("howtocook", "lianjia_ershoufang", "cn_law_subset"):
        if not (front.SHARED / needed).is_dir():
            pytest.skip(f"shared data not found at {front.SHARED / needed} (set ZHIWEN_SHARED_DATA)")
    from zhiwen.apps.policy.settings import reset_policy_settings

    reset_policy_settings()
    tmp = tmp_path_factory.mktemp("every_door")
    settings: Settings = front.make_settings(tmp / "home")
    front.build_all(settings, tmp)
    return settings


@pytest.fixture(scope="module")
def http(home: Settings) -> Iterator[TestClient]:
    from zhiwen.api.app import create_app

    with TestClient(create_app(home)) as client:
        yield client


def _sse(resp: Any) -> list[dict[str, Any]]:
    assert resp.status_code == 200, resp.text
    return [json.loads(line[5:]) for line in resp.text.splitlines() if line.startswith("data:")]


def _done(events: list[dict[str, Any]]) -> dict[str, Any]:
    done = [e for e in events if e.get("type") == "done"]
    assert done, events
    return done[-1]


def _named(data: dict[str, Any]) -> dict[str, Any]:
    """Which answer it is (every door carries it, #37): its id, type, FAQ entry, suggestions."""
    assert len(data["answer_id"]) == 16, data
    assert data["answer_type"] in ("faq", "generated", "extractive", "refused", "table", "tool"), data
    assert data["faq"] is None and isinstance(data["suggestions"], list), data
    return {key: data[key] for key in ("answer_id", "answer_type", "faq", "suggestions")}


# -- the doors: each asks one question in a session, and returns (session_id, standalone_question,
# the answer's id fields)
def rest(http: TestClient, d: Dialogue, question: str, sid: str) -> tuple[Any, Any, dict[str, Any]]:
    r = http.post("/api/v1/qa", json={"kb": d.target, "question": question, "session_id": sid})
    assert r.status_code == 200, r.text
    data = r.json()["data"]
    return data["session_id"], data["standalone_question"], _named(data)


def rest_sse(http: TestClient, d: Dialogue, question: str, sid: str) -> tuple[Any, Any, dict[str, Any]]:
    body = {"kb": d.target, "question": question, "session_id": sid, "stream": True}
    done = _done(_sse(http.post("/api/v1/qa", json=body)))
    return done.get("session_id"), done.get("standalone_question"), _named(done)


def v1(http: TestClient, d: Dialogue, question: str, sid: str) -> tuple[Any, Any, dict[str, Any]]:
    body = {"model": d.target, "messages": [{"role": "user", "content": question}], "session_id": sid}
    r = http.post("/v1/chat/completions", json=body)
    assert r.status_code == 200, r.text
    info = r.json()["zhiwen"]
    return info["session_id"], info["standalone_question"], _named(info)


def v1_stream(http: TestClient, d: Dialogue, question: str, sid: str) -> tuple[Any, Any, dict[str, Any]]:
    body = {"model": d.target, "messages": [{"role": "user", "content": question}], "stream": True}
    r = http.post("/v1/chat/completions", json=body, headers={"X-Session-Id": sid})
    chunks = [json.loads(line[5:]) for line in r.text.splitlines() if line.startswith("data: {")]
    info = next(c["zhiwen"] for c in chunks if "zhiwen" in c)
    return info["session_id"], info["standalone_question"], _named(info)


APP_ROUTES = {"policy": "/api/v1/policy/ask", "listings": "/ask"}


def app_route(http: TestClient, d: Dialogue, question: str, sid: str) -> tuple[Any, Any, dict[str, Any]]:
    if d.target == "advisor":  # the advisor's own route is its SSE chat
        events = _sse(http.post("/api/v1/chat", json={"session_id": sid, "message": question}))
        done = _done(events)
        return done["session_id"], done["standalone_question"], _named(done)
    if d.target not in APP_ROUTES:
        pytest.skip(f"{d.target} has no route of its own")
    r = http.post(APP_ROUTES[d.target], json={"question": question, "session_id": sid})
    assert r.status_code == 200, r.text
    data = r.json()["data"]
    return data["session_id"], data["standalone_question"], _named(data)


DOORS = {"rest": rest, "rest_sse": rest_sse, "app_route": app_route, "v1": v1, "v1_stream": v1_stream}


@pytest.mark.parametrize("door", list(DOORS))
@pytest.mark.parametrize("dialogue", DIALOGUES, ids=IDS)
def test_a_session_is_returned_and_continued(http: TestClient, dialogue: Dialogue, door: str) -> None:
    ask = DOORS[door]
    sid = f"{door}-{dialogue.target}"
    first_sid, _, first = ask(http, dialogue, dialogue.first, sid)
    assert first_sid == sid
    again_sid, understood, again = ask(http, dialogue, dialogue.follow_up, sid)
    assert again_sid == sid
    assert understood and dialogue.understood(understood), understood
    # every answer is named and logged (#37): its id is in the home's question log
    assert first["answer_id"] != again["answer_id"]
    question_log = http.app.state.question_log  # type: ignore[attr-defined]
    assert question_log.flush()
    for named in (first, again):
        record = question_log.find(named["answer_id"])
        assert record.answer_type == named["answer_type"] and record.session_id == sid


@pytest.mark.parametrize("dialogue", DIALOGUES, ids=IDS)
def test_the_cli_session_continues_across_runs(
    home: Settings, dialogue: Dialogue, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ZHIWEN_HOME", str(home.home))
    monkeypatch.setenv("ZHIWEN_EMBEDDING__PROVIDER", "hash")
    monkeypatch.delenv("ZHIWEN_LLM__BASE_URL", raising=False)
    reset_settings_cache()
    from zhiwen.cli.main import app

    runner = CliRunner()
    sid = f"cli-{dialogue.target}"
    try:
        for question in (dialogue.first, dialogue.follow_up):
            forget_memories()  # each run a new process: nothing but the file carries the session
            r = runner.invoke(app, ["ask", "--kb", dialogue.target, "--session", sid, "--json", question])
            assert r.exit_code == 0, r.output
            data = json.loads(r.stdout)
            assert data["session_id"] == sid and _named(data)
    finally:
        reset_settings_cache()
    assert data["standalone_question"] and dialogue.understood(data["standalone_question"]), data


def test_another_key_does_not_continue_the_session(http: TestClient) -> None:
    d = DIALOGUES[0]
    rest(http, d, d.first, "bound")
    r = http.post(
        "/api/v1/qa",
        json={"kb": d.target, "question": d.follow_up, "session_id": "bound"},
        headers={"Authorization": "Bearer another-caller"},
    )
    data = r.json()["data"]
    assert data["session_id"] == "bound" and not d.understood(data["standalone_question"] or "")


class CountingMemory(ConversationMemory):
    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.loads = self.saves = 0

    def load(self, caller: str, session_id: str) -> Session | None:
        self.loads += 1
        return super().load(caller, session_id)

    def save(self, caller: str, session_id: str, session: Session) -> None:
        self.saves += 1
        super().save(caller, session_id, session)


@pytest.mark.parametrize("dialogue", DIALOGUES, ids=IDS)
def test_one_read_and_one_write_of_the_session_per_turn(
    home: Settings, dialogue: Dialogue, tmp_path: Path
) -> None:
    """The advisor's turn used to be stored twice, the listings' row read and written twice."""
    ctx = build_context(home, llm=None)
    who = load_apps().ready(dialogue.target, HomeKBs(home))
    store = CountingMemory(tmp_path / "sessions.sqlite")
    for turn, question in enumerate((dialogue.first, dialogue.follow_up), start=1):
        request = AskRequest(question=question, kb=who.kb, session_id="counted")
        answer = conversation.ask(who.answerer, request, ctx, store)
        assert (store.loads, store.saves) == (turn, turn)
    assert answer.standalone_question and dialogue.understood(answer.standalone_question)
    held = store.load("", "counted")
    assert held is not None and held.user_texts() == [dialogue.first, dialogue.follow_up]


FAQ_QUESTION = "这个知识库的维护人是谁？"
FAQ_ANSWER = "由知问团队维护，问题请发邮件到 kb@example.com。"


@pytest.mark.parametrize("dialogue", [d for d in DIALOGUES if d.target != "listings"], ids=lambda d: d.target)
def test_an_faq_entry_answers_word_for_word_in_every_app(
    http: TestClient, home: Settings, dialogue: Dialogue
) -> None:
    """#36: the KB the answerer answers from holds an FAQ entry; its own door gives it verbatim
    (the listings app answers with listings, not text: it has no FAQ step)."""
    from zhiwen.faq import FAQEntry
    from zhiwen.kb import open_kb
    from zhiwen.kb.faq import put_faq_entries

    who = load_apps().ready(dialogue.target, HomeKBs(home))
    kb = who.answerer.faq_kb(AskRequest(question=FAQ_QUESTION, kb=who.kb))
    assert kb is not None
    entry = FAQEntry.create(FAQ_QUESTION, FAQ_ANSWER, id=f"owner-{dialogue.target}")
    put_faq_entries(open_kb(kb, settings=home), [entry], actor="")
    if dialogue.target == "advisor":
        events = _sse(http.post("/api/v1/chat", json={"message": FAQ_QUESTION, "session_id": "faq"}))
        done, text = _done(events), "".join(e["text"] for e in events if e["type"] == "delta")
    elif dialogue.target in APP_ROUTES:
        done = http.post(APP_ROUTES[dialogue.target], json={"question": FAQ_QUESTION}).json()["data"]
        text = done["answer"]
    else:
        done = http.post("/api/v1/qa", json={"kb": dialogue.target, "question": FAQ_QUESTION}).json()["data"]
        text = done["answer"]
    assert done["answer_type"] == "faq" and done["faq"]["entry_id"] == entry.id, done
    assert text == FAQ_ANSWER

"""The one session store: kept across instances, bound to their caller, bounded and expiring, each
answerer's state beside the turns; and the advisor's rows of an earlier file read through it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from zhiwen.conversation.store import ConversationMemory, Session


def _turn(q: str) -> tuple[dict[str, str], ...]:
    return ({"role": "user", "content": q}, {"role": "assistant", "content": f"答：{q}"})


def test_turns_survive_a_new_instance_and_stay_with_their_caller(tmp_path: Path) -> None:
    path = tmp_path / "sessions.sqlite"
    ConversationMemory(path).save(
        "key-a", "s1", Session(_turn("红烧肉怎么做？"), {"recipes": {"dish": "红烧肉"}})
    )
    again = ConversationMemory(path).load("key-a", "s1")  # another process, the next CLI run
    assert again is not None
    assert [m["content"] for m in again.turns] == ["红烧肉怎么做？", "答：红烧肉怎么做？"]
    assert again.states == {"recipes": {"dish": "红烧肉"}} and again.user_texts() == ["红烧肉怎么做？"]
    assert ConversationMemory(path).load("key-b", "s1") is None


def test_only_the_last_turns_are_kept_and_empty_states_are_not(tmp_path: Path) -> None:
    memory = ConversationMemory(tmp_path / "s.sqlite", max_turns=4)
    turns: tuple[dict[str, str], ...] = ()
    for i in range(5):
        turns += _turn(f"问题{i}")
        memory.save("", "s", Session(turns, {"qa": {}, "advisor": {"facts": {"price": 3e6}}}))
    held = memory.load("", "s")
    assert held is not None
    assert [m["content"] for m in held.turns] == ["问题3", "答：问题3", "问题4", "答：问题4"]
    assert held.states == {"advisor": {"facts": {"price": 3e6}}}  # outlives the trimmed turns


def test_only_user_and_assistant_text_is_kept(tmp_path: Path) -> None:
    memory = ConversationMemory(tmp_path / "s.sqlite")
    sent = ({"role": "system", "content": "你是助手"}, *_turn("一"), {"role": "user", "content": None})
    memory.save("", "s", Session(sent))  # type: ignore[arg-type]
    held = memory.load("", "s")
    assert held is not None and [m["role"] for m in held.turns] == ["user", "assistant"]


def test_sessions_expire_and_the_oldest_go_first(tmp_path: Path) -> None:
    now = [1000.0]
    memory = ConversationMemory(tmp_path / "s.sqlite", ttl_s=60, max_sessions=2, clock=lambda: now[0])
    memory.save("", "old", Session(_turn("一")))
    now[0] += 10
    memory.save("", "mid", Session(_turn("二")))
    now[0] += 10
    memory.save("", "new", Session(_turn("三")))
    assert memory.load("", "old") is None and len(memory) == 2  # bounded: the least recent went
    now[0] += 61
    assert memory.load("", "new") is None and len(memory) == 0  # expired
    memory.save("", "x", Session(_turn("四")))
    memory.drop("", "x")
    assert memory.load("", "x") is None


def _old_file(path: Path) -> None:
    """A sessions file as the advisor and the interfaces wrote it before one store (layout 0)."""
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE sessions (caller TEXT NOT NULL, id TEXT NOT NULL, used REAL NOT NULL, "
        "messages TEXT NOT NULL DEFAULT '[]', state TEXT NOT NULL DEFAULT '{}', PRIMARY KEY (caller, id))"
    )
    facts = {"price": 2.5e6, "down_payment_ratio": 0.35, "loan_years": 25, "rate": 3.0}
    advisor = [
        {"role": "user", "content": "总价250万，首付35%，贷款25年，利率3%"},
        {"role": "assistant", "content": "…"},
    ]
    rows = [
        # the advisor's own row of session s1 (its facts as the whole state) …
        ("key-a", "advisor/s1", 100.0, advisor, {"facts": facts, "roles": ["financial_advisor"]}),
        # … beside the turns the interfaces kept for the same session
        ("key-a", "s1", 90.0, advisor, {}),
        # an advisor session no interface kept turns for, and another app's state
        ("", "advisor/cli-1", 50.0, advisor, {"facts": facts}),
        ("", "walk", 60.0, [{"role": "user", "content": "浦东两房"}], {"listings": {"asked": ["浦东两房"]}}),
    ]
    for caller, key, used, messages, state in rows:
        db.execute(
            "INSERT INTO sessions VALUES (?, ?, ?, ?, ?)",
            (
                caller,
                key,
                used,
                json.dumps(messages, ensure_ascii=False),
                json.dumps(state, ensure_ascii=False),
            ),
        )
    db.commit()
    db.close()


def test_an_earlier_files_advisor_rows_are_read_through_the_one_store(tmp_path: Path) -> None:
    path = tmp_path / "sessions.sqlite"
    _old_file(path)
    memory = ConversationMemory(path, clock=lambda: 200.0, ttl_s=1000)
    s1 = memory.load("key-a", "s1")
    assert s1 is not None and s1.user_texts() == ["总价250万，首付35%，贷款25年，利率3%"]
    assert s1.states["advisor"]["facts"]["loan_years"] == 25
    assert s1.states["advisor"]["roles"] == ["financial_advisor"]
    alone = memory.load("", "cli-1")
    assert alone is not None and alone.states["advisor"]["facts"]["price"] == 2.5e6 and alone.turns
    walk = memory.load("", "walk")
    assert walk is not None and walk.states == {"listings": {"asked": ["浦东两房"]}}  # untouched
    assert memory.load("key-a", "advisor/s1") is None and len(memory) == 3  # the old rows went
    again = ConversationMemory(path, clock=lambda: 200.0, ttl_s=1000)  # migrated once
    assert again.load("key-a", "s1") == s1

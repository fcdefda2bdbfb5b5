"""Durable conversations: kept across instances, bound to their caller, bounded and expiring."""

from __future__ import annotations

from pathlib import Path

from zhiwen.appkit.sessions import ConversationMemory


def _turn(q: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": q}, {"role": "assistant", "content": f"答：{q}"}]


def test_turns_survive_a_new_instance_and_stay_with_their_caller(tmp_path: Path) -> None:
    path = tmp_path / "sessions.sqlite"
    ConversationMemory(path).append("key-a", "s1", _turn("红烧肉怎么做？"), state={"dish": "红烧肉"})
    again = ConversationMemory(path)  # another process, the next CLI run
    assert [m["content"] for m in again.history("key-a", "s1")] == ["红烧肉怎么做？", "答：红烧肉怎么做？"]
    assert again.state("key-a", "s1") == {"dish": "红烧肉"}
    assert again.history("key-b", "s1") == [] and again.state("key-b", "s1") == {}


def test_only_the_last_turns_are_kept(tmp_path: Path) -> None:
    memory = ConversationMemory(tmp_path / "s.sqlite", max_turns=4)
    for i in range(5):
        memory.append("", "s", _turn(f"问题{i}"))
    assert [m["content"] for m in memory.history("", "s")] == ["问题3", "答：问题3", "问题4", "答：问题4"]


def test_sessions_expire_and_the_oldest_go_first(tmp_path: Path) -> None:
    now = [1000.0]
    memory = ConversationMemory(tmp_path / "s.sqlite", ttl_s=60, max_sessions=2, clock=lambda: now[0])
    memory.append("", "old", _turn("一"))
    now[0] += 10
    memory.append("", "mid", _turn("二"))
    now[0] += 10
    memory.append("", "new", _turn("三"))
    assert memory.history("", "old") == [] and len(memory) == 2  # bounded: the least recent went
    now[0] += 61
    assert memory.history("", "new") == [] and len(memory) == 0  # expired
    memory.append("", "x", _turn("四"))
    memory.drop("", "x")
    assert memory.history("", "x") == []

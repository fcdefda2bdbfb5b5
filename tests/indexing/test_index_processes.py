"""``zhiwen index`` as real processes: lexical-first, Ctrl-C, kill -9 and resume, concurrent writers.

Each test drives ``python slow_zhiwen.py index …`` (the CLI with a slowed ``hash`` embedder) and
watches the KB from this process, which is "another process" for the indexer.
"""

from __future__ import annotations

import json
import select
import signal
import subprocess
import time
from pathlib import Path

import pytest

from indexing.helpers import Spawn, wait_until, write_beir
from zhiwen.config import get_settings
from zhiwen.errors import KnowledgeBaseNotFound
from zhiwen.kb import list_kbs, open_kb

N = 300


def _counts(name: str) -> tuple[int, int]:
    """(chunks, chunks with a vector) of KB ``name`` as this process sees it; (0, 0) if absent."""
    try:
        kb = open_kb(name)
    except KnowledgeBaseNotFound:
        return 0, 0
    return kb.store.count(), kb.store.vector_count()


def _finish(proc: subprocess.Popen[str], timeout: float = 60) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def _index(
    spawn: Spawn, corpus: Path, *extra: str, delay: float | None = None, gate: Path | None = None
) -> subprocess.Popen[str]:
    return spawn(
        "index", "--kb", "c", "--format", "beir", str(corpus), "--json", *extra, delay=delay, gate=gate
    )


def test_searchable_during_fill_ctrl_c_then_kill_9_and_resume(spawn: Spawn, tmp_path: Path) -> None:
    corpus = write_beir(tmp_path / "corpus", N)
    proc = _index(spawn, corpus)
    wait_until(lambda: 0 < _counts("c")[1] < N, 60, "phase 2 to be under way")

    # BM25 from another process while the vectors fill; hybrid fuses what exists
    kb = open_kb("c")
    assert kb.search("知识库3号", mode="bm25", top_k=5)
    assert kb.search("知识库3号", mode="hybrid", top_k=5)
    assert 0 < kb.info()["dense_coverage"] < 1

    # Ctrl-C: out within 2 s, exit 130, the committed vectors kept and counted
    start = time.monotonic()
    proc.send_signal(signal.SIGINT)
    code, _, err = _finish(proc)
    stopped_after = time.monotonic() - start
    assert code == 130 and stopped_after < 2.0, (code, stopped_after, err)
    chunks, saved = _counts("c")
    assert chunks == N and 0 < saved < N
    assert f"已保存 {saved:,}/{N:,} 段落的向量" in err and "重新运行同一命令即可继续" in err

    # the re-run resumes them; kill -9 it once 60 % of the rest is done
    proc = _index(spawn, corpus)
    wait_until(lambda: _counts("c")[1] >= saved + 0.6 * (N - saved), 60, "60 % of the rest")
    proc.kill()
    _finish(proc)
    _, killed_at = _counts("c")

    # …and the next re-run redoes only what was not committed
    code, out, err = _finish(_index(spawn, corpus, delay=0))
    summary = json.loads(out)
    assert code == 0, err
    # the batch in flight may have reached the cache but not the store: it is resumed too
    assert killed_at <= summary["resumed"] <= killed_at + 8
    assert summary["embedded"] == N - summary["resumed"]
    assert summary["vectors_missing"] == 0 and summary["dense_coverage"] == 1.0
    assert summary["revision"] == 1 and not summary["changed"]  # an unchanged re-sync writes nothing


@pytest.mark.parametrize("victim", ["first", "second"])
def test_ctrl_c_on_either_concurrent_run_leaves_the_other_whole(
    spawn: Spawn, tmp_path: Path, victim: str
) -> None:
    first_corpus = write_beir(tmp_path / "a", N, prefix="a")
    second_corpus = write_beir(tmp_path / "b", 100, prefix="b", topic="导入锁")
    gate = tmp_path / "gate"
    gate.touch()  # the first run stops at its first batch, holding the fill
    first = _index(spawn, first_corpus, gate=gate)
    wait_until(lambda: _counts("c")[0] == N, 60, "the first run's text index")
    second = _index(spawn, second_corpus, "--no-prune", gate=gate)
    wait_until(lambda: _counts("c")[0] == N + 100, 60, "the second run's text index")
    assert _counts("c")[1] == 0  # both in phase 2: the first holds the fill, the second waits

    stopped, survivor = (first, second) if victim == "first" else (second, first)
    stopped.send_signal(signal.SIGINT if victim == "first" else signal.SIGTERM)  # both stop it
    code, _, err = _finish(stopped)
    assert code == 130, err
    gate.unlink()
    code, out, err = _finish(survivor)
    assert code == 0, err
    assert json.loads(out)["vectors_missing"] == 0

    kb = open_kb("c")
    info = kb.info()
    assert info["chunks"] == N + 100 and info["vectors"] == N + 100  # nothing lost, all filled
    assert info["revision"] == 2  # one bump per committed run
    assert kb.search("导入锁3号", mode="bm25", top_k=1)[0].chunk.doc_id.startswith("b")


def test_second_writer_waits_or_refuses_with_no_wait(spawn: Spawn, tmp_path: Path) -> None:
    from zhiwen.kb.writer import kb_lock

    corpus = write_beir(tmp_path / "corpus", 20)
    with kb_lock(get_settings(), "c").hold():  # this process is the writer now
        refused, waiting = _index(spawn, corpus, "--no-wait"), _index(spawn, corpus)
        code, _, err = _finish(refused)
        assert code == 2 and "正在被另一个导入任务写入" in err and "--no-wait" in err  # 3008 → exit 2

        assert waiting.stderr is not None
        ready, _, _ = select.select([waiting.stderr], [], [], 30)
        assert ready and "另一个导入任务正在写入知识库「c」，等待中" in waiting.stderr.readline()
        waiting.send_signal(signal.SIGINT)
        code, _, err = _finish(waiting)
        assert code == 130 and "已中断" in err
    assert list_kbs() == []  # neither run created anything

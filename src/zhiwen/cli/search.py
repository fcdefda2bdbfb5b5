"""``zhiwen search``: BM25 / dense / hybrid search of one knowledge base from the terminal.

It searches through the one retrieval pipeline (:class:`~zhiwen.retrieve.pipeline.RetrievalPipeline`
over the runtime settings, with the KB's tuning), like the API's search, and also shows how the
hits were found: the fusion, each stage's time and the branches' status.

Example::

    zhiwen search --kb recipes 怎么创建知识库
    zhiwen search --kb recipes --mode bm25 --filter category=soup --filter "difficulty<=2" 汤
    zhiwen search --kb recipes --parents --top-k 3 有哪些导入格式
    zhiwen search --kb recipes --json 知识库 | jq '.hits[0].chunk.title'
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape
from rich.table import Table

from zhiwen.cli.zh import setting
from zhiwen.clikit.console import (
    console,
    fmt_score,
    format_metadata,
    hit_to_dict,
    parent_to_dict,
    parse_filter_args,
    print_json,
    run_cli,
    snippet,
)
from zhiwen.clikit.view import fit
from zhiwen.documents import Document, SearchHit
from zhiwen.errors import InvalidParameter
from zhiwen.resilience.text import require_clean_text
from zhiwen.store.filters import Filter

if TYPE_CHECKING:
    from zhiwen.kb import KnowledgeBase
    from zhiwen.retrieve.hybrid import RetrievalResult
    from zhiwen.retrieve.pipeline import RetrievalPipeline


def search_command(
    query: str = typer.Argument(..., metavar="查询", help="查询内容"),
    kb: str = typer.Option(..., "--kb", "-k", help="知识库名称"),
    mode: str | None = typer.Option(
        None, "--mode", "-m", help=f"bm25 | dense | hybrid（默认 {setting('retrieval.default_mode')}）"
    ),
    filters: list[str] = typer.Option(
        [], "--filter", help="元数据过滤，可重复：key=value、key!=v、key>=3、key<=3、key=a|b"
    ),
    top_k: int = typer.Option(10, "--top-k", "-n", help="返回条数"),
    parents: bool = typer.Option(False, "--parents", help="按父文档聚合（一篇文档只出现一次）"),
    fusion: str | None = typer.Option(
        None, "--fusion", help=f"混合检索融合方式：rrf | weighted（默认 {setting('retrieval.fusion')}）"
    ),
    alpha: float | None = typer.Option(None, "--alpha", help="weighted 融合中向量分支的权重 0-1"),
    candidates: int | None = typer.Option(None, "--candidates", help="每个分支的候选数"),
    as_json: bool = typer.Option(False, "--json", help="输出 JSON"),
) -> None:
    """检索知识库并显示得分、标题、片段与元数据。"""
    from zhiwen.appkit.context import build_pipeline
    from zhiwen.config import get_settings
    from zhiwen.kb import open_kb

    # bytes that are not UTF-8 arrive as lone surrogates: refuse them (3002) before any work
    query = require_clean_text(query, "query")
    for value in filters:
        require_clean_text(value, "--filter")
    flt = parse_filter_args(filters)
    settings = get_settings()
    search = _Search(
        kb=_Recorded(open_kb(kb)),
        pipeline=build_pipeline(settings),  # the runtime settings, as the server's searches
        query=query,
        mode=mode or settings.retrieval.default_mode,
        filters=flt,
        top_k=top_k,
        as_json=as_json,
    )
    if parents:
        _show_parents(search)
    else:
        _show_chunks(search, fusion=fusion, alpha=alpha, candidates=candidates)


class _Recorded:
    """The KB as the pipeline searches it, keeping the last search's retrieval details.

    The pipeline returns hits; this command also shows how they were found (the fusion, each
    stage's time, the branches' status), which :meth:`~zhiwen.kb.KnowledgeBase.search_detailed`
    reports.
    """

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        self.name = kb.name
        self.path = kb.path  # where its tuning.json lives
        self.last: RetrievalResult | None = None

    def search(self, query: str, **params: Any) -> list[SearchHit]:
        self.last = self.kb.search_detailed(query, **params)
        return self.last.hits

    def get_parents(self, ids: Sequence[str]) -> list[Document]:
        return self.kb.get_parents(ids)


@dataclass(frozen=True, slots=True)
class _Search:
    """One ``zhiwen search``: the KB, the pipeline and what the command line asked."""

    kb: _Recorded
    pipeline: RetrievalPipeline
    query: str
    mode: str
    filters: Filter
    top_k: int
    as_json: bool


def _show_parents(search: _Search) -> None:
    if isinstance(search.top_k, bool) or search.top_k < 1:  # what the KB's own search_parents says
        raise InvalidParameter(
            f"top_k must be a positive integer, got {search.top_k!r}", message="top_k 必须是正整数"
        )
    start = time.perf_counter()
    parent_hits = search.pipeline.search_parents(
        search.kb, search.query, top_k=search.top_k, mode=search.mode, filters=search.filters or None
    ).parents
    seconds = time.perf_counter() - start
    if search.as_json:
        print_json(
            {
                "kb": search.kb.name,
                "query": search.query,
                "mode": search.mode,
                "filters": search.filters.to_dict(),
                "seconds": round(seconds, 4),
                "parents": [parent_to_dict(p, rank=i) for i, p in enumerate(parent_hits, 1)],
            }
        )
        return
    table = Table(
        title=f"「{escape(search.query)}」 {search.mode} · 父文档 · {seconds * 1000:.1f} ms", show_lines=False
    )
    for col, kw in (
        ("#", {"justify": "right"}),
        ("得分", {"justify": "right"}),
        ("命中段落", {"justify": "right"}),
    ):
        table.add_column(col, **kw)  # type: ignore[arg-type]
    table.add_column("标题", min_width=12)
    table.add_column("元数据", min_width=16)
    for i, p in enumerate(parent_hits, 1):
        table.add_row(
            str(i),
            fmt_score(p.score),
            str(len(p.matched_chunks)),
            escape(p.document.title or p.document.id),
            escape(_metadata(p.document.metadata)),
        )
    _print(table, len(parent_hits))


def _show_chunks(search: _Search, *, fusion: str | None, alpha: float | None, candidates: int | None) -> None:
    from zhiwen.answer.relevance import relevance_verdict
    from zhiwen.config import get_settings

    start = time.perf_counter()
    hits = search.pipeline.search(
        search.kb,
        search.query,
        top_k=search.top_k,
        filters=search.filters or None,
        mode=search.mode,
        fusion=fusion,
        alpha=alpha,
        candidates=candidates,
    ).hits
    seconds = time.perf_counter() - start
    detail = search.kb.last
    assert detail is not None  # the pipeline searched the KB once
    floor = get_settings().answer.search_relevance_floor
    verdict = relevance_verdict(search.query, hits, floor=floor)
    if search.as_json:
        print_json(
            {
                "kb": search.kb.name,
                "query": search.query,
                "mode": search.mode,
                "fusion": detail.fusion,
                "relevance": {
                    "relevant": verdict.relevant,
                    "score": round(verdict.score, 4),
                    "floor": floor,
                    "reason": verdict.reason,
                },
                "filters": search.filters.to_dict(),
                "seconds": round(seconds, 4),
                "timings_ms": {k: round(v * 1000, 3) for k, v in detail.timings.items()},
                "branches": detail.branch_status,
                "hits": [hit_to_dict(h, rank=i) for i, h in enumerate(hits, 1)],
            }
        )
        return
    _print(_chunk_table(search.query, search.mode, detail.fusion, seconds, hits), len(hits))
    if hits and not verdict.relevant:
        console.print(
            f"[yellow]知识库中没有与查询明显相关的内容（相关度 {verdict.score:.2f} < {floor}），"
            "以上结果仅供参考。[/]"
        )
    for branch, status in detail.branch_status.items():
        if status.startswith("failed"):
            console.print(f"[yellow]{branch} 分支失败，结果仅来自另一分支：{escape(status)}[/]")


def _chunk_table(query: str, mode: str, fusion: str | None, seconds: float, hits: list[SearchHit]) -> Table:
    title = f"「{escape(query)}」 {mode}" + (f" · {fusion}" if fusion else "")
    table = Table(title=f"{title} · {seconds * 1000:.1f} ms", show_lines=True)
    table.add_column("#", justify="right")
    table.add_column("得分", justify="right")
    table.add_column("BM25", justify="right")
    table.add_column("向量", justify="right")
    table.add_column("标题", min_width=12)
    table.add_column("片段", ratio=3, min_width=24)
    table.add_column("元数据", ratio=1, min_width=16)
    for i, h in enumerate(hits, 1):
        bm25 = fmt_score(h.bm25_score, 2) + (f" #{h.bm25_rank}" if h.bm25_rank else "")
        vec = fmt_score(h.vector_score) + (f" #{h.vector_rank}" if h.vector_rank else "")
        section = h.chunk.metadata.get("section")
        table.add_row(
            str(i),
            fmt_score(h.score),
            bm25,
            vec,
            escape(str(section or h.chunk.title or h.chunk.doc_id)),
            escape(snippet(h.chunk.text, 120)),
            escape(_metadata(h.chunk.metadata)),
        )
    return table


#: bookkeeping a reader has no use for (the file's hash and size, chunk counters)
_HIDDEN_METADATA = frozenset({"section", "chunk_index", "chunks", "bytes", "file_sha256"})


def _metadata(metadata: dict[str, Any]) -> str:
    """The metadata worth reading, file and page first."""
    shown = {k: v for k, v in metadata.items() if k not in _HIDDEN_METADATA}
    first: dict[str, Any] = {k: shown.pop(k) for k in ("source", "page", "page_end") if k in shown}
    return format_metadata({**first, **shown})


def _print(table: Table, n: int) -> None:
    if n:
        console.print(fit(table, console))
    else:
        console.print("[dim]没有找到匹配的结果。[/]")


def register(app: typer.Typer) -> None:
    app.command("search")(run_cli(search_command))

"""Render an :class:`~zhiwen.eval.beir.EvalReport` as a rich table or a markdown table.

Example::

    >>> console.print(rich_table(report))
    >>> print(markdown_table(report))
"""

from __future__ import annotations

from typing import Any

from rich.table import Table

from zhiwen.eval.beir import EvalReport


def _ms(x: float) -> str:
    return f"{x:.2f}" if x < 10 else f"{x:.1f}"


def rich_table(report: EvalReport) -> Table:
    k = report.k
    table = Table(
        title=f"{report.dataset}：{report.n_queries} 个查询（随机种子 {report.seed}），知识库 {report.kb}",
        caption=caption(report),
    )
    table.add_column("模式")
    for name in (f"nDCG@{k}", f"Recall@{k}", f"MRR@{k}"):
        table.add_column(name, justify="right")
    table.add_column("p50 ms", justify="right")
    table.add_column("p95 ms", justify="right")
    table.add_column("检索 p50 ms", justify="right")
    table.add_column("参数")
    best = (
        {m: max(r.metrics[m] for r in report.results) for m in report.results[0].metrics}
        if report.results
        else {}
    )
    for r in report.results:
        cells = [
            f"[bold]{v:.4f}[/]" if v == best[m] and len(report.results) > 1 else f"{v:.4f}"
            for m, v in r.metrics.items()
        ]
        table.add_row(
            r.label,
            *cells,
            _ms(r.latency.p50_ms),
            _ms(r.latency.p95_ms),
            _ms(r.search_latency.p50_ms),
            params_summary(r.params),
        )
    return table


def params_summary(params: dict[str, Any]) -> str:
    """One line: fusion α, BM25 k1/b, feedback; ``*`` marks values from the KB's tuning.json."""
    if not params:
        return ""
    src = params.get("sources", {})

    def mark(part: str) -> str:
        return "*" if src.get(part) == "tuning.json" else ""

    parts = []
    if params.get("fusion") == "rrf":
        parts.append(f"RRF {params['weights'][0]:g}/{params['weights'][1]:g}{mark('fusion')}")
    elif params.get("dense_alpha") is not None:
        parts.append(f"α {params['dense_alpha']:.2f}{mark('fusion')}")
    bm25 = params.get("bm25") or {}
    if bm25:
        parts.append(f"k1 {bm25['k1']:g} b {bm25['b']:g}{mark('bm25')}")
    fb = params.get("feedback") or {}
    if fb.get("enabled"):
        parts.append(
            f"反馈 {fb['docs']} 篇 {fb['terms']} 词 λ {fb['query_weight']:g} β {fb['vector_weight']:g}"
            + mark("feedback")
        )
    elif fb:
        parts.append("反馈 关")
    return " · ".join(parts)


def caption(report: EvalReport) -> str:
    parts = [f"向量模型 {report.embedder}", f"存储 {report.store}"]
    if report.half != "all":
        parts.append(f"只评测 {report.half} 半区的查询（按查询编号 sha1 对半分）")
    if report.tuning:
        t = report.tuning
        where = f"调优于 {t.get('dataset', '?')} 的 {t.get('dev_half', '?')} 半区"
        held = t.get("heldout_score")
        if held is not None:
            where += f"，留出的 {t.get('heldout_half', '?')} 半区 {t.get('metric', 'ndcg@10')} {held:.4f}"
        parts.append(f"* = 知识库调优参数（tuning.json，{where}）")
    if report.query_embedding:
        q = report.query_embedding
        parts.append(f"查询向量化 p50 {_ms(q.p50_ms)} ms / p95 {_ms(q.p95_ms)} ms")
    if report.build:
        b = report.build
        if b.reused:
            parts.append("索引已存在，直接复用")
        else:
            parts.append(
                f"建索引 {b.seconds:.1f} s（{b.documents} 篇，{b.chunks} 块，新向量化 {b.embedded}）"
            )
    return "；".join(parts)


def markdown_table(report: EvalReport) -> str:
    k = report.k
    lines = [
        f"| mode | nDCG@{k} | Recall@{k} | MRR@{k} | p50 ms | p95 ms | search p50 ms | parameters |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in report.results:
        m = list(r.metrics.values())
        lines.append(
            f"| {r.label} | {m[0]:.4f} | {m[1]:.4f} | {m[2]:.4f} | {_ms(r.latency.p50_ms)} | "
            f"{_ms(r.latency.p95_ms)} | {_ms(r.search_latency.p50_ms)} | {params_summary(r.params)} |"
        )
    return "\n".join(lines)

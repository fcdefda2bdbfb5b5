"""One ``zhiwen index`` run against a KB: lock, create, both phases, Ctrl-C, the summary.

Phase 1 runs under the KB's write lock with the KB's creation inside it, so a second run that
waited sees what the first one left (its KB, or nothing when the first was interrupted before
committing and removed the KB it had created). Phase 2 runs after the lock is released: another
writer may go ahead while this run embeds.

Example::

    run = IndexRun("manual", None, prune=True, wait=True, dense="foreground", progress=True)
    report = run.index(corpus.documents, corpus.chunks, corpus.kb_defaults)
    run.print_table(report)
"""

from __future__ import annotations

import contextlib
import logging
import time
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from zhiwen.clikit.console import EXIT_INTERRUPTED, console, err_console, exit_code_for, print_error
from zhiwen.clikit.view import fit
from zhiwen.errors import ZhiwenError
from zhiwen.kb.interrupt import exit_now

log = logging.getLogger(__name__)


class IndexRun:
    """One ``zhiwen index`` run against KB ``name``: lock, create, both phases, Ctrl-C, summary."""

    def __init__(
        self, name: str, embedder: str | None, *, prune: bool, wait: bool, dense: str, progress: bool
    ) -> None:
        self.name = name
        self.embedder = embedder
        self.prune = prune
        self.wait = wait
        self.dense = dense
        self.progress = progress
        self.existed = False
        self.kb: Any = None
        self.lexical_started = False
        self.lexical_done = False
        self.fill: Any = None
        self.started = time.perf_counter()

    def index(self, documents: list[Any], chunks: list[Any] | None, defaults: dict[str, Any]) -> Any:
        """Both phases; Ctrl-C → the "what was kept" line and exit 130."""
        from zhiwen.kb.progress import RichIndexProgress

        bars = RichIndexProgress() if self.progress else None
        try:
            with bars if bars is not None else contextlib.nullcontext():
                prog = bars if bars is not None else _Notes()
                report = self._lexical(documents, chunks, defaults, prog)
                if self.dense == "foreground":
                    self._dense(report, prog)
        except KeyboardInterrupt:
            err_console.print(f"[yellow]{self.kept()}[/]")
            try:
                exit_now(EXIT_INTERRUPTED)  # after Ctrl-C/SIGTERM: gone at once
            except SystemExit:
                raise typer.Exit(EXIT_INTERRUPTED) from None
        except ZhiwenError as exc:
            if self.lexical_done:
                print_error(exc)
                err_console.print(f"[yellow]{self.kept(interrupted=False)}[/]")
                raise typer.Exit(exit_code_for(exc)) from None
            raise
        return report

    def _lexical(
        self, documents: list[Any], chunks: list[Any] | None, defaults: dict[str, Any], prog: Any
    ) -> Any:
        """Phase 1 under the KB's write lock, creation included (a waiting run sees the outcome)."""
        from zhiwen.config import get_settings
        from zhiwen.kb import list_kbs, open_kb
        from zhiwen.kb.writer import kb_lock

        settings = get_settings()
        with kb_lock(settings, self.name).hold(wait=self.wait, on_wait=prog.note):
            self.existed = self.name in list_kbs(settings)
            self.lexical_started = True
            self.kb = open_kb(self.name, create=True, embedder=self.embedder, **defaults)
            try:
                report = self.kb.index_documents(
                    documents, chunks=chunks, prune=self.prune, progress=prog, dense="skip", wait=self.wait
                )
            except BaseException:
                if not self.existed:
                    self._remove_if_empty()
                raise
        self.lexical_done = True
        report.lexical_seconds = report.seconds = time.perf_counter() - self.started
        return report

    def _dense(self, report: Any, prog: Any) -> None:
        """Phase 2 in the foreground; another process filling this KB is waited for (or trusted)."""
        self.fill = self.kb.fill_vectors(progress=prog, wait=self.wait)
        if self.fill.busy:
            err_console.print(f"[yellow]另一个进程正在为知识库「{self.name}」补全向量，将由它完成。[/]")
        else:
            self.kb.build_vector_index()
        report.embedded = self.fill.embedded
        report.resumed = self.fill.resumed
        report.vectors_missing = self.fill.missing
        report.seconds = time.perf_counter() - self.started

    def _remove_if_empty(self) -> None:
        """Ctrl-C or an error before anything was committed: the KB this run created goes again."""
        from zhiwen.kb import delete_kb

        try:
            if self.kb is not None and self.kb.store.count() == 0:
                delete_kb(self.name)
                self.kb = None
        except (ZhiwenError, OSError):
            log.debug("cleanup of %s failed", self.name, exc_info=True)

    def kept(self, *, interrupted: bool = True) -> str:
        """What an interrupted (or failed) run leaves behind, in one line."""
        head = "已中断：" if interrupted else ""
        if self.kb is None:
            if self.existed:
                return f"{head}知识库「{self.name}」保持原样"
            return f"{head}尚未写入任何内容" + ("，本次新建的空知识库已删除" if self.lexical_started else "")
        try:
            total = self.kb.store.count()
            have = self.kb.store.vector_count()
        except (ZhiwenError, AttributeError):
            return f"{head}已写入的内容已保存；重新运行同一命令即可继续"
        if not self.lexical_done:
            if self.existed:
                return f"{head}知识库「{self.name}」保持原样"
            if total:  # a new KB is stored in slices: those are searchable already
                return f"{head}已保存 {total:,} 段落的文本索引（可用 BM25 检索），重新运行同一命令即可继续"
            return f"{head}尚未写入任何内容"
        return (
            f"{head}已保存 {have:,}/{total:,} 段落的向量（文本索引完整，可用 BM25 检索），"
            "重新运行同一命令即可继续"
        )

    def summary(self, report: Any, fmt: str) -> dict[str, Any]:
        coverage = self.kb.dense_coverage() if self.kb is not None else None
        return {
            "kb": self.name,
            "created": not self.existed,
            "format": fmt,
            "documents": report.documents,
            "chunks": report.chunks,
            "embedded": report.embedded,
            "resumed": report.resumed,
            "vectors_missing": report.vectors_missing,
            "dense_coverage": None if coverage is None else round(coverage, 4),
            "deleted_documents": report.deleted_documents,
            "changed": report.changed,
            "revision": report.revision,
            "searchable_after_seconds": round(report.lexical_seconds, 3),
            "seconds": round(report.seconds, 3),
            "warnings": report.warnings,
        }

    def print_table(self, report: Any, extra: dict[str, str] | None = None) -> None:
        title = f"知识库「{self.name}」{'已创建并导入' if not self.existed else '已更新'}"
        table = Table(title=title, show_header=True)
        cols = {**(extra or {})}
        cols.update(
            {
                "文档": str(report.documents),
                "段落": str(report.chunks),
                "新向量化": str(report.embedded),
                "已恢复": str(report.resumed),
                "删除文档": str(report.deleted_documents),
                "版本": str(report.revision),
                "可检索(秒)": f"{report.lexical_seconds:.2f}",
                "用时(秒)": f"{report.seconds:.2f}",
            }
        )
        for col in cols:
            table.add_column(col, justify="right")
        table.add_row(*cols.values())
        console.print(fit(table, console))  # one record per line when 80 columns cannot hold it
        if report.resumed and report.embedded:
            console.print(f"已恢复 {report.resumed:,} 段落的向量（已有或已缓存，无需重新计算）")
        if report.vectors_missing and self.dense == "skip":
            console.print(f"[dim]{report.vectors_missing:,} 段落尚无向量：服务启动时或下次运行时补全。[/]")
        if not report.changed:
            console.print("[dim]内容与已有索引一致，未写入。[/]")
        if report.warnings:
            console.print(
                f"[yellow]{len(report.warnings)} 条警告，例如：{escape(str(report.warnings[0]))}[/]"
            )


class _Notes:
    """Progress without bars: only the waiting messages, on stderr."""

    def start(self, phase: str, total: int, *, completed: int = 0, resumed: int = 0) -> None:
        return None

    def advance(self, phase: str, n: int) -> None:
        return None

    def finish(self, phase: str) -> None:
        return None

    def note(self, message: str) -> None:
        err_console.print(f"[yellow]{message}[/]")

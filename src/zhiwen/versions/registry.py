"""Every persistent format of zhiwen: its current version and the steps from older ones.

A step names the function that performs it by dotted path (``module:function``), resolved when
it runs, so this registry imports none of the formats' modules (they import it). A step
without a function only stamps the version: the layout did not change, the file predates
versions. ``on_open=False`` marks a step too big to run while a file is being opened (it
rewrites a whole store): the opener refuses and names ``zhiwen migrate``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from zhiwen.versions.errors import FormatTooNew, MigrationNeeded

Kind = Literal["sqlite", "json", "postgres", "qdrant"]


@dataclass(frozen=True, slots=True)
class Step:
    """One migration: from ``to - 1`` to ``to``."""

    to: int
    what: str  # what it changes, for `zhiwen migrate --dry-run`
    run: str | None = None  # "module:function"; None: the version stamp only
    on_open: bool = True  # small enough to run while the file is opened

    def function(self) -> Callable[[Any], Any] | None:
        if self.run is None:
            return None
        module, name = self.run.split(":")
        fn: Callable[[Any], Any] = getattr(importlib.import_module(module), name)
        return fn


@dataclass(frozen=True, slots=True)
class Format:
    name: str
    label: str  # Chinese, for messages
    kind: Kind
    current: int
    steps: tuple[Step, ...] = field(default=())

    def pending(self, found: int, where: object, *, on_open: bool) -> list[Step]:
        """The steps from ``found`` to :attr:`current`; refuses a newer file, and (``on_open``)
        an older one whose steps may not run while opening it."""
        if found > self.current:
            raise FormatTooNew(self.label, str(where), found, self.current)
        steps = [s for s in self.steps if found < s.to <= self.current]
        if on_open and not all(s.on_open for s in steps):
            raise MigrationNeeded(self.label, str(where), found, self.current)
        return steps


_STAMP = "写入格式版本号（此前的文件没有版本号，内容不变）"

FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format(
            "embedded-store",
            "嵌入式知识库存储",
            "sqlite",
            1,
            (Step(1, "补上向量批次列 vseq 并写入版本号", "zhiwen.store._embedded_db:add_vector_stamps"),),
        ),
        Format(
            "pg-schema",
            "PostgreSQL 知识库模式",
            "postgres",
            3,
            # run inside KBSchema.migrate, in the opening transaction, under an advisory lock
            (
                Step(2, "向量移入独立表、行号、倒排表（每 10 万块约 1 分钟）"),
                Step(3, "统计向量数与元数据字段表"),
            ),
        ),
        Format("qdrant-payload", "Qdrant 知识库数据", "qdrant", 1, (Step(1, _STAMP),)),
        Format("upload-jobs", "上传任务队列", "sqlite", 1, (Step(1, _STAMP),)),
        Format(
            "upload-ledger",
            "上传文档清单 documents.json",
            "json",
            1,
            (Step(1, "文档条目移入 documents 键并写入版本号", "zhiwen.uploads.ledger:nest_documents"),),
        ),
        Format(
            "sessions",
            "会话记录",
            "sqlite",
            1,
            (Step(1, "顾问会话并入同一会话行", "zhiwen.conversation.store:migrate"),),
        ),
        Format("question-log", "问题日志", "sqlite", 1, (Step(1, _STAMP),)),
        Format("question-log-pg", "问题日志（PostgreSQL）", "postgres", 1, (Step(1, _STAMP),)),
        Format("curation", "知识库整理数据", "sqlite", 1, (Step(1, _STAMP),)),
        Format("table-catalog", "表格目录", "sqlite", 1, (Step(1, _STAMP),)),
        Format("kb-config", "知识库配置 kb.json", "json", 1, (Step(1, _STAMP),)),
        Format("sync-state", "同步状态 sync.json", "json", 1, (Step(1, _STAMP),)),
        Format("home-settings", "运行时设置 dynamic_settings.json", "json", 1, (Step(1, _STAMP),)),
    )
}


def get_format(name: str) -> Format:
    return FORMATS[name]


def current(name: str) -> int:
    """The version this release writes for format ``name``."""
    return FORMATS[name].current

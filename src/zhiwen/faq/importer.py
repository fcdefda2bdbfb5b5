"""Import a FAQ file: all of it or nothing, every bad row named.

Columns 问题 and 答案, optionally 相似问题 (one per line in the cell), 分类, 编号 and 启用;
headers are matched by prefix (:mod:`zhiwen.faq.columns`). A 问题 cell with several lines (the
MaxKB template) gives the entry's question on its first line and similar questions on the others.

Refused with the rows named (:class:`~zhiwen.faq.errors.FAQImportError`, 422): an empty question
or answer, a question over ``faq.max_question_chars``, an answer over ``faq.max_answer_chars``,
more than ``faq.max_similar`` similar questions, a question that another row already asks (after
:func:`~zhiwen.faq.normalize.normalise_question`), an id given twice, wrong columns.
More than ``faq.max_rows`` rows: :class:`~zhiwen.faq.errors.FAQFileTooLarge` (413) as soon as
row ``max_rows + 1`` is read. Entries get stable ids (:func:`~zhiwen.faq.model.entry_id_for`), so
importing the same file again updates them; :func:`check_conflicts` holds a file against the
entries a KB already has.

Example::

    >>> got = read_faq(Path("faq.xlsx"))
    >>> got.entries[0].question, got.rows[0]
    ('外国人入境免签可以停留几天？', 2)
    >>> check_conflicts(got, kb_entries)   # FAQImportError: a question another entry already has
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zhiwen.config import FAQSettings, IngestSettings, get_settings
from zhiwen.faq.errors import MAX_LISTED, FAQFileTooLarge, FAQImportError, RowProblem
from zhiwen.faq.model import FAQEntry
from zhiwen.faq.normalize import normalise_question
from zhiwen.faq.readers import PROBLEM, format_of, records
from zhiwen.ingest.limits import IngestLimits, check_file_size, check_zip

#: an id or a category longer than this is a mistake (a pasted answer), not a name
MAX_NAME_CHARS = 128
_FALSE_WORDS = frozenset({"否", "不", "禁用", "停用", "关", "false", "no", "n", "0", "off", "disabled"})


@dataclass(frozen=True, slots=True)
class ImportedFAQ:
    """A file's entries in file order, with the row each came from (for later messages)."""

    entries: tuple[FAQEntry, ...]
    rows: tuple[int, ...]
    file: str = ""


def read_faq(
    source: Path | bytes,
    *,
    file: str = "",
    fmt: str | None = None,
    settings: FAQSettings | None = None,
    ingest: IngestSettings | None = None,
) -> ImportedFAQ:
    """Read a whole FAQ file (a path, or an upload's bytes named by ``file``) into entries."""
    name = file or (source.name if isinstance(source, Path) else "")
    fmt = fmt or format_of(name)
    cfg = settings or get_settings().faq
    data = _file_bytes(source, name, fmt, IngestLimits.from_settings(ingest or get_settings().ingest))
    build = _Builder(cfg, name)
    for row, raw in records(data, fmt, name):
        build.add(row, raw)
    return build.finish()


def _file_bytes(source: Path | bytes, name: str, fmt: str, limits: IngestLimits) -> bytes:
    """The file's bytes, refused first when too large or (XLSX) a zip bomb."""
    if isinstance(source, bytes):
        if fmt != "xlsx":
            if len(source) > limits.max_file_bytes:
                check_file_size(_spooled(source), name or "FAQ 文件", limits)
            return source
        path = _spooled(source)
        try:
            return _file_bytes(path, name, fmt, limits)
        finally:
            path.unlink(missing_ok=True)
    check_file_size(source, name, limits)
    if fmt == "xlsx":
        check_zip(source, name, limits, kind="xlsx")
    return source.read_bytes()


def _spooled(data: bytes) -> Path:
    with tempfile.NamedTemporaryFile(prefix="zhiwen-faq-", delete=False) as fh:
        fh.write(data)
    return Path(fh.name)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # a spreadsheet's 12 comes back as 12.0
    return str(value).strip()


def _lines(value: Any) -> list[str]:
    items = value if isinstance(value, list | tuple) else _text(value).splitlines()
    return [t for t in (_text(v) for v in items) if t]


def _enabled(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    return _text(value).lower() not in _FALSE_WORDS


@dataclass(frozen=True, slots=True)
class _Row:
    """One row's cells as text: the question cell's first line and the similar questions."""

    question: str
    similar: tuple[str, ...]
    answer: str
    category: str
    id: str
    enabled: bool

    @classmethod
    def of(cls, raw: dict[str, Any]) -> _Row:
        asked = _lines(raw.get("question"))
        return cls(
            question=asked[0] if asked else "",
            similar=(*asked[1:], *_lines(raw.get("similar"))),
            answer=_text(raw.get("answer")),
            category=_text(raw.get("category")),
            id=_text(raw.get("id")),
            enabled=_enabled(raw.get("enabled", True)),
        )

    @property
    def blank(self) -> bool:
        return not (self.question or self.similar or self.answer)

    def entry(self) -> FAQEntry:
        return FAQEntry.create(
            self.question,
            self.answer,
            similar=self.similar,
            category=self.category,
            enabled=self.enabled,
            id=self.id or None,
        )


def _too_long(text: str, cap: int) -> str:
    return f"过长：{len(text)} 字，上限 {cap} 字"


def _check_question(n: int, row: _Row, cfg: FAQSettings) -> list[RowProblem]:
    if not row.question:
        return [RowProblem(n, "问题", "问题为空")]
    if len(row.question) > cfg.max_question_chars:
        return [RowProblem(n, "问题", "问题" + _too_long(row.question, cfg.max_question_chars))]
    return []


def _check_similar(n: int, row: _Row, cfg: FAQSettings) -> list[RowProblem]:
    if len(row.similar) > cfg.max_similar:
        return [RowProblem(n, "相似问题", f"相似问题过多：{len(row.similar)} 个，上限 {cfg.max_similar} 个")]
    return [
        RowProblem(n, "相似问题", f"第 {i} 个相似问题" + _too_long(q, cfg.max_question_chars))
        for i, q in enumerate(row.similar, start=1)
        if len(q) > cfg.max_question_chars
    ]


def _check_rest(n: int, row: _Row, cfg: FAQSettings) -> list[RowProblem]:
    out: list[RowProblem] = []
    if not row.answer:
        out.append(RowProblem(n, "答案", "答案为空"))
    elif len(row.answer) > cfg.max_answer_chars:
        out.append(RowProblem(n, "答案", "答案" + _too_long(row.answer, cfg.max_answer_chars)))
    for label, value in (("分类", row.category), ("编号", row.id)):
        if len(value) > MAX_NAME_CHARS:
            out.append(RowProblem(n, label, label + _too_long(value, MAX_NAME_CHARS)))
    return out


class _Builder:
    """Collects a file's entries and every problem; ``finish`` raises them all or returns all."""

    def __init__(self, cfg: FAQSettings, file: str) -> None:
        self.cfg = cfg
        self.file = file
        self.entries: list[FAQEntry] = []
        self.rows: list[int] = []
        self.problems: list[RowProblem] = []
        self.asked: dict[str, int] = {}  # normalised question → the row that asks it
        self.ids: dict[str, int] = {}
        self.count = 0  # data rows read, good or bad

    def add(self, n: int, raw: dict[str, Any]) -> None:
        row = None if PROBLEM in raw else _Row.of(raw)
        if row is not None and row.blank:
            return
        self.count += 1
        if self.count > self.cfg.max_rows:  # refused here: the rest of the file is never parsed
            raise FAQFileTooLarge.rows(self.cfg.max_rows, file=self.file)
        if row is None:
            self.problems.append(raw[PROBLEM])
            return
        found = [
            *_check_question(n, row, self.cfg),
            *_check_similar(n, row, self.cfg),
            *_check_rest(n, row, self.cfg),
        ]
        found.extend(self._repeats(n, row))  # a bad row's questions still count as asked
        if found:
            self.problems.extend(found)
            return
        self.entries.append(row.entry())
        self.rows.append(n)

    def _repeats(self, n: int, row: _Row) -> list[RowProblem]:
        out: list[RowProblem] = []
        first = self.ids.setdefault(row.id, n) if row.id else n
        if first != n:
            out.append(RowProblem(n, "编号", f"编号「{row.id}」与第 {first} 行重复"))
        for question in dict.fromkeys(q for q in (row.question, *row.similar) if q):
            key = normalise_question(question)
            earlier = self.asked.setdefault(key, n) if key else n
            if earlier != n:
                out.append(RowProblem(n, "问题", f"问题「{_short(question)}」与第 {earlier} 行重复"))
        return out

    def finish(self) -> ImportedFAQ:
        if self.problems:
            raise FAQImportError.of(sorted(self.problems, key=lambda p: p.row), file=self.file)
        if not self.entries:
            raise FAQImportError.of(
                [RowProblem(0, "", "没有数据行：表头下至少要有一行问题和答案")], file=self.file
            )
        return ImportedFAQ(tuple(self.entries), tuple(self.rows), self.file)


def _short(text: str, cap: int = 30) -> str:
    return text if len(text) <= cap else text[:cap] + "…"


def check_conflicts(imported: ImportedFAQ, existing: Iterable[FAQEntry]) -> None:
    """Refuse a file one of whose questions another entry of the KB already asks.

    An entry with the same id is the same entry (a re-import updates it) and never conflicts.
    Raises :class:`FAQImportError` naming each row and the entry it collides with.
    """
    new_ids = {e.id for e in imported.entries}
    owner: dict[str, FAQEntry] = {}
    for entry in existing:
        if entry.id not in new_ids:
            for question in entry.questions:
                owner.setdefault(normalise_question(question), entry)
    problems: list[RowProblem] = []
    for entry, row in zip(imported.entries, imported.rows, strict=True):
        for question in entry.questions:
            other = owner.get(normalise_question(question))
            if other is not None and len(problems) < MAX_LISTED:
                problems.append(
                    RowProblem(
                        row,
                        "问题",
                        f"问题「{_short(question)}」已在知识库的条目「{_short(other.question)}」（{other.id}）中",
                    )
                )
    if problems:
        raise FAQImportError.of(problems, file=imported.file)

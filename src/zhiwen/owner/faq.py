"""An owner's FAQ actions: an entry from a form, entries from files, the threshold, an export,
and an entry from a logged question with its corrected answer.

Every entry written here goes through the FAQ importer's checks (:func:`zhiwen.faq.read_faq`:
empty or too long questions and answers, too many similar questions) and is held against the
KB's other entries (:func:`zhiwen.faq.check_conflicts`: a question another entry already asks),
then written by :func:`zhiwen.kb.faq.put_faq_entries` as one recorded, undoable change. Files are
all or nothing: every file is read and checked before the first entry is written.

Example::

    >>> entry = add_entry(kb, EntryFields(question="怎么退货？", answer="七天内可退。"), actor=fp)
    >>> import_files(kb, [("faq.xlsx", data)], actor=fp).added
    42
    >>> set_threshold(kb, 0.95)
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from zhiwen.errors import InvalidParameter, NotFound
from zhiwen.faq import FAQEntry, FAQImportError, ImportedFAQ, check_conflicts, normalise_question, read_faq
from zhiwen.kb.faq import THRESHOLD_KEY, FAQPut, faq_entries, faq_settings, put_faq_entries

if TYPE_CHECKING:
    from zhiwen.kb import KnowledgeBase
    from zhiwen.questionlog import LoggedQuestion

ExportFormat = Literal["csv", "jsonl"]
#: the columns of an exported file, as the importer reads them back
EXPORT_COLUMNS = ("编号", "问题", "答案", "相似问题", "分类", "启用")
MEDIA_TYPES = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson"}


@dataclass(frozen=True, slots=True)
class EntryFields:
    """What a form gives for one entry (None: keep the entry's own, when editing)."""

    question: str | None = None
    answer: str | None = None
    similar: Sequence[str] | None = None
    category: str | None = None
    enabled: bool | None = None


def entry_out(entry: FAQEntry) -> dict[str, Any]:
    return {
        "id": entry.id,
        "question": entry.question,
        "answer": entry.answer,
        "similar": list(entry.similar),
        "category": entry.category,
        "enabled": entry.enabled,
    }


def _matches(entry: FAQEntry, needle: str) -> bool:
    return any(needle in text.lower() for text in (*entry.questions, entry.answer, entry.category))


def list_entries(
    kb: KnowledgeBase, q: str | None = None, *, limit: int = 50, offset: int = 0
) -> tuple[list[FAQEntry], int]:
    """A page of the KB's entries (those whose questions, answer or category contain ``q``)."""
    entries = faq_entries(kb)
    needle = (q or "").strip().lower()
    if needle:
        entries = [e for e in entries if _matches(e, needle)]
    return entries[offset : offset + limit], len(entries)


def threshold(kb: KnowledgeBase) -> float:
    """The similarity above which the KB answers an entry word for word."""
    return faq_settings(kb).threshold


def set_threshold(kb: KnowledgeBase, value: float) -> float:
    """The KB's own threshold, kept in its ``kb.json`` (0–1)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= float(value) <= 1.0:
        raise InvalidParameter(f"bad threshold {value!r}", message=f"阈值应在 0 到 1 之间，收到：{value}")
    with kb.writing():
        kb.config = kb.config.model_copy(update={"extra": {**kb.config.extra, THRESHOLD_KEY: float(value)}})
        kb.save_config()
    return float(value)


# -- one entry --------------------------------------------------------------------------------
def _checked(entry: FAQEntry) -> FAQEntry:
    """``entry`` after the importer's checks (its id kept); 422 naming what is wrong."""
    line = {
        "id": entry.id,
        "question": entry.question,
        "answer": entry.answer,
        "similar": list(entry.similar),
        "category": entry.category,
        "enabled": entry.enabled,
    }
    data = json.dumps(line, ensure_ascii=False).encode("utf-8")
    try:
        return read_faq(data, fmt="jsonl").entries[0]
    except FAQImportError as exc:
        errors = (exc.data or {}).get("errors", [])
        reasons = "；".join(str(e.get("reason", "")) for e in errors) or exc.message
        raise InvalidParameter(
            exc.detail, message=f"FAQ 条目有误：{reasons}", data={"errors": errors}
        ) from exc


def _check_against(kb: KnowledgeBase, entry: FAQEntry, existing: Sequence[FAQEntry]) -> None:
    try:
        check_conflicts(ImportedFAQ((entry,), (0,)), existing)
    except FAQImportError as exc:
        errors = (exc.data or {}).get("errors", [])
        reasons = "；".join(str(e.get("reason", "")) for e in errors)
        raise InvalidParameter(exc.detail, message=reasons or exc.message, data={"errors": errors}) from exc


def find_entry(kb: KnowledgeBase, entry_id: str) -> FAQEntry:
    for entry in faq_entries(kb):
        if entry.id == entry_id:
            return entry
    raise NotFound(f"no FAQ entry {entry_id!r}", message=f"FAQ 条目不存在：{entry_id}", data={"id": entry_id})


def add_entry(kb: KnowledgeBase, fields: EntryFields, *, actor: str) -> FAQEntry:
    """A new entry from a form; refused (422) when its question is one an entry already has."""
    entry = _checked(
        FAQEntry.create(
            fields.question or "",
            fields.answer or "",
            similar=fields.similar or (),
            category=fields.category or "",
            enabled=True if fields.enabled is None else fields.enabled,
        )
    )
    existing = faq_entries(kb)
    if any(e.id == entry.id for e in existing):
        raise InvalidParameter(
            f"FAQ entry {entry.id!r} exists",
            message=f"问题「{entry.question}」已有 FAQ 条目（{entry.id}），请修改该条目",
            data={"id": entry.id},
        )
    _check_against(kb, entry, existing)
    put_faq_entries(kb, [entry], actor=actor)
    return find_entry(kb, entry.id)


def update_entry(kb: KnowledgeBase, entry_id: str, fields: EntryFields, *, actor: str) -> FAQEntry:
    """Change any of an entry's question, answer, similar questions, category and state."""
    old = find_entry(kb, entry_id)
    entry = _checked(
        FAQEntry.create(
            old.question if fields.question is None else fields.question,
            old.answer if fields.answer is None else fields.answer,
            similar=old.similar if fields.similar is None else fields.similar,
            category=old.category if fields.category is None else fields.category,
            enabled=old.enabled if fields.enabled is None else fields.enabled,
            id=old.id,
        )
    )
    _check_against(kb, entry, faq_entries(kb))
    put_faq_entries(kb, [entry], actor=actor)
    return find_entry(kb, entry_id)


def delete_entry(kb: KnowledgeBase, entry_id: str, *, actor: str) -> None:
    from zhiwen.kb.faq import chunk_id_of

    find_entry(kb, entry_id)
    kb.curation.delete(chunk_id_of(entry_id), actor=actor)


# -- files ------------------------------------------------------------------------------------
def import_files(kb: KnowledgeBase, files: Sequence[tuple[str, bytes | Path]], *, actor: str) -> FAQPut:
    """Every file read and checked (against the KB and the files before it), then all written:
    one bad row anywhere and nothing is imported (422 with ``data.errors``)."""
    if not files:
        raise InvalidParameter("no FAQ file", message="请上传 FAQ 文件（CSV、XLSX 或 JSONL）")
    known = faq_entries(kb)
    entries: list[FAQEntry] = []
    for name, source in files:
        imported = read_faq(source, file=name)
        check_conflicts(imported, [*known, *entries])
        entries.extend(imported.entries)
    return put_faq_entries(kb, entries, actor=actor)


def import_folder(kb: KnowledgeBase, folder: Path, names: Sequence[str], *, actor: str) -> FAQPut:
    """:func:`import_files` of the files ``names`` saved under ``folder`` (an upload's spool)."""
    return import_files(kb, [(name, folder / name) for name in names], actor=actor)


def export_entries(entries: Sequence[FAQEntry], fmt: ExportFormat) -> Iterator[str]:
    """The entries as a file the importer reads back: CSV (with a BOM, for Excel) or JSONL."""
    if fmt == "jsonl":
        for e in entries:
            yield json.dumps(entry_out(e), ensure_ascii=False) + "\n"
        return
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(EXPORT_COLUMNS)
    yield "\ufeff" + out.getvalue()
    for e in entries:
        out.seek(0)
        out.truncate()
        writer.writerow(
            [e.id, e.question, e.answer, "\n".join(e.similar), e.category, "是" if e.enabled else "否"]
        )
        yield out.getvalue()


# -- from the question log ----------------------------------------------------------------------
def entry_from_log(
    kb: KnowledgeBase, record: LoggedQuestion, answer: str, *, question: str | None = None, actor: str
) -> FAQEntry:
    """A logged question and its corrected answer as an FAQ entry of the KB.

    The question is the owner's wording (default: the one asked), with the asked and the
    standalone wordings as similar questions. When an entry already asks it, that entry gets
    the corrected answer instead of a second entry being made.
    """
    main = (question or record.question).strip()
    asked = [q for q in (record.question, record.standalone) if q]
    owner = _owner_of(faq_entries(kb), [main, *asked])
    if owner is not None:
        return update_entry(kb, owner.id, EntryFields(answer=answer, enabled=True), actor=actor)
    return add_entry(kb, EntryFields(question=main, answer=answer, similar=asked), actor=actor)


def _owner_of(entries: Sequence[FAQEntry], questions: Sequence[str]) -> FAQEntry | None:
    keys = {normalise_question(q) for q in questions if q}
    for entry in entries:
        if keys & {normalise_question(q) for q in entry.questions}:
            return entry
    return None

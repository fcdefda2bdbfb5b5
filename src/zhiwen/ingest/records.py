"""CSV and JSON / JSON Lines records with a field mapping: one record = one document = one chunk.

Options: ``id_field`` (default: row number), ``text_fields`` (joined with newlines; default
``["text"]``), ``title_field``, ``metadata_fields`` (a list, or ``"*"`` = every field except the
text fields; the default), ``metadata`` (constant fields added to every record). Numeric strings
become ``int``/``float`` in metadata (``"70.96"`` → 70.96, ``"280"`` → 280; ids and
zero-padded codes stay strings), empty strings become ``None``. ``path`` may be a file or a
directory of such files (sorted).

Example::

    >>> corpus = load_records(Path("products.csv"), "csv", id_field="sku",
    ...                       text_fields=["name", "description"], title_field="name")
    >>> corpus.chunks[0].metadata["price"]
    280
"""

from __future__ import annotations

import csv
import json
import logging
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zhiwen.documents import Chunk, Document
from zhiwen.errors import IngestError
from zhiwen.ingest._io import empty_corpus, iter_jsonl, read_utf8, require_path
from zhiwen.ingest.base import Corpus

log = logging.getLogger(__name__)

_INT = re.compile(r"^[+-]?(0|[1-9]\d*)$")
_FLOAT = re.compile(r"^[+-]?(0|[1-9]\d*)?\.\d+$|^[+-]?(0|[1-9]\d*)\.\d*$")
SUFFIXES = {"csv": (".csv", ".tsv"), "json": (".json", ".jsonl", ".ndjson")}


def coerce(value: Any) -> Any:
    """Numeric strings → numbers, blank → None, other strings stripped; non-strings unchanged."""
    if not isinstance(value, str):
        return value
    v = value.strip()
    if not v:
        return None
    if _INT.match(v):
        return int(v)
    if _FLOAT.match(v):
        return float(v)
    return v


def _as_list(value: str | Sequence[str] | None, default: list[str]) -> list[str]:
    if value is None:
        return default
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return list(value)


def _files(path: Path, fmt: str) -> list[Path]:
    if path.is_file():
        return [path]
    sfx = SUFFIXES[fmt]
    return sorted(
        (
            p
            for p in path.rglob("*")
            if p.is_file() and p.suffix.lower() in sfx and not p.name.startswith(".")
        ),
        key=lambda p: p.relative_to(path).as_posix(),
    )


def _iter_csv(f: Path, columns_needed: list[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    text = read_utf8(f)
    delimiter = "\t" if f.suffix.lower() == ".tsv" else ","
    reader = csv.DictReader(text.splitlines(), delimiter=delimiter)
    header = [h.strip() for h in (reader.fieldnames or [])]
    reader.fieldnames = header
    missing = [c for c in columns_needed if c not in header]
    if missing:
        raise IngestError(
            f"{f}:1: column(s) {', '.join(missing)} not in header; columns: {', '.join(header)}",
            message=f"导入失败：CSV 缺少映射的列「{'、'.join(missing)}」：{f}",
        )
    for row in reader:
        yield reader.line_num, {k: v for k, v in row.items() if k is not None}


def _iter_json(f: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    if f.suffix.lower() in (".jsonl", ".ndjson"):
        yield from iter_jsonl(f)
        return
    text = read_utf8(f)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":  # one object per line in a .json file
            yield from iter_jsonl(f)
            return
        raise IngestError(
            f"{f}:{exc.lineno}: malformed JSON: {exc.msg} (column {exc.colno})",
            message=f"导入失败：JSON 格式错误：{f} 第 {exc.lineno} 行",
        ) from exc
    if isinstance(data, dict):
        lists = [
            v for k, v in data.items() if k in ("data", "records", "items", "rows") and isinstance(v, list)
        ]
        data = lists[0] if lists else [data]
    if not isinstance(data, list):
        raise IngestError(f"{f}: expected a list of objects", message=f"导入失败：JSON 应为对象列表：{f}")
    for i, obj in enumerate(data, start=1):
        if not isinstance(obj, dict):
            raise IngestError(
                f"{f}: record {i} is a {type(obj).__name__}, expected an object",
                message=f"导入失败：JSON 第 {i} 条记录不是对象：{f}",
            )
        yield i, obj


@dataclass(frozen=True, slots=True)
class _Fields:
    """Which record fields make a document's id, text, title and metadata (``load_records``)."""

    id_field: str | None
    texts: list[str]
    title_field: str | None
    all_meta: bool
    meta_fields: list[str]
    metadata: dict[str, Any] | None
    joiner: str

    def doc_id(self, rec: dict[str, Any], f: Path, lineno: int, source: str) -> str:
        if not self.id_field:
            return f"{Path(source).with_suffix('').as_posix()}:{lineno}"
        raw_id = rec.get(self.id_field)
        if raw_id is None or str(raw_id).strip() == "":
            raise IngestError(
                f"{f}:{lineno}: empty or missing id field {self.id_field!r}",
                message=f"导入失败：缺少 ID 字段「{self.id_field}」：{f} 第 {lineno} 行",
            )
        return str(raw_id).strip()

    def meta(self, rec: dict[str, Any], doc_id: str, source: str) -> dict[str, Any]:
        meta: dict[str, Any] = dict(self.metadata or {})
        keys = [k for k in rec if k not in self.texts] if self.all_meta else self.meta_fields
        for k in keys:
            meta[k] = doc_id if k == self.id_field else coerce(rec.get(k))
        meta["source"] = source
        return meta


def load_records(
    path: Path,
    fmt: str = "csv",
    *,
    id_field: str | None = None,
    text_fields: str | Sequence[str] | None = None,
    title_field: str | None = None,
    metadata_fields: str | Sequence[str] | None = "*",
    metadata: dict[str, Any] | None = None,
    joiner: str = "\n",
    kb_defaults: dict[str, Any] | None = None,
) -> Corpus:
    """Load CSV (``fmt="csv"``) or JSON/JSONL (``fmt="json"``) records; see the module docstring."""
    path = require_path(Path(path))
    if fmt not in SUFFIXES:
        raise ValueError(f"fmt must be one of {sorted(SUFFIXES)}")
    texts = _as_list(text_fields, ["text"])
    if not texts:
        raise IngestError("text_fields is empty", message="导入失败：text_fields 不能为空")
    all_meta = metadata_fields == "*"
    meta_fields = [] if all_meta or metadata_fields is None else _as_list(metadata_fields, [])
    fields = _Fields(id_field, texts, title_field, all_meta, meta_fields, metadata, joiner)
    needed = [c for c in [id_field, title_field, *texts, *meta_fields] if c]
    root = path.parent if path.is_file() else path
    files = _files(path, fmt)

    docs: list[Document] = []
    chunks: list[Chunk] = []
    warnings: list[str] = []
    seen: set[str] = set()
    for f in files:
        _load_file(f, root, fmt, fields, needed, seen, docs, chunks, warnings)
    if warnings:
        log.warning("%d record(s) skipped, first: %s", len(warnings), warnings[0])
    if not docs:
        raise empty_corpus(path, f"no {fmt} records")
    return Corpus(documents=docs, chunks=chunks, kb_defaults=dict(kb_defaults or {}), warnings=warnings)


def _load_file(
    f: Path,
    root: Path,
    fmt: str,
    fields: _Fields,
    needed: list[str],
    seen: set[str],
    docs: list[Document],
    chunks: list[Chunk],
    warnings: list[str],
) -> None:
    """One file's records appended to ``docs``/``chunks`` (duplicates and empty ones skipped)."""
    source = f.relative_to(root).as_posix()
    rows = _iter_csv(f, needed) if fmt == "csv" else _iter_json(f)
    texts = fields.texts
    saw_text_field = False
    n_rows = 0
    for lineno, rec in rows:
        n_rows += 1
        if fmt == "json" and any(t in rec for t in texts):
            saw_text_field = True
        doc_id = fields.doc_id(rec, f, lineno, source)
        if doc_id in seen:
            warnings.append(f"{f}:{lineno}: duplicate id {doc_id!r} skipped")
            continue
        text = fields.joiner.join(str(rec[t]).strip() for t in texts if rec.get(t) not in (None, ""))
        title = str(rec.get(fields.title_field) or "").strip() if fields.title_field else ""
        if not text.strip() and not title:
            warnings.append(f"{f}:{lineno}: empty text skipped")
            continue
        seen.add(doc_id)
        meta = fields.meta(rec, doc_id, source)
        docs.append(Document(id=doc_id, text=text or title, title=title, metadata=meta))
        chunks.append(
            Chunk(id=doc_id, doc_id=doc_id, text=text or title, title=title, parent_id=doc_id, metadata=meta)
        )
    if fmt == "json" and n_rows and not saw_text_field:
        raise IngestError(
            f"{f}: no record has any of the text fields {', '.join(texts)}",
            message=f"导入失败：JSON 记录中没有文本字段「{'、'.join(texts)}」：{f}",
        )

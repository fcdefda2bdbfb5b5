"""FAQ files as numbered records: CSV/TSV (encoding detected), XLSX (first sheet), JSONL.

Each reader yields ``(row, {field: raw value})`` with the row as the file shows it: a table's
header is row 1 (blank rows before it are skipped but counted), a JSONL file's first line is
row 1. Reading stops wherever the consumer stops, so a file over the row cap is refused
without parsing the rest; the bytes themselves are bounded by ``ingest.max_file_bytes``.

Example::

    >>> list(records("问题,答案\\n哈,嗯\\n".encode(), "csv"))
    [(2, {'question': '哈', 'answer': '嗯'})]
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from zhiwen.faq.columns import field_of, map_header
from zhiwen.faq.errors import FAQImportError, RowProblem
from zhiwen.ingest.textfiles import decode_bytes

Record = tuple[int, dict[str, Any]]
#: the key of a record that could not be read at all: its value is the RowProblem
PROBLEM = "_problem"
Reader = Callable[[bytes, str], Iterator[Record]]

FORMATS = ("csv", "tsv", "xlsx", "jsonl")
_SUFFIXES = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".txt": "tsv",
    ".xlsx": "xlsx",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
}


def format_of(name: str) -> str:
    """The format a file name says (``faq.xlsx`` → ``xlsx``); a FAQImportError otherwise."""
    fmt = _SUFFIXES.get(Path(name).suffix.lower())
    if fmt is None:
        raise FAQImportError.of(
            [RowProblem(0, "", f"不支持的文件类型「{Path(name).suffix or name}」：请用 CSV、XLSX 或 JSONL")],
            file=name,
        )
    return fmt


def records(data: bytes, fmt: str, file: str = "") -> Iterator[Record]:
    """The records of ``data`` read as ``fmt`` (one of :data:`FORMATS`)."""
    if fmt not in _READERS:
        raise FAQImportError.of(
            [RowProblem(0, "", f"不支持的格式「{fmt}」：可选 {'、'.join(FORMATS)}")], file=file
        )
    return _READERS[fmt](data, file)


def _blank(cells: Sequence[object]) -> bool:
    return all(c is None or not str(c).strip() for c in cells)


def _table(rows: Iterable[tuple[int, Sequence[object]]], file: str) -> Iterator[Record]:
    """Records of a table: the first non-blank row is the header, blank rows are skipped."""
    header: dict[int, str] | None = None
    for n, cells in rows:
        if _blank(cells):
            continue
        if header is None:
            header, problems = map_header(cells, row=n)
            if problems:
                raise FAQImportError.of(problems, file=file)
            continue
        yield n, {field: cells[i] for i, field in header.items() if i < len(cells)}
    if header is None:
        raise FAQImportError.of([RowProblem(0, "", "文件为空：没有表头，也没有数据")], file=file)


def _delimited(delimiter: str) -> Reader:
    def read(data: bytes, file: str) -> Iterator[Record]:
        text = decode_bytes(data, file or "FAQ 文件")
        yield from _table(
            enumerate(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter), start=1), file
        )

    return read


def _xlsx(data: bytes, file: str) -> Iterator[Record]:
    import openpyxl
    from openpyxl.utils.exceptions import InvalidFileException

    try:
        book = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except (InvalidFileException, zipfile.BadZipFile, KeyError, OSError, ValueError) as exc:
        raise FAQImportError.of([RowProblem(0, "", "不是有效的 XLSX 文件（无法打开）")], file=file) from exc
    try:
        sheet = book.worksheets[0]
        yield from _table(enumerate(sheet.iter_rows(values_only=True), start=1), file)
    finally:
        book.close()


def _jsonl(data: bytes, file: str) -> Iterator[Record]:
    text = decode_bytes(data, file or "FAQ 文件")
    for n, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield n, _json_record(n, line)


def _json_record(n: int, line: str) -> dict[str, Any]:
    """The line's fields, or ``{PROBLEM: RowProblem}`` for a line that is not a JSON object (the
    importer lists it with the other bad rows)."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        return {PROBLEM: RowProblem(n, "", f"不是有效的 JSON（{exc.msg}，第 {exc.colno} 列）")}
    if not isinstance(obj, dict):
        return {PROBLEM: RowProblem(n, "", '每行应是一个 JSON 对象，如 {"问题": "…", "答案": "…"}')}
    out: dict[str, Any] = {}
    for key, value in obj.items():
        field = field_of(str(key))
        if field is not None and field not in out:
            out[field] = value
    return out


_READERS: dict[str, Reader] = {
    "csv": _delimited(","),
    "tsv": _delimited("\t"),
    "xlsx": _xlsx,
    "jsonl": _jsonl,
}

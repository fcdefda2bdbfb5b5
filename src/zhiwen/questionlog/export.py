"""The log of one KB as CSV or JSONL, streamed: the owner's own analysis of any size.

Each line is a record (:data:`~zhiwen.questionlog.model.RECORD_FIELDS`) plus ``up``/``down`` and
its ``feedback`` (a JSON list). CSV starts with a byte-order mark (Excel then reads the Chinese
right), ``sources`` and ``feedback`` are JSON in their cells, ``answerable`` is ``true`` /
``false`` / empty. :func:`read_csv_record` / :func:`read_jsonl_record` read a line back (the
round trip the tests hold).

Example::

    >>> chunks = export_lines(store.records("manual", Span()), store.feedback_of, "csv")
    >>> next(chunks).splitlines()[0][:28]
    '\\ufeffanswer_id,kb,app,question'
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import islice
from typing import Any, Literal

from zhiwen.questionlog.model import RECORD_FIELDS, Feedback, LoggedQuestion

ExportFormat = Literal["csv", "jsonl"]
EXPORT_COLUMNS = (*RECORD_FIELDS, "up", "down", "feedback")
MEDIA_TYPES: Mapping[str, str] = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson"}
_PAGE = 500

_INTS = frozenset({"llm_calls", "prompt_tokens", "completion_tokens"})
_FLOATS = frozenset({"latency_ms", "at"})
_OPTIONAL_FLOATS = frozenset({"faq_score"})
_OPTIONAL_TEXTS = frozenset({"standalone", "fallback", "faq_id", "session_id"})


def _line(record: LoggedQuestion, feedback: Sequence[Feedback]) -> dict[str, Any]:
    out = record.to_json()
    out["up"] = sum(1 for f in feedback if f.rating == "up")
    out["down"] = sum(1 for f in feedback if f.rating == "down")
    out["feedback"] = [f.to_json() for f in feedback]
    return out


def _csv_cell(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    return "" if value is None else value


def _csv_chunk(lines: Iterable[Mapping[str, Any]], header: bool) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    if header:
        buffer.write("\ufeff")
        writer.writerow(EXPORT_COLUMNS)
    for line in lines:
        writer.writerow([_csv_cell(line[c]) for c in EXPORT_COLUMNS])
    return buffer.getvalue()


def _jsonl_chunk(lines: Iterable[Mapping[str, Any]]) -> str:
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


def export_lines(
    records: Iterable[LoggedQuestion],
    feedback_of: Callable[[Sequence[str]], list[Feedback]],
    fmt: ExportFormat,
) -> Iterator[str]:
    """Chunks of text (a page of records each) of ``records`` in ``fmt``; the CSV header comes
    first even when there is no record."""
    it = iter(records)
    first = True
    while True:
        page = list(islice(it, _PAGE))
        if not page and not (first and fmt == "csv"):
            return
        ratings: dict[str, list[Feedback]] = {}
        for f in feedback_of([q.answer_id for q in page]) if page else ():
            ratings.setdefault(f.answer_id, []).append(f)
        lines = [_line(q, ratings.get(q.answer_id, [])) for q in page]
        yield _csv_chunk(lines, first) if fmt == "csv" else _jsonl_chunk(lines)
        first = False
        if not page:
            return


def read_jsonl_record(line: str) -> LoggedQuestion:
    """The record of one JSONL line."""
    return LoggedQuestion.from_json(json.loads(line))


def _typed(name: str, cell: str) -> Any:
    if name in _INTS:
        return int(cell)
    if name in _FLOATS:
        return float(cell)
    if name in _OPTIONAL_FLOATS:
        return float(cell) if cell else None
    if name in _OPTIONAL_TEXTS:
        return cell or None
    if name == "answerable":
        return {"true": True, "false": False}.get(cell)
    if name == "sources":
        return json.loads(cell) if cell else []
    return cell


def read_csv_record(row: Mapping[str, str]) -> LoggedQuestion:
    """The record of one CSV row (``csv.DictReader`` over the file, ``encoding='utf-8-sig'``)."""
    return LoggedQuestion.from_json({name: _typed(name, row[name]) for name in RECORD_FIELDS})

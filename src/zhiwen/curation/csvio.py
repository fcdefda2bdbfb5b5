"""Dictionary words and synonym groups to and from CSV, with row-numbered Chinese errors.

* **Dictionary**: one word per row (the first cell; a header 「词条」/「word」 is skipped), or
  jieba's user-dictionary lines ``词 频率 [词性]``.
* **Synonyms**: FastGPT's layout — a header ``标准词,同义词1,同义词2,…`` then one group per row —
  or plain lines, one group per line, terms separated by commas, tabs, spaces or 「、」.

Parsing is all or nothing: the first bad row raises :class:`~zhiwen.errors.InvalidParameter`
naming it (``data.row``), and nothing is returned. Files may be UTF-8 (with or without a BOM) or
GB18030 (what a Chinese Excel saves). Export writes the first layout of each.

Example::

    >>> parse_synonyms("标准词,同义词1,同义词2\\n土豆,马铃薯,洋芋\\n")
    (('土豆', '马铃薯', '洋芋'),)
    >>> parse_synonyms("土豆 马铃薯 洋芋\\n西红柿、番茄")
    (('土豆', '马铃薯', '洋芋'), ('西红柿', '番茄'))
    >>> export_synonyms([("土豆", "马铃薯")])
    '标准词,同义词1\\r\\n土豆,马铃薯\\r\\n'
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence

from zhiwen.curation.checks import MAX_GROUP_TERMS, MAX_GROUPS, MAX_WORD_CHARS, MAX_WORDS
from zhiwen.errors import InvalidParameter

_DICT_HEADERS = {"词条", "词", "词语", "word", "words"}
_SYN_HEADER = "标准词"
_JIEBA_LINE = re.compile(r"^(\S+)\s+\d+(\s+[A-Za-z]+)?$")
_PLAIN_SEP = re.compile(r"[,，、\t ]+")


def decode(data: bytes | str) -> str:
    """Text of an uploaded file: UTF-8 (BOM or not), else GB18030."""
    if isinstance(data, str):
        return data.lstrip("\ufeff")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        try:
            return data.decode("gb18030")
        except UnicodeDecodeError as exc:
            raise InvalidParameter(
                "undecodable CSV", message="无法识别文件编码，请保存为 UTF-8 的 CSV"
            ) from exc


def _row_error(row: int, why: str, message: str) -> InvalidParameter:
    return InvalidParameter(f"row {row}: {why}", message=f"第 {row} 行：{message}", data={"row": row})


def _rows(text: str) -> Iterable[tuple[int, list[str]]]:
    """(1-based line number, cells) of every non-blank CSV row."""
    reader = csv.reader(io.StringIO(text))
    try:
        for cells in reader:
            cells = [c.strip() for c in cells]
            if any(cells):
                yield reader.line_num, cells
    except csv.Error as exc:
        raise _row_error(reader.line_num, str(exc), "CSV 格式错误") from exc


def _term(row: int, value: str) -> str:
    term = " ".join(value.split())
    if len(term) > MAX_WORD_CHARS:
        raise _row_error(row, "term too long", f"「{term[:20]}…」过长（最多 {MAX_WORD_CHARS} 字）")
    return term


# -- dictionary ----------------------------------------------------------------------------------
def parse_dictionary(data: bytes | str) -> tuple[str, ...]:
    """The words of a dictionary file (see the module docstring), repeats dropped, order kept."""
    text = decode(data)
    words: dict[str, None] = {}
    for row, cells in _rows(text):
        first = cells[0]
        if row == 1 and first.lower() in _DICT_HEADERS:
            continue
        m = _JIEBA_LINE.match(first) if len(cells) == 1 else None
        word = _term(row, m.group(1) if m else first)
        if not word:
            raise _row_error(row, "empty word", "词条为空")
        words.setdefault(word, None)
        if len(words) > MAX_WORDS:
            raise _row_error(row, "too many words", f"词条过多（最多 {MAX_WORDS} 个）")
    return tuple(words)


def export_dictionary(words: Iterable[str]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["词条"])
    writer.writerows([w] for w in words)
    return out.getvalue()


# -- synonyms ------------------------------------------------------------------------------------
def parse_synonyms(data: bytes | str) -> tuple[tuple[str, ...], ...]:
    """The groups of a synonym file (see the module docstring); each group at least two distinct
    terms, each term in one group only."""
    text = decode(data)
    lines = [line for line in text.splitlines() if line.strip()]
    fastgpt = bool(lines) and lines[0].replace("，", ",").split(",")[0].strip() == _SYN_HEADER
    rows = _rows(text) if fastgpt else ((i, _PLAIN_SEP.split(line.strip())) for i, line in _numbered(text))
    groups: list[tuple[str, ...]] = []
    owner: dict[str, int] = {}
    for row, cells in rows:
        if fastgpt and cells[0] == _SYN_HEADER:
            continue
        group = _group(row, cells, owner)
        groups.append(group)
        if len(groups) > MAX_GROUPS:
            raise _row_error(row, "too many groups", f"同义词组过多（最多 {MAX_GROUPS} 组）")
    return tuple(groups)


def _numbered(text: str) -> Iterable[tuple[int, str]]:
    for i, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield i, line


def _group(row: int, cells: Sequence[str], owner: dict[str, int]) -> tuple[str, ...]:
    """One row's group, checked against the terms of the rows before it (``owner``)."""
    terms: dict[str, None] = {}
    for cell in cells:
        term = _term(row, cell)
        if term:
            terms.setdefault(term, None)
    if len(terms) < 2:
        raise _row_error(row, "fewer than two terms", "一组同义词至少要有两个不同的词")
    if len(terms) > MAX_GROUP_TERMS:
        raise _row_error(row, "too many terms", f"一组同义词最多 {MAX_GROUP_TERMS} 个词")
    for term in terms:
        key = term.lower()
        if key in owner:
            raise _row_error(
                row,
                f"{term!r} already in row {owner[key]}",
                f"「{term}」已出现在第 {owner[key]} 行（一个词只能属于一组）",
            )
    for term in terms:
        owner[term.lower()] = row
    return tuple(terms)


def export_synonyms(groups: Iterable[Sequence[str]]) -> str:
    """FastGPT's layout: ``标准词,同义词1,…`` (as many columns as the largest group needs)."""
    groups = [list(g) for g in groups]
    width = max((len(g) for g in groups), default=2)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([_SYN_HEADER, *(f"同义词{i}" for i in range(1, width))])
    writer.writerows(groups)
    return out.getvalue()

"""Which column of a FAQ file is which: headers matched by prefix against known names.

A header is read by its beginning, so a template's notes after the name do not matter
(「问题（选填，单元格内一行一个）」 is 问题, 「答案（必填）」 is 答案); English keys work too
(JSONL: ``question``, ``answer``, ``similar``, ``category``, ``id``, ``enabled``).

Example::

    >>> map_header(["问题（选填，单元格内一行一个）", "分段内容", "备注"])
    ({0: 'question', 1: 'answer'}, [])
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from zhiwen.faq.errors import RowProblem

#: the fields of an entry and the header names that mean them (longest names are tried first)
ALIASES: dict[str, tuple[str, ...]] = {
    "question": ("问题", "标准问题", "问", "question", "q"),
    "answer": ("答案", "回答", "答复", "分段内容", "内容", "answer", "a"),
    "similar": ("相似问题", "相似问法", "相似问", "同义问题", "similar_questions", "similar"),
    "category": ("分类", "类别", "分段标题", "category"),
    "id": ("编号", "id"),
    "enabled": ("启用", "状态", "enabled"),
}
REQUIRED = ("question", "answer")
#: the names shown to users: what an expected column is called
LABELS = {
    "question": "问题",
    "answer": "答案",
    "similar": "相似问题",
    "category": "分类",
    "id": "编号",
    "enabled": "启用",
}

_BY_LENGTH = sorted(((a, f) for f, names in ALIASES.items() for a in names), key=lambda p: -len(p[0]))


def field_of(header: str) -> str | None:
    """The entry field a header names, or None. English keys must match whole."""
    name = unicodedata.normalize("NFKC", header).strip().lstrip("\ufeff").lower()
    for alias, field in _BY_LENGTH:
        if name == alias or (not alias.isascii() and name.startswith(alias)):
            return field
    return None


def map_header(cells: Sequence[object], *, row: int = 1) -> tuple[dict[int, str], list[RowProblem]]:
    """Column index → field for a header row, and what is wrong with it: 问题 or 答案 missing
    (naming the columns found and the ones expected), a field in two columns."""
    found: dict[int, str] = {}
    seen: dict[str, int] = {}
    problems: list[RowProblem] = []
    for i, cell in enumerate(cells):
        field = field_of(str(cell)) if cell is not None else None
        if field is None:
            continue
        if field in seen:
            problems.append(RowProblem(row, str(cell), f"与第 {seen[field] + 1} 列都表示「{LABELS[field]}」"))
            continue
        seen[field] = i
        found[i] = field
    missing = [LABELS[f] for f in REQUIRED if f not in seen]
    if missing:
        problems.append(RowProblem(row, "", _missing_message(cells, missing)))
    return found, problems


def _missing_message(cells: Sequence[object], missing: list[str]) -> str:
    headers = [str(c).strip() for c in cells if c is not None and str(c).strip()]
    shown = "、".join(f"「{h}」" for h in headers[:20]) or "（无）"
    return (
        f"缺少列 {'、'.join(missing)}。找到的列：{shown}；应有的列：问题、答案（必填），"
        "相似问题（选填，单元格内一行一个）、分类（选填）"
    )

"""Tables for people: markdown for documents, 80 terminal columns for the CLI, a payload for the web.

The terminal rendering counts a wide (CJK) character as two columns (``rich`` measures cells);
columns that do not fit are wrapped inside their cell, never cut off, and a table wider than
the width keeps its key column and as many others as fit, saying how many were left out.

Example::

    >>> print(render_text(["专业", "最低分"], [["法学", "612"]], width=80))
    ┏━━━━━━┳━━━━━━━━┓
    ┃ 专业 ┃ 最低分 ┃
    ...
    >>> payload(["专业", "最低分"], [["法学", "612"]], title="2023年四川省录取分数线")["rows"]
    [['法学', '612']]
    >>> print(payload_text(answer.data["table"]))      # a table answer, at 80 columns
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

#: the columns a terminal table may use by default
TEXT_WIDTH = 80
#: the narrowest a column may get before columns are left out
_MIN_COLUMN = 6


def _md_cell(value: Any) -> str:
    return str(value if value is not None else "").replace("|", "\\|").replace("\n", " ").strip()


def markdown_rows(rows: Sequence[Sequence[Any]]) -> str:
    """Rows (the first is the header) as a markdown table; ragged rows are padded."""
    rows = [r for r in rows if any(_md_cell(c) for c in r)]
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    cells = [[_md_cell(c) for c in r] + [""] * (width - len(r)) for r in rows]
    lines = ["| " + " | ".join(cells[0]) + " |", "|" + " --- |" * width]
    lines += ["| " + " | ".join(r) + " |" for r in cells[1:]]
    return "\n".join(lines)


def display_width(text: str) -> int:
    """Terminal columns ``text`` takes (a CJK character takes two)."""
    from rich.cells import cell_len

    return cell_len(text)


def render_text(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    width: int = TEXT_WIDTH,
    title: str = "",
    key: int = 0,
    max_rows: int = 50,
) -> str:
    """The table drawn in at most ``width`` terminal columns (see the module docstring)."""
    from rich.console import Console
    from rich.table import Table as RichTable

    keep = _columns_that_fit(columns, width, key)
    table = RichTable(title=title or None, show_lines=False, expand=False)
    for i in keep:
        table.add_column(
            str(columns[i]), overflow="fold", min_width=min(_MIN_COLUMN, display_width(columns[i]))
        )
    for row in rows[:max_rows]:
        table.add_row(*[_md_cell(row[i]) if i < len(row) else "" for i in keep])
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, color_system=None, legacy_windows=False, emoji=False)
    console.print(table)
    text = buffer.getvalue().rstrip("\n")
    notes = []
    if len(rows) > max_rows:
        notes.append(f"（共 {len(rows)} 行，显示前 {max_rows} 行）")
    if len(keep) < len(columns):
        notes.append(f"（共 {len(columns)} 列，显示 {len(keep)} 列）")
    return "\n".join([text, *notes])


def _columns_that_fit(columns: Sequence[str], width: int, key: int) -> list[int]:
    """The key column and then the others, as long as each may keep ``_MIN_COLUMN`` cells."""
    order = [key] + [i for i in range(len(columns)) if i != key] if columns else []
    keep: list[int] = []
    used = 1  # the left border
    for i in order:
        need = _MIN_COLUMN + 3  # padding and a border
        if keep and used + need > width:
            break
        keep.append(i)
        used += need
    return sorted(keep)


def payload(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    title: str = "",
    types: Sequence[str] = (),
    source: str = "",
    highlight: Sequence[tuple[int, int]] = (),
    max_rows: int = 200,
) -> dict[str, Any]:
    """What the web UI draws as a table: columns, rows (at most ``max_rows``), the cells to mark.

    ``highlight``: (row index in ``rows``, column index) of the cells the answer is about.
    """
    shown = [[_json_cell(c) for c in r] for r in rows[:max_rows]]
    return {
        "title": title,
        "source": source,
        "columns": list(columns),
        "types": list(types),
        "rows": shown,
        "total_rows": len(rows),
        "highlight": [list(h) for h in highlight if h[0] < len(shown)],
    }


def _json_cell(value: Any) -> Any:
    if value is None or isinstance(value, (int, float, str)):
        return value
    return str(value)


def payload_text(data: dict[str, Any], *, width: int = TEXT_WIDTH) -> str:
    """A :func:`payload` (``Answer.data["table"]``) drawn for a terminal: what the CLI shows
    under a table answer."""
    return render_text(
        data.get("columns") or [], data.get("rows") or [], width=width, title=data.get("title", "")
    )

"""A table answer's table in the terminal: the cell's row or the SQL result as a rich table.

:func:`answer_table_view` reads ``Answer.data["table"]`` (:class:`~zhiwen.tables.schema.TableData`)
and draws it under the answer's text, the answered cells in bold, folded to the terminal's width
(:func:`~zhiwen.clikit.view.fit`); None for any other answer.

Example::

    >>> view = answer_table_view(answer, console)
    >>> if view is not None:
    ...     console.print(view)
"""

from __future__ import annotations

from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

from zhiwen.answer.model import Answer
from zhiwen.clikit.view import fit
from zhiwen.tables.schema import Cell, TableData, answer_table

#: rows drawn in the terminal (the payload holds up to 200)
MAX_ROWS = 20


def _cell(value: Cell) -> str:
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.2f}".rstrip("0").rstrip(".")
    return "" if value is None else str(value)


def table_view(data: TableData) -> Table:
    """``data`` as a rich table: its title, columns, rows (the first :data:`MAX_ROWS`), the
    answered cells in bold, and a caption saying how many rows were left out."""
    marked = {(r, c) for r, c in (tuple(h[:2]) for h in data.highlight if len(h) >= 2)}
    table = Table(title=data.title or None, show_lines=False)
    for column in data.columns:
        table.add_column(column, overflow="fold")
    for r, row in enumerate(data.rows[:MAX_ROWS]):
        cells = [Text(_cell(v), style="bold" if (r, c) in marked else "") for c, v in enumerate(row)]
        table.add_row(*cells)
    total = max(data.total_rows, len(data.rows))
    if total > MAX_ROWS:
        table.caption = f"共 {total} 行，显示前 {MAX_ROWS} 行"
    return table


def answer_table_view(answer: Answer, console: Console) -> RenderableType | None:
    """The table of a table answer, fitted to ``console`` (None: not a table answer)."""
    data = answer_table(answer.data)
    if data is None or not data.columns:
        return None
    return fit(table_view(data), console)

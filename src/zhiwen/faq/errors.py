"""What a bad FAQ file is told: one error for the whole file, every bad row named in Chinese.

Nothing of a file is imported when one row is bad, so the error lists every row to fix (up to
:data:`MAX_LISTED`), not only the first. ``data`` carries them for clients::

    {"file": "faq.xlsx", "errors": [{"row": 3, "column": "答案", "reason": "答案为空"}, …]}

Example::

    >>> err = FAQImportError.of([RowProblem(3, "答案", "答案为空")], file="faq.csv")
    >>> err.message
    'FAQ 文件「faq.csv」有 1 处错误，未导入任何条目：第 3 行（答案）：答案为空'
    >>> err.http_status, err.code
    (422, 3007)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from zhiwen.errors import IngestError, PayloadTooLarge

#: rows listed in an error (a file wrong throughout says so in its first rows)
MAX_LISTED = 50
#: rows named in the message itself; ``data["errors"]`` has the rest
IN_MESSAGE = 5


@dataclass(frozen=True, slots=True)
class RowProblem:
    """One bad row: ``row`` as the file shows it (a spreadsheet's header is row 1, a JSONL file's
    first line is row 1; 0: the file as a whole)."""

    row: int
    column: str
    reason: str

    def describe(self) -> str:
        where = f"第 {self.row} 行" if self.row else "文件"
        return f"{where}（{self.column}）：{self.reason}" if self.column else f"{where}：{self.reason}"


class FAQImportError(IngestError):
    """A FAQ file that cannot be imported as it is (422 / 3007); nothing of it was imported."""

    user_message = "FAQ 文件有误，未导入任何条目"

    @classmethod
    def of(cls, problems: Sequence[RowProblem], *, file: str = "") -> FAQImportError:
        listed = list(problems[:MAX_LISTED])
        named = "；".join(p.describe() for p in listed[:IN_MESSAGE])
        more = f"；另有 {len(problems) - IN_MESSAGE} 处" if len(problems) > IN_MESSAGE else ""
        name = f"「{file}」" if file else ""
        message = f"FAQ 文件{name}有 {len(problems)} 处错误，未导入任何条目：{named}{more}"
        data = {"file": file, "count": len(problems), "errors": [asdict(p) for p in listed]}
        return cls(f"{len(problems)} bad rows in FAQ file {file!r}", message=message, data=data)


class FAQFileTooLarge(PayloadTooLarge):
    """More rows than one import takes (413 / 3005); refused while reading, nothing imported."""

    user_message = "FAQ 文件过大"

    @classmethod
    def rows(cls, max_rows: int, *, file: str = "") -> FAQFileTooLarge:
        name = f"「{file}」" if file else ""
        message = (
            f"FAQ 文件{name}超过 {max_rows} 条，未导入任何条目：请拆成每个不超过 {max_rows} 条的文件分别导入"
        )
        return cls(
            f"FAQ file {file!r} has more than {max_rows} rows",
            message=message,
            data={"file": file, "max_rows": max_rows},
        )

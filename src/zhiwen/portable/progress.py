"""Progress of an export, import or backup: a rich bar per step on the console, or nothing.

Example::

    with RichSteps() as steps:
        export_kb(kb, Path("manual.zwkb"), steps=steps)
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from rich.progress import TaskID


class Steps(Protocol):
    def start(self, label: str, total: int | None) -> None:
        """A step begins (``total`` units, None: unknown); the previous one is done."""
        ...

    def advance(self, n: int) -> None: ...


class NullSteps:
    def start(self, label: str, total: int | None) -> None:
        return None

    def advance(self, n: int) -> None:
        return None


class RichSteps:
    """One rich bar per step on stderr; a context manager."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._task: TaskID | None = None

    def __enter__(self) -> RichSteps:
        self._progress.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._progress.stop()

    def start(self, label: str, total: int | None) -> None:
        if self._task is not None:
            task = self._progress.tasks[-1]
            self._progress.update(self._task, completed=task.total or task.completed)
        self._task = self._progress.add_task(label, total=total)

    def advance(self, n: int) -> None:
        if self._task is not None:
            self._progress.advance(self._task, n)

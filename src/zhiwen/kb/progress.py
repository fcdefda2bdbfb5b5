"""Progress of an index run's two phases, for a terminal (rich) or for nobody.

Phase ``lexical`` (① 文本索引) counts passages tokenised and stored: the KB is BM25-searchable
when it ends. Phase ``dense`` (② 向量化) counts passages that have a vector; it starts at the
number already present in the store or the embedding cache ("已恢复 N" — what a re-run after
Ctrl-C or ``kill -9`` does not redo).

Example::

    with RichIndexProgress() as progress:
        kb.index_documents(docs, progress=progress)
    kb.index_documents(docs, progress=False)           # silent
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from rich.progress import TaskID

Phase = Literal["lexical", "dense"]

_LABELS = {"lexical": "① 文本索引", "dense": "② 向量化"}


class IndexProgress(Protocol):
    def start(self, phase: Phase, total: int, *, completed: int = 0, resumed: int = 0) -> None:
        """A phase begins with ``total`` passages, ``completed`` of them already done."""
        ...

    def advance(self, phase: Phase, n: int) -> None: ...

    def finish(self, phase: Phase) -> None: ...

    def note(self, message: str) -> None:
        """A line for the user (e.g. waiting for another run's lock)."""
        ...


class NullProgress:
    """Shows nothing."""

    def start(self, phase: Phase, total: int, *, completed: int = 0, resumed: int = 0) -> None:
        return None

    def advance(self, phase: Phase, n: int) -> None:
        return None

    def finish(self, phase: Phase) -> None:
        return None

    def note(self, message: str) -> None:
        return None


class RichIndexProgress:
    """Two rich progress bars on stderr, one per phase; use it as a context manager."""

    def __init__(self, *, transient: bool = True) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._console = Console(stderr=True)
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=self._console,
            transient=transient,
        )
        self._tasks: dict[Phase, TaskID] = {}
        self._totals: dict[Phase, int] = {}

    def __enter__(self) -> RichIndexProgress:
        self._progress.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._progress.stop()

    def start(self, phase: Phase, total: int, *, completed: int = 0, resumed: int = 0) -> None:
        label = _LABELS[phase] + (f"（已恢复 {resumed:,}）" if resumed else "")
        self._totals[phase] = total
        task = self._tasks.get(phase)
        if task is None:
            self._tasks[phase] = self._progress.add_task(label, total=total, completed=completed)
        else:
            self._progress.reset(task, total=total, completed=completed, description=label)

    def advance(self, phase: Phase, n: int) -> None:
        task = self._tasks.get(phase)
        if task is not None:
            self._progress.advance(task, n)

    def finish(self, phase: Phase) -> None:
        task = self._tasks.get(phase)
        if task is not None:
            self._progress.update(task, completed=self._totals[phase])

    def note(self, message: str) -> None:
        self._console.print(f"[yellow]{message}[/]")

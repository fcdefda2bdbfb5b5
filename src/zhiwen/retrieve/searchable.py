"""What retrieval needs of a knowledge base: the :class:`Searchable` protocol.

:class:`~zhiwen.retrieve.pipeline.RetrievalPipeline` searches "a KB", but retrieval sits below the
KB layer (:mod:`zhiwen.kb` builds on it), so it names what it uses instead of importing
:class:`~zhiwen.kb.KnowledgeBase`: a ``name``, one ``search`` that takes the pipeline's effective
parameters (fusion, BM25, feedback) and returns hits, and ``get_parents`` for parent aggregation.
``KnowledgeBase`` satisfies it structurally; so does any KB double a test or an app builds.

``path`` is the directory a KB keeps its tuned parameters in (``tuning.json``,
:mod:`zhiwen.retrieve.tuning`); None for a KB without one (a double): it is simply not tuned.

Example::

    >>> class OneHitKB:                       # enough for the pipeline
    ...     name, path = "demo", None
    ...     def search(self, query, **params):
    ...         return [SearchHit(chunk=Chunk(id="a#0", doc_id="a", text="甲"), score=1.0)]
    ...     def get_parents(self, ids):
    ...         return []
    >>> RetrievalPipeline.static(settings).search(OneHitKB(), "问题").hits[0].chunk.id
    'a#0'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from zhiwen.documents import Document, SearchHit
from zhiwen.store.filters import Filter

if TYPE_CHECKING:
    from zhiwen.retrieve.feedback import FeedbackParams


class Searchable(Protocol):
    """A knowledge base as retrieval sees it (see the module docstring)."""

    name: str

    @property
    def path(self) -> Path | None:
        """Where the KB keeps its tuning (None: not tuned)."""
        ...

    def search(
        self,
        query: str,
        *,
        mode: str = ...,
        top_k: int = ...,
        filters: Filter | Mapping[str, Any] | None = None,
        candidates: int | None = None,
        fusion: str | None = None,
        rrf_k: int | None = None,
        weights: tuple[float, float] | None = None,
        feedback: FeedbackParams | None = None,
        bm25_params: tuple[float | None, float | None] | None = None,
    ) -> list[SearchHit]:
        """Hits for ``query`` under these parameters (None: the KB's own default)."""
        ...

    def get_parents(self, ids: Sequence[str]) -> list[Document]:
        """Parent documents in the order of ``ids``; unknown ids are skipped."""
        ...

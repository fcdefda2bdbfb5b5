"""What every ingest loader returns.

Loaders turn a path into a :class:`Corpus`: documents (parents) and, when the format fixes its
own chunking (one BEIR passage = one chunk, one CSV row = one chunk), the chunks too. When
``chunks`` is None the knowledge base chunks the documents by markdown headers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from zhiwen.documents import Chunk, Document


@dataclass(slots=True)
class Corpus:
    documents: list[Document]
    chunks: list[Chunk] | None = None
    # KB defaults a format implies (e.g. {"app": "<app name>"}), applied when the KB is created
    kb_defaults: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

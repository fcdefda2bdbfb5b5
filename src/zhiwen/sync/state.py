"""What a KB's last sync saw and did: ``<kb>/sync.json`` (atomic writes, a format version).

Per source, each document's name (relative path or URL), content hash and document id: the
next sync re-reads only what changed. ``last`` is the last run's :class:`SyncResult`.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from zhiwen.fsutil import atomic_write_json
from zhiwen.versions import check_document, current

log = logging.getLogger(__name__)

FILE_NAME = "sync.json"


@dataclass(slots=True)
class Seen:
    """One document of a source as the last sync stored it."""

    hash: str
    doc_id: str


@dataclass(slots=True)
class SyncResult:
    """One run: counts of documents, the work done, errors (a source or a document that failed)."""

    started_at: float = field(default_factory=time.time)
    seconds: float = 0.0
    dry_run: bool = False
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    parsed: int = 0  # documents read and parsed (the changed and the added)
    embedded: int = 0  # passages sent to the embedding model
    chunks: int = 0  # passages written
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class SyncState:
    sources: dict[str, dict[str, Seen]] = field(default_factory=dict)
    last: SyncResult | None = None

    @classmethod
    def load(cls, kb_dir: Path) -> SyncState:
        path = kb_dir / FILE_NAME
        try:
            raw = json.loads(path.read_text("utf-8"))
        except FileNotFoundError:
            return cls()
        except (OSError, ValueError) as exc:  # a damaged state only costs a full re-read
            log.warning("ignoring unreadable %s: %s", path, exc)
            return cls()
        raw = check_document(raw if isinstance(raw, dict) else {}, "sync-state", path)
        sources = {
            src: {name: Seen(**seen) for name, seen in docs.items()}
            for src, docs in (raw.get("sources") or {}).items()
        }
        last = raw.get("last")
        return cls(sources, SyncResult(**last) if isinstance(last, dict) else None)

    def save(self, kb_dir: Path) -> None:
        data = {
            "format_version": current("sync-state"),
            "sources": {src: {n: asdict(s) for n, s in docs.items()} for src, docs in self.sources.items()},
            "last": self.last.as_dict() if self.last else None,
        }
        atomic_write_json(kb_dir / FILE_NAME, data)

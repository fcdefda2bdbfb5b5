"""``zhiwen kb export``: one KB, from any backend, into one bundle (:mod:`zhiwen.portable.bundle`).

What goes in is what the store holds — every row as it is searched (curated text, question
rows, FAQ entries, chunks added by hand), its vector, the parent documents — plus everything
only the KB's folder holds: ``curation.sqlite`` (overlays with the imported text and the
vectors of disabled chunks, the change log, the dictionary, the synonym groups, hit counts),
``tuning.json``, the upload ledger ``documents.json`` and the table catalogue. Tokens are not
exported: the importing KB's tokenizer, with the bundle's dictionary and keywords, gives the
same ones (:meth:`~zhiwen.curation.KBTokenizer.chunk_tokens`).

The export holds the KB's writer lock (searches go on; an index run or a curation change waits)
so the bundle is one consistent revision; memory stays bounded by one batch and one vector shard.

Example::

    report = export_kb(open_kb("manual"), Path("manual.zwkb"))
    report.chunks, report.bytes
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from zhiwen import __version__
from zhiwen.curation.db import DB_NAME as CURATION_DB
from zhiwen.portable.bundle import BundleWriter
from zhiwen.portable.manifest import Counts, EmbedderInfo, Manifest
from zhiwen.portable.progress import NullSteps, Steps
from zhiwen.portable.sqlite_rows import dump_tables, online_copy

if TYPE_CHECKING:
    from zhiwen.kb import KnowledgeBase

DOCUMENTS = "documents.jsonl.gz"
CHUNKS = "chunks.jsonl.gz"
CURATION_PREFIX = "curation/"
#: the KB folder's own small files that travel verbatim (the tuning, the upload ledger, the sync state)
PLAIN_FILES = ("tuning.json", "documents.json", "sync.json")
#: SQLite files of the KB folder copied with the online backup API (the table catalogue)
SQLITE_FILES = ("tables.sqlite3",)
FILES_PREFIX = "files/"
BATCH = 1000
#: the home's folder for bundles on their way in or out (the API's downloads and uploads)
SPOOL_DIR = ".spool"


@dataclass(slots=True)
class ExportReport:
    kb: str
    path: str
    documents: int = 0
    chunks: int = 0
    vectors: int = 0
    bytes: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def export_kb(kb: KnowledgeBase, target: Path, *, steps: Steps | None = None) -> ExportReport:
    """Write ``kb`` to the bundle ``target`` (replaced atomically when it exists)."""
    steps = steps or NullSteps()
    start = time.perf_counter()
    report = ExportReport(kb=kb.name, path=str(target))
    with kb.writing(), BundleWriter(Path(target)) as out:
        counts = Counts()
        counts.documents = _documents(kb, out, steps)
        counts.chunks, counts.vectors = _chunks(kb, out, steps)
        counts.curation = _curation(kb, out)
        _files(kb, out)
        out.finish(_manifest(kb, counts))
    report.documents, report.chunks, report.vectors = counts.documents, counts.chunks, counts.vectors
    report.bytes = Path(target).stat().st_size
    report.seconds = time.perf_counter() - start
    return report


def _manifest(kb: KnowledgeBase, counts: Counts) -> Manifest:
    tuning_path = kb.path / "tuning.json"
    tuning = json.loads(tuning_path.read_text("utf-8")) if tuning_path.is_file() else None
    name = kb.real_embedder().name if counts.vectors else None
    return Manifest(
        zhiwen_version=__version__,
        created_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        kb=kb.name,
        config=kb.config.model_dump(),
        tuning=tuning,
        embedder=EmbedderInfo(provider=kb.config.embedder, name=name, dim=kb.config.dim),
        counts=counts,
    )


def _documents(kb: KnowledgeBase, out: BundleWriter, steps: Steps) -> int:
    ids = sorted(kb.store.doc_ids())
    steps.start("导出文档", len(ids))
    with out.jsonl(DOCUMENTS) as lines:
        for i in range(0, len(ids), BATCH):
            part = ids[i : i + BATCH]
            for doc in kb.store.get_parents(part):
                lines.write(dataclasses.asdict(doc))
            steps.advance(len(part))
        return lines.count


def _chunks(kb: KnowledgeBase, out: BundleWriter, steps: Steps) -> tuple[int, int]:
    """Every stored row in the store's order, with the vectors of those that have one."""
    ids = kb.store.list_chunk_ids()
    steps.start("导出段落与向量", len(ids))
    dim = kb.store.dim
    shards = out.vector_shards(dim) if dim is not None else None
    with out.jsonl(CHUNKS) as lines:
        for i in range(0, len(ids), BATCH):
            chunks = kb.store.get_chunks(ids[i : i + BATCH])
            vectors = kb.store.get_vectors([c.id for c in chunks]) if shards is not None else {}
            for c in chunks:
                lines.write({**dataclasses.asdict(c), "v": c.id in vectors})
            if shards is not None and vectors:
                shards.append(np.stack([vectors[c.id] for c in chunks if c.id in vectors]))
            steps.advance(len(chunks))
        n = lines.count
    if shards is not None:
        shards.close()
    return n, shards.count if shards is not None else 0


def _curation(kb: KnowledgeBase, out: BundleWriter) -> dict[str, int]:
    path = kb.path / CURATION_DB
    if not path.is_file():
        return {}
    return dump_tables(path, lambda table: out.jsonl(f"{CURATION_PREFIX}{table}.jsonl.gz"))


def _files(kb: KnowledgeBase, out: BundleWriter) -> None:
    for name in PLAIN_FILES:
        if (kb.path / name).is_file():
            out.copy_file(FILES_PREFIX + name, kb.path / name)
    for name in SQLITE_FILES:
        if (kb.path / name).is_file():
            with online_copy(kb.path / name, out.target.with_name(f".{out.target.name}.{name}")) as copy:
                out.copy_file(FILES_PREFIX + name, copy)


def export_to_spool(kb: KnowledgeBase, folder: Path) -> Path:
    """Export ``kb`` into a new file in ``folder`` (the API streams it, then removes it)."""
    import secrets

    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{kb.name}.{secrets.token_hex(6)}.zwkb"
    export_kb(kb, target)
    return target

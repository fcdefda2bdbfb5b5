"""``zhiwen kb import``: a bundle into any backend, all or nothing.

1. The bundle is opened (a newer format version is refused) and every member checked against
   the manifest's size and SHA-256 before anything is written (truncated or tampered: refused).
2. A KB that exists is refused unless ``replace``; a second import of the same name at the same
   time is refused (a file lock, :func:`import_lock`).
3. Everything is written into a *staging* KB: a temporary name (its PostgreSQL schema or Qdrant
   Edge shards) and folder under ``<kbs>/.importing/``, invisible to ``kb list`` and the server —
   first ``curation.sqlite`` (so the tokenizer has the bundle's dictionary and keywords), then
   the documents and the rows, tokenised by that tokenizer, with the bundle's vectors when this
   home's embedder is the bundle's (same name, which says model and settings, and dimension).
   Otherwise the rows are written without vectors and re-embedded by the KB's own resumable
   fill (:mod:`zhiwen.kb.dense`): its vectors go through the home's embedding cache, so a re-run
   after an interruption embeds only what the first run did not.
4. The staging KB takes the final name: the old KB (``replace``) is deleted, the store data
   renamed (:func:`zhiwen.store.factory.rename_store`), the folder moved. Any failure before —
   a full disk included — removes the staging KB, and the home is as it was.

A Qdrant server cannot rename a collection: there the import writes under the final name (after
deleting the old KB, with ``replace``) and a failure drops what it wrote.

Example::

    report = import_bundle(Path("manual.zwkb"), name="manual2", backend="postgresql://…/zhiwen")
    report.vectors_reused, report.embedded
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import secrets
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
from filelock import FileLock, Timeout

from zhiwen.config import Settings, get_settings
from zhiwen.curation.db import CurationDB
from zhiwen.documents import Chunk, Document
from zhiwen.errors import InvalidParameter, KnowledgeBaseBusy
from zhiwen.kb import KnowledgeBase, delete_kb, open_kb
from zhiwen.kb.config import KBConfig, check_name, load_config
from zhiwen.kb.diskfaults import disk_errors, write_config
from zhiwen.kb.progress import Phase
from zhiwen.kb.writer import LOCK_DIR, kb_lock
from zhiwen.portable.bundle import BundleReader, VectorReader
from zhiwen.portable.export import (
    CHUNKS,
    CURATION_PREFIX,
    DOCUMENTS,
    FILES_PREFIX,
    PLAIN_FILES,
    SQLITE_FILES,
)
from zhiwen.portable.manifest import Manifest
from zhiwen.portable.progress import NullSteps, Steps
from zhiwen.portable.sqlite_rows import load_rows
from zhiwen.store.factory import drop_store, rename_store, renames

log = logging.getLogger(__name__)

STAGING_DIR = ".importing"
#: in a staging KB's folder once it is complete (only the swap is left)
READY = ".ready"
BATCH = 512
_CHUNK_FIELDS = {f.name for f in dataclasses.fields(Chunk)}
_DOC_FIELDS = {f.name for f in dataclasses.fields(Document)}
#: curation meta keys that belong to the database, not to the KB's content
_LOCAL_META = {"schema_version", "tokens_pending"}


class KnowledgeBaseExists(InvalidParameter):
    """An import into a name that is taken, without ``replace``."""

    user_message = "知识库已存在"


@dataclass(slots=True)
class ImportReport:
    kb: str
    store: str
    documents: int = 0
    chunks: int = 0
    vectors_reused: int = 0
    embedded: int = 0
    replaced: bool = False
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True, slots=True)
class Target:
    """Where and how the bundle lands: the staging KB's config and whether vectors are reused."""

    name: str
    config: KBConfig
    reuse_vectors: bool

    @property
    def staged(self) -> bool:
        return self.config.name != self.name


def import_lock(settings: Settings, name: str) -> FileLock:
    """The lock one import of KB ``name`` holds from start to end (non-blocking for a second)."""
    path = settings.kb_root / LOCK_DIR / f"{name}.import.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(path))


def import_bundle(
    source: Path | IO[bytes],
    *,
    settings: Settings | None = None,
    name: str | None = None,
    replace: bool = False,
    backend: str | None = None,
    embedder: str | None = None,
    steps: Steps | None = None,
    authorize: Callable[[str], None] | None = None,
) -> ImportReport:
    """Import the bundle ``source`` (a path or a seekable binary file) as KB ``name`` (default:
    the exported KB's name) into ``backend`` (default: the home's store); see the module
    docstring. ``authorize(name)`` may refuse the target name before anything is read further
    (the API: the caller's write access)."""
    settings = settings or get_settings()
    steps = steps or NullSteps()
    start = time.perf_counter()
    with BundleReader(source if not isinstance(source, str) else Path(source)) as bundle:
        name = check_name(name or bundle.manifest.kb)
        if authorize is not None:
            authorize(name)
        _refuse_existing(settings, name, replace)
        with _holding(import_lock(settings, name), name):
            steps.start("校验导出文件", sum(m.bytes for m in bundle.manifest.members.values()))
            bundle.verify(on_bytes=steps.advance)
            sweep_abandoned(settings)
            existed = _refuse_existing(settings, name, replace)
            target = _target(bundle.manifest, settings, name, backend, embedder)
            with disk_errors(name):
                report = _stage_and_swap(bundle, settings, target, existed, steps)
    report.seconds = time.perf_counter() - start
    return report


@contextlib.contextmanager
def _holding(lock: FileLock, name: str) -> Iterator[None]:
    try:
        lock.acquire(blocking=False)
    except Timeout:
        raise KnowledgeBaseBusy(
            f"another import of {name!r} is running",
            message=f"另一个导入任务正在导入知识库「{name}」，请等它完成后再试",
            data={"kb": name},
        ) from None
    try:
        yield
    finally:
        lock.release()


def _refuse_existing(settings: Settings, name: str, replace: bool) -> bool:
    exists = (settings.kb_root / name / "kb.json").is_file()
    if exists and not replace:
        raise KnowledgeBaseExists(
            f"knowledge base {name!r} exists",
            message=f"知识库「{name}」已存在：加 --replace 替换它，或用 --as 新名称导入为另一个知识库",
            data={"kb": name},
        )
    return exists


def _target(
    manifest: Manifest, settings: Settings, name: str, backend: str | None, embedder: str | None
) -> Target:
    """The staging KB's config: the bundle's settings on this home's backend and embedder."""
    from zhiwen.embed import get_embedder

    provider = embedder or manifest.embedder.provider
    dim: int | None = None
    reuse = False
    if manifest.config.get("dim") is not None:
        real = get_embedder(provider, settings.embedding)
        dim = int(real.dim)
        reuse = manifest.embedder.name == real.name and manifest.embedder.dim == dim
    store = backend or settings.store
    stage = f"imp_{secrets.token_hex(6)}" if renames(store) else name
    fields = {k: v for k, v in manifest.config.items() if k in KBConfig.model_fields}
    fields.update(name=stage, store=store, embedder=provider, dim=dim)
    return Target(name=name, config=KBConfig.model_validate(fields), reuse_vectors=reuse)


def _stage_and_swap(
    bundle: BundleReader, settings: Settings, target: Target, existed: bool, steps: Steps
) -> ImportReport:
    report = ImportReport(kb=target.name, store=target.config.store.split("://", 1)[0], replaced=existed)
    stage_dir = settings.kb_root / STAGING_DIR / target.config.name
    if not target.staged and existed:
        delete_kb(target.name, settings)  # a store that cannot rename: the old KB goes first
    kb: KnowledgeBase | None = None
    stage_dir.parent.mkdir(parents=True, exist_ok=True)
    alive = _stage_lock(stage_dir)
    alive.acquire()  # tells a later import that this staging KB is not an abandoned one
    try:
        stage_dir.mkdir()
        _curation(bundle, stage_dir, target.reuse_vectors)
        _files(bundle, stage_dir)
        kb = KnowledgeBase(target.config, path=stage_dir, settings=settings)
        kb.save_config()
        report.documents = _documents(bundle, kb, steps)
        report.chunks, report.vectors_reused = _rows(bundle, kb, target.reuse_vectors, steps)
        if report.vectors_reused < report.chunks:  # another embedder, or a KB exported mid-fill
            report.embedded = kb.fill_vectors(progress=_FillSteps(steps)).embedded
        kb.close()
        _swap(settings, target, stage_dir, bundle.manifest, existed)
    except BaseException:
        _discard(kb, target.config.store, stage_dir)
        raise
    finally:
        alive.release()
        Path(alive.lock_file).unlink(missing_ok=True)
    open_kb(target.name, settings=settings).build_vector_index()
    return report


def _curation(bundle: BundleReader, stage_dir: Path, reuse_vectors: bool) -> None:
    """The bundle's ``curation.sqlite`` tables into the staging KB's (before it opens, so its
    tokenizer starts with the dictionary and keywords)."""
    members = [n for n in bundle.manifest.members if n.startswith(CURATION_PREFIX)]
    if not members:
        return
    db = CurationDB(stage_dir)
    try:
        with db.transaction() as tx:
            for member in members:
                table = member[len(CURATION_PREFIX) :].removesuffix(".jsonl.gz")
                skip = (lambda r: r.get("key") in _LOCAL_META) if table == "meta" else None
                load_rows(tx.conn, table, bundle.jsonl(member), skip=skip)
            if not reuse_vectors:  # a disabled chunk's vector is another model's: re-embed on enable
                tx.conn.execute("UPDATE overlays SET vector = NULL, vector_hash = NULL")
    finally:
        db.close()


def _files(bundle: BundleReader, stage_dir: Path) -> None:
    for name in (*PLAIN_FILES, *SQLITE_FILES):
        if bundle.has(FILES_PREFIX + name):
            bundle.copy_to(FILES_PREFIX + name, stage_dir / name)


def _documents(bundle: BundleReader, kb: KnowledgeBase, steps: Steps) -> int:
    steps.start("导入文档", bundle.manifest.counts.documents)
    n = 0
    batch: list[Document] = []
    for row in bundle.jsonl(DOCUMENTS):
        batch.append(Document(**{k: v for k, v in row.items() if k in _DOC_FIELDS}))
        if len(batch) >= BATCH:
            n += _put_parents(kb, batch, steps)
            batch = []
    return n + _put_parents(kb, batch, steps)


def _put_parents(kb: KnowledgeBase, docs: list[Document], steps: Steps) -> int:
    if docs:
        with kb.changing():
            kb.store.put_chunks([], tokens=[], parents=docs)
        steps.advance(len(docs))
    return len(docs)


def _rows(bundle: BundleReader, kb: KnowledgeBase, reuse: bool, steps: Steps) -> tuple[int, int]:
    """Every row, in the bundle's order, tokenised here; the bundle's vectors when ``reuse``
    (also into the home's embedding cache, so re-indexing the same sources here embeds nothing)."""
    steps.start("导入段落" + ("与向量" if reuse else ""), bundle.manifest.counts.chunks)
    vectors = (
        _Vectors(bundle.vectors(), kb.embedding_cache(), bundle.manifest.embedder.name) if reuse else None
    )
    n = reused = 0
    try:
        batch: list[dict[str, Any]] = []
        for row in bundle.jsonl(CHUNKS):
            batch.append(row)
            if len(batch) >= BATCH:
                reused += _put_rows(kb, batch, vectors)
                n += len(batch)
                steps.advance(len(batch))
                batch = []
        reused += _put_rows(kb, batch, vectors)
        n += len(batch)
        steps.advance(len(batch))
    finally:
        if vectors is not None:
            vectors.close()
    return n, reused


class _Vectors:
    """The bundle's vectors in order, each batch also offered to the home's embedding cache."""

    def __init__(self, reader: VectorReader, cache: Any, model: str | None) -> None:
        self.reader, self.cache, self.model = reader, cache, model

    def take(self, chunks: list[Chunk]) -> np.ndarray:
        block = self.reader.take(len(chunks))
        if self.cache is not None:
            self.cache.put_many(
                {c.content_hash: v for c, v in zip(chunks, block, strict=True)}, model=self.model
            )
        return block

    def close(self) -> None:
        self.reader.close()
        if self.cache is not None:
            self.cache.close()


def _put_rows(kb: KnowledgeBase, rows: list[dict[str, Any]], vectors: _Vectors | None) -> int:
    """One batch: the rows that bring a vector in one write, the others in a second."""
    if not rows:
        return 0
    chunks = [Chunk(**{k: v for k, v in r.items() if k in _CHUNK_FIELDS}) for r in rows]
    tokens = [kb.tokenizer.chunk_tokens(c) for c in chunks]
    has = [bool(r.get("v")) and vectors is not None for r in rows]
    with_vec = [i for i, h in enumerate(has) if h]
    without = [i for i, h in enumerate(has) if not h]
    with kb.changing():
        if with_vec:
            assert vectors is not None
            block = vectors.take([chunks[i] for i in with_vec])
            kb.store.put_chunks(
                [chunks[i] for i in with_vec], tokens=[tokens[i] for i in with_vec], vectors=block
            )
        if without:
            kb.store.put_chunks([chunks[i] for i in without], tokens=[tokens[i] for i in without])
    return len(with_vec)


class _FillSteps:
    """The KB's vector fill (an :class:`~zhiwen.kb.progress.IndexProgress`) as one more step."""

    def __init__(self, steps: Steps) -> None:
        self.steps = steps

    def start(self, phase: Phase, total: int, *, completed: int = 0, resumed: int = 0) -> None:
        self.steps.start("重新向量化" + (f"（已恢复 {resumed:,}）" if resumed else ""), total)
        self.steps.advance(completed)

    def advance(self, phase: Phase, n: int) -> None:
        self.steps.advance(n)

    def finish(self, phase: Phase) -> None:
        return None

    def note(self, message: str) -> None:
        return None


def _swap(settings: Settings, target: Target, stage_dir: Path, manifest: Manifest, existed: bool) -> None:
    """The staging KB takes its final name (under the final name's writer lock)."""
    final_dir = settings.kb_root / target.name
    with kb_lock(settings, target.name).hold():
        old_revision = load_config(final_dir, target.name).revision if existed else -1
        revision = max(int(manifest.config.get("revision", 0)), old_revision) + 1  # no cache keeps the old
        config = target.config.model_copy(update={"name": target.name, "revision": revision})
        write_config(stage_dir, json.dumps(config.model_dump(), ensure_ascii=False, indent=2) + "\n")
        (stage_dir / READY).touch()  # complete: never swept, even if we die between delete and rename
        if existed and target.staged:
            delete_kb(target.name, settings)
        if target.staged:
            rename_store(target.config.store, target.config.name, target.name)
        stage_dir.rename(final_dir)
        (final_dir / READY).unlink(missing_ok=True)


def _discard(kb: KnowledgeBase | None, store: str | None, stage_dir: Path) -> None:
    """A failed import leaves nothing: the staging KB's store data and folder go."""
    if kb is not None:
        with contextlib.suppress(Exception):
            kb.close()
    if store is not None:
        with contextlib.suppress(Exception):
            drop_store(store, stage_dir.name)
    shutil.rmtree(stage_dir, ignore_errors=True)


def _stage_lock(stage_dir: Path) -> FileLock:
    return FileLock(str(stage_dir.with_name(stage_dir.name + ".lock")), thread_local=False)


def sweep_abandoned(settings: Settings) -> list[str]:
    """Remove the staging KBs of imports that died without cleaning up (``kill -9``, a power
    cut): those whose lock nobody holds. Returns their names. Each import calls it first."""
    root = settings.kb_root / STAGING_DIR
    swept: list[str] = []
    for stage_dir in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        lock = _stage_lock(stage_dir)
        try:
            lock.acquire(blocking=False)
        except Timeout:
            continue  # a running import's
        try:
            if (stage_dir / READY).is_file():  # a finished import that died while swapping: kept
                log.warning(
                    "complete staged import left in %s: move it to %s to keep it", stage_dir, settings.kb_root
                )
                continue
            if (settings.kb_root / stage_dir.name / "kb.json").is_file():
                shutil.rmtree(stage_dir, ignore_errors=True)  # direct mode, KB already live: its data stays
            else:
                _discard(None, _stored_url(stage_dir), stage_dir)
            swept.append(stage_dir.name)
        finally:
            lock.release()
            Path(lock.lock_file).unlink(missing_ok=True)
    return swept


def _stored_url(stage_dir: Path) -> str | None:
    try:
        return str(json.loads((stage_dir / "kb.json").read_text("utf-8"))["store"])
    except (OSError, ValueError, KeyError):
        return None

"""The writes of the embedded store's SQLite database: one transaction each.

:class:`ChunkWrites` is mixed into :class:`~zhiwen.store._embedded_db.ChunkDB`: upsert (with
document-level replace and content hashing), chunk-level puts and token rewrites (curation),
delete, and vector fills. Every write is one
``BEGIN IMMEDIATE`` transaction that bumps the generation (readers notice with one indexed
read); a failure rolls it back, and disk faults become a clear error (:mod:`zhiwen.store._disk`).

Content hashes cover text, metadata and tokens, not the vector: an unchanged chunk keeps its row
(and its vector, when the batch has none); a new vector for it is written in place and stamped
(``vseq``) like a fill, so index syncs read it by the stamp.

Example::

    db.upsert(chunks, tokens=token_lists, vectors=None, parents=docs)   # lexical-first
    db.set_vectors([c.id for c in chunks], vectors)
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from zhiwen.documents import Chunk, Document
from zhiwen.errors import InvalidParameter, StoreUnavailable
from zhiwen.store._disk import store_write_error
from zhiwen.store._validate import check_batch, check_vector_rows, dump_metadata

_SQL_VARS = 500  # ids per IN (...) query, well under SQLite's variable limit
# (chunk, metadata JSON, term counts, length, vector bytes, content hash, hasher before the vector)
_PreparedChunk = tuple[Chunk, str, Counter[str], int, bytes | None, str, Any]


def _batches(items: Sequence[Any], size: int = _SQL_VARS) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _marks(part: Sequence[Any]) -> str:
    return ",".join("?" * len(part))


def _parent_rows(parents: Sequence[Document]) -> list[tuple[str, str, str, str]]:
    rows = [
        (p.id, p.text, p.title, dump_metadata(p.metadata, p.id)) for p in parents if isinstance(p, Document)
    ]
    if len(rows) != len(parents):
        raise InvalidParameter("parents must be Document objects", message="父文档类型错误")
    return rows


def _prepare(
    chunks: Sequence[Chunk],
    tokens: Sequence[Sequence[str]],
    vecs: np.ndarray | None,
    vec_bytes: Sequence[bytes | None] | None = None,
) -> list[_PreparedChunk]:
    """Everything that can fail on bad input, computed before a transaction starts.

    The stored hash covers the content only (text, metadata, tokens), not the vector: an
    unchanged chunk keeps its row whether or not the batch carries a vector. Stores written
    before vector fills hashed content + vector; :func:`_same_content` accepts both.
    """
    rows: list[_PreparedChunk] = []
    for i, chunk in enumerate(chunks):
        md = dump_metadata(chunk.metadata, chunk.id)
        vec = vec_bytes[i] if vec_bytes is not None else None if vecs is None else vecs[i].tobytes()
        h = hashlib.blake2b(digest_size=16)
        for part in (chunk.doc_id, chunk.text, chunk.title, chunk.parent_id or "\x00", md):
            h.update(part.encode("utf-8") + b"\x1f")
        h.update("\x1f".join(map(str, tokens[i])).encode("utf-8") + b"\x1e")
        counts = Counter(str(t) for t in tokens[i])
        rows.append((chunk, md, counts, len(tokens[i]), vec, h.hexdigest(), h))
    return rows


def _stored_rows(conn: sqlite3.Connection, ids: Sequence[str]) -> dict[str, tuple[int, str, bytes | None]]:
    """id → (rowid, hash, vector) of the chunks among ``ids`` that the store already has."""
    existing: dict[str, tuple[int, str, bytes | None]] = {}
    for cids in _batches(ids):
        q = f"SELECT id, rowid, hash, vector FROM chunks WHERE id IN ({_marks(cids)})"
        for cid, rowid, row_hash, row_vec in conn.execute(q, tuple(cids)):
            existing[cid] = (rowid, row_hash, row_vec)
    return existing


def _same_content(stored_hash: str, stored_vec: bytes | None, content_hash: str, hasher: Any) -> bool:
    if stored_hash == content_hash:
        return True
    if stored_vec is None:
        return False
    legacy = hasher.copy()  # the hash of a row written before fills: content + vector
    legacy.update(stored_vec)
    return bool(legacy.hexdigest() == stored_hash)


class ChunkWrites:
    """Upsert, delete and vector fills of :class:`~zhiwen.store._embedded_db.ChunkDB`."""

    if TYPE_CHECKING:  # provided by ChunkDB
        path: Path
        lock: threading.RLock
        closed: bool
        wconn: sqlite3.Connection
        dim: int | None
        vocab: dict[str, int]
        _vocab_max: int

        def load_vocab(self, conn: sqlite3.Connection) -> None: ...
        def get_chunks(self, ids: Sequence[str]) -> list[Chunk]: ...
        def get_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]: ...
        def generation(self, conn: sqlite3.Connection | None = None) -> int: ...

    def upsert(
        self,
        chunks: Sequence[Chunk],
        *,
        tokens: Sequence[Sequence[str]],
        vectors: np.ndarray | None = None,
        parents: Sequence[Document] = (),
    ) -> None:
        """Insert or replace chunks and parents in one transaction (see :class:`Store`)."""
        rows = _prepare(chunks, tokens, check_batch(chunks, tokens, vectors, self.dim))
        self._write(rows, _parent_rows(parents), replace_docs=True)

    def put_chunks(
        self,
        chunks: Sequence[Chunk],
        *,
        tokens: Sequence[Sequence[str]],
        vectors: np.ndarray | None = None,
        parents: Sequence[Document] = (),
        remove: Sequence[str] = (),
    ) -> None:
        """Insert or replace ``chunks`` by id and delete ``remove``, in one transaction; the
        other chunks of their documents stay (see :meth:`Store.put_chunks`)."""
        rows = _prepare(chunks, tokens, check_batch(chunks, tokens, vectors, self.dim))
        keep = {c.id for c in chunks}
        self._write(rows, _parent_rows(parents), remove=[i for i in remove if i not in keep])

    def set_tokens(self, ids: Sequence[str], tokens: Sequence[Sequence[str]]) -> int:
        """New lexical tokens for existing chunks, their text and vectors kept (one transaction).

        A chunk whose tokens change is written as a new row (with its vector), so an index
        synced by row id picks the change up like any other write."""
        if isinstance(ids, str) or len(ids) != len(tokens):
            raise InvalidParameter(
                f"{len(tokens)} token lists for {len(ids)} ids", message="分词结果数量与文本块数量不一致"
            )
        last = {cid: i for i, cid in enumerate(ids)}
        with self.lock:
            chunks = self.get_chunks(list(last))
            vectors = self.get_vectors([c.id for c in chunks])
            rows = _prepare(
                chunks,
                [tokens[last[c.id]] for c in chunks],
                None,
                [vectors[c.id].tobytes() if c.id in vectors else None for c in chunks],
            )
            self._write(rows, [])
        return len(rows)

    def _write(
        self,
        rows: list[_PreparedChunk],
        parent_rows: list[tuple[str, str, str, str]],
        *,
        replace_docs: bool = False,
        remove: Sequence[str] = (),
    ) -> int:
        """Prepared rows, parents and deletions in one transaction; the rows changed."""
        new_terms: dict[str, int] = {}
        with self.lock, self._transaction() as conn:
            self.load_vocab(conn)  # another process may have added terms
            chunks = [row[0] for row in rows]
            changed = self._delete_stale(conn, chunks) if replace_docs else 0
            changed += self._delete_ids(conn, remove)
            next_gen = self.generation(conn) + 1
            existing = _stored_rows(conn, [c.id for c in chunks])
            for row in rows:
                changed += self._write_chunk(conn, row, existing.get(row[0].id), next_gen, new_terms)
            conn.executemany(
                "INSERT OR REPLACE INTO parents (id, text, title, metadata) VALUES (?, ?, ?, ?)", parent_rows
            )
            if changed:
                self._bump(conn)
        # only after the commit: the in-memory vocabulary learns the new terms
        for term, tid in new_terms.items():
            self.vocab[term] = tid
            self._vocab_max = max(self._vocab_max, tid)
        return changed

    def _write_chunk(
        self,
        conn: sqlite3.Connection,
        row: _PreparedChunk,
        old: tuple[int, str, bytes | None] | None,
        next_gen: int,
        new_terms: dict[str, int],
    ) -> int:
        """Write one prepared chunk over its stored row ``old`` (rowid, hash, vector); 1 if changed."""
        chunk, md, counts, length, vec, new_hash, hasher = row
        if old is not None and _same_content(old[1], old[2], new_hash, hasher):
            # unchanged content keeps its row (and its vector, when the batch has none)
            if vec is None or vec == old[2]:
                return 0
            conn.execute(
                "UPDATE chunks SET vector = ?, vseq = ?, hash = ? WHERE rowid = ?",
                (vec, next_gen, new_hash, old[0]),
            )
            return 1
        if old is not None:
            conn.execute("DELETE FROM chunks WHERE rowid = ?", (old[0],))
        term_ids = self._term_ids(conn, counts, new_terms)
        tfs = np.fromiter(counts.values(), np.int32, len(counts))
        conn.execute(
            "INSERT INTO chunks (id, doc_id, text, title, parent_id, metadata, terms, tfs, length,"
            " vector, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                *(chunk.id, chunk.doc_id, chunk.text, chunk.title, chunk.parent_id, md),
                *(term_ids.tobytes(), tfs.tobytes(), length, vec, new_hash),
            ),
        )
        return 1

    def _term_ids(
        self, conn: sqlite3.Connection, counts: Counter[str], new_terms: dict[str, int]
    ) -> np.ndarray:
        """The vocabulary ids of ``counts``' terms; a new term gets a row (and joins ``new_terms``)."""
        term_ids = np.empty(len(counts), np.int32)
        for j, term in enumerate(counts):
            tid = self.vocab.get(term) or new_terms.get(term)
            if tid is None:
                cur = conn.execute("INSERT INTO vocab (term) VALUES (?)", (term,))
                tid = new_terms[term] = int(cur.lastrowid or 0)
            term_ids[j] = tid
        return term_ids

    def set_vectors(self, ids: Sequence[str], vectors: np.ndarray) -> int:
        """Fill (or replace) the vectors of existing chunks in one transaction; rows updated."""
        ids, vecs = check_vector_rows(ids, vectors, self.dim)
        if not ids:
            return 0
        with self.lock, self._transaction() as conn:
            # stamped with the generation this write creates: an index synced to an older one
            # picks exactly these rows up (see filled_since)
            next_gen = self.generation(conn) + 1
            updated = 0
            for start in range(0, len(ids), _SQL_VARS):
                part = ids[start : start + _SQL_VARS]
                cur = conn.executemany(
                    "UPDATE chunks SET vector = ?, vseq = ? WHERE id = ?",
                    [(vecs[start + j].tobytes(), next_gen, cid) for j, cid in enumerate(part)],
                )
                updated += max(cur.rowcount, 0)
            if updated:
                self._bump(conn, rows=False)
        return updated

    @staticmethod
    def _delete_stale(conn: sqlite3.Connection, chunks: Sequence[Chunk]) -> int:
        """Document-level replace: chunks of the batch's documents that are not in the batch go."""
        batch_ids = {c.id for c in chunks}
        removed = 0
        for docs in _batches(sorted({c.doc_id for c in chunks})):
            q = f"SELECT rowid, id FROM chunks WHERE doc_id IN ({_marks(docs)})"
            stale = [(r,) for r, cid in conn.execute(q, tuple(docs)).fetchall() if cid not in batch_ids]
            conn.executemany("DELETE FROM chunks WHERE rowid = ?", stale)
            removed += len(stale)
        return removed

    @staticmethod
    def _delete_ids(conn: sqlite3.Connection, chunk_ids: Sequence[str]) -> int:
        removed = 0
        for part in _batches(list(dict.fromkeys(chunk_ids))):
            removed += conn.execute(f"DELETE FROM chunks WHERE id IN ({_marks(part)})", tuple(part)).rowcount
        return removed

    def delete(self, *, chunk_ids: Sequence[str] = (), doc_ids: Sequence[str] = ()) -> int:
        """Delete chunks by id and whole documents (chunks + parent) by doc id; returns chunks removed."""
        if isinstance(chunk_ids, str) or isinstance(doc_ids, str):
            raise InvalidParameter(
                "chunk_ids/doc_ids must be sequences of ids", message="删除参数应为 id 列表"
            )
        with self.lock, self._transaction() as conn:
            removed = self._delete_ids(conn, chunk_ids)
            for part in _batches(list(dict.fromkeys(doc_ids))):
                marks = _marks(part)
                parent_ids = [
                    r[0]
                    for r in conn.execute(
                        f"SELECT DISTINCT parent_id FROM chunks WHERE doc_id IN ({marks})"
                        " AND parent_id IS NOT NULL",
                        tuple(part),
                    )
                ]
                removed += conn.execute(f"DELETE FROM chunks WHERE doc_id IN ({marks})", tuple(part)).rowcount
                conn.execute(f"DELETE FROM parents WHERE id IN ({marks})", tuple(part))
                for pid in parent_ids:  # parents no chunk points to any more
                    still = conn.execute("SELECT 1 FROM chunks WHERE parent_id = ? LIMIT 1", (pid,))
                    if still.fetchone() is None:
                        conn.execute("DELETE FROM parents WHERE id = ?", (pid,))
            if removed:
                self._bump(conn)
        return removed

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` … ``COMMIT``; any failure rolls back, disk faults become
        :class:`~zhiwen.errors.StoreUnavailable` with a Chinese message (see :mod:`._disk`)."""
        if self.closed:
            raise StoreUnavailable("store is closed", message="知识库存储已关闭")
        conn = self.wconn
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise store_write_error(exc, self.path) from exc
        try:
            yield conn
            conn.execute("COMMIT")
        except BaseException as exc:
            # SQLite may already have rolled back by itself (a full disk): no second error
            if conn.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise store_write_error(exc, self.path) from exc
            raise

    @staticmethod
    def _bump(conn: sqlite3.Connection, *, rows: bool = True) -> None:
        """Next generation; ``rows``: this write added or removed rows (a fill does not)."""
        conn.execute(
            "INSERT INTO meta (key, value) VALUES ('generation', '1') ON CONFLICT(key) DO UPDATE"
            " SET value = CAST(value AS INTEGER) + 1"
        )
        if rows:
            conn.execute(
                "INSERT OR REPLACE INTO meta (key, value)"
                " SELECT 'rows_generation', value FROM meta WHERE key = 'generation'"
            )

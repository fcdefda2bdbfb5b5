"""Term-major posting blocks: the PostgreSQL store's BM25 index (table ``postings``).

Each row of ``postings`` holds up to :data:`BLOCK_SIZE` postings of one term, ordered by the
chunk's integer ``rid`` (assigned in insertion order), packed into one ``bytea``: the rids, then
the term frequencies, then the chunk lengths, each as little-endian int32. A query reads the
blocks of its terms (a few hundred short rows even for a term in half the chunks) and scores
them vectorised in numpy; it never touches ``chunks`` or ``vectors`` rows, and the document
frequency of a term is simply the number of its postings.

Writes keep the blocks exact (no tombstones), inside the caller's transaction:

* :func:`append_postings` — new rids are always larger than every stored one, so a term's new
  postings go to the end: its last block is topped up to :data:`BLOCK_SIZE`, the rest become
  new blocks;
* :func:`remove_postings` — the run of blocks that overlaps the removed rids is rewritten
  without them and repacked into full blocks, so churn does not leave a trail of tiny blocks.

Example::

    grouped = group_postings([7, 8], [Counter({"宫保": 1}), Counter({"宫保": 2, "鸡丁": 1})], [3, 5])
    append_postings(conn, layout, grouped, fresh=False)
    n, total_len, postings = fetch_postings(conn, layout, ["宫保"])  # {"宫保": (rids, tfs, dls)}
    remove_postings(conn, layout, {"宫保": np.array([7])})
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np
import psycopg
from psycopg import sql


class SchemaTables(Protocol):
    """What postings need of a KB's schema (:class:`zhiwen.store._pg_schema.KBSchema`): its
    tables' names. Named here because the schema module builds postings when it migrates."""

    def table(self, table: str) -> sql.Identifier: ...


# postings per row: 128 x 12 bytes keeps a row under PostgreSQL's 2 KB TOAST threshold, so
# reading a block is one heap tuple with no TOAST lookup and no decompression
BLOCK_SIZE = 128
_INT32 = np.dtype("<i4")
# longer "tokens" (base64 blobs…) are counted in a chunk's length but get no postings: a btree
# key must stay under ~2.7 KB
MAX_LEXEME_BYTES = 1000

# (rids, term frequencies, chunk lengths), int32 each, rids ascending
Postings = tuple[np.ndarray, np.ndarray, np.ndarray]


def indexable(term: str) -> bool:
    """Whether ``term`` gets postings (non-empty and short enough for a btree key)."""
    return bool(term) and len(term.encode("utf-8")) <= MAX_LEXEME_BYTES


def pack(rids: np.ndarray, tfs: np.ndarray, dls: np.ndarray) -> bytes:
    return np.concatenate([rids, tfs, dls]).astype(_INT32, copy=False).tobytes()


def unpack(data: bytes) -> Postings:
    arr = np.frombuffer(data, dtype=_INT32)
    n = len(arr) // 3
    return arr[:n], arr[n : 2 * n], arr[2 * n :]


def group_postings(
    rids: Sequence[int], tfs: Sequence[Mapping[str, int]], dls: Sequence[int]
) -> dict[str, Postings]:
    """Postings per term of the given chunks (``rids`` ascending), in rid order."""
    by_term: dict[str, list[tuple[int, int, int]]] = {}
    for rid, tf, dl in zip(rids, tfs, dls, strict=True):
        for term, count in tf.items():
            if indexable(term):
                by_term.setdefault(term, []).append((rid, count, dl))
    out: dict[str, Postings] = {}
    for term, items in by_term.items():
        arr = np.array(items, dtype=_INT32).reshape(-1, 3)
        out[term] = (arr[:, 0], arr[:, 1], arr[:, 2])
    return out


def _blocks(term: str, first_no: int, postings: Postings) -> Iterable[tuple[Any, ...]]:
    """COPY rows ``(term, block_no, n, first_rid, last_rid, data)`` cutting ``postings`` in blocks."""
    rids, tfs, dls = postings
    for i, start in enumerate(range(0, len(rids), BLOCK_SIZE)):
        end = start + BLOCK_SIZE
        r = rids[start:end]
        yield term, first_no + i, len(r), int(r[0]), int(r[-1]), pack(r, tfs[start:end], dls[start:end])


def _copy_blocks(
    conn: psycopg.Connection[Any], layout: SchemaTables, rows: Iterable[tuple[Any, ...]]
) -> None:
    stmt = sql.SQL(
        "COPY {} (term, block_no, n, first_rid, last_rid, data) FROM STDIN (FORMAT BINARY)"
    ).format(layout.table("postings"))
    with conn.cursor() as cur, cur.copy(stmt) as copy:
        copy.set_types(["text", "int4", "int4", "int4", "int4", "bytea"])
        for row in rows:
            copy.write_row(row)


def _delete_blocks(conn: psycopg.Connection[Any], layout: SchemaTables, keys: list[tuple[str, int]]) -> None:
    if keys:
        conn.execute(
            sql.SQL(
                "DELETE FROM {} p USING unnest(%s::text[], %s::int4[]) AS d(term, block_no) "
                "WHERE p.term = d.term AND p.block_no = d.block_no"
            ).format(layout.table("postings")),
            ([k[0] for k in keys], [k[1] for k in keys]),
        )


def _concat(parts: Sequence[Postings]) -> Postings:
    if len(parts) == 1:
        return parts[0]
    return (
        np.concatenate([p[0] for p in parts]),
        np.concatenate([p[1] for p in parts]),
        np.concatenate([p[2] for p in parts]),
    )


def append_postings(
    conn: psycopg.Connection[Any], layout: SchemaTables, grouped: Mapping[str, Postings], *, fresh: bool
) -> None:
    """Add postings whose rids are larger than any stored; ``fresh``: the KB has no postings yet."""
    if not grouped:
        return
    last: dict[str, tuple[int, Postings]] = {}
    if not fresh:
        with conn.cursor(binary=True) as cur:
            cur.execute(
                sql.SQL(
                    "SELECT DISTINCT ON (term) term, block_no, data FROM {} "
                    "WHERE term = ANY(%s) ORDER BY term, block_no DESC"
                ).format(layout.table("postings")),
                (list(grouped),),
            )
            for term, block_no, data in cur:
                last[term] = (block_no, unpack(data))
    rewrite: list[tuple[str, int]] = []

    def rows() -> Iterable[tuple[Any, ...]]:
        for term, new in grouped.items():
            tail = last.get(term)
            if tail is None:
                yield from _blocks(term, 0, new)
            elif len(tail[1][0]) < BLOCK_SIZE:  # top up the partial last block
                rewrite.append((term, tail[0]))
                yield from _blocks(term, tail[0], _concat([tail[1], new]))
            else:
                yield from _blocks(term, tail[0] + 1, new)

    batch = list(rows())
    _delete_blocks(conn, layout, rewrite)
    _copy_blocks(conn, layout, batch)


def remove_postings(
    conn: psycopg.Connection[Any], layout: SchemaTables, removed: Mapping[str, np.ndarray]
) -> None:
    """Drop the postings of ``removed`` (term → rids); the touched runs of blocks are repacked."""
    terms = [t for t, r in removed.items() if len(r) and indexable(t)]
    if not terms:
        return
    runs: dict[str, list[tuple[int, Postings]]] = {}
    with conn.cursor(binary=True) as cur:
        cur.execute(
            sql.SQL(
                "SELECT p.term, p.block_no, p.data FROM {} p "
                "JOIN unnest(%s::text[], %s::int4[], %s::int4[]) AS d(term, lo, hi) "
                "ON p.term = d.term AND p.last_rid >= d.lo AND p.first_rid <= d.hi "
                "ORDER BY p.term, p.block_no"
            ).format(layout.table("postings")),
            (terms, [int(removed[t].min()) for t in terms], [int(removed[t].max()) for t in terms]),
        )
        for term, block_no, data in cur:
            runs.setdefault(term, []).append((block_no, unpack(data)))
    old: list[tuple[str, int]] = []
    new: list[tuple[Any, ...]] = []
    for term, run in runs.items():
        old += [(term, no) for no, _ in run]
        rids, tfs, dls = _concat([p for _, p in run])
        keep = ~np.isin(rids, removed[term])
        kept = (rids[keep], tfs[keep], dls[keep])
        # blocks of a run are consecutive block numbers' worth of rid order: reuse the first ones
        numbers = [no for no, _ in run]
        for row in _blocks(term, 0, kept):
            new.append((row[0], numbers[row[1]], *row[2:]))
    _delete_blocks(conn, layout, old)
    _copy_blocks(conn, layout, new)


def rebuild_postings(conn: psycopg.Connection[Any], layout: SchemaTables) -> None:
    """Build the whole ``postings`` table from ``chunks`` (migration from schema 1)."""
    conn.execute(sql.SQL("TRUNCATE {}").format(layout.table("postings")))
    rows = conn.execute(
        sql.SQL("SELECT rid, tf, dl FROM {} ORDER BY rid").format(layout.table("chunks"))
    ).fetchall()
    grouped = group_postings([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])
    _copy_blocks(conn, layout, (row for term, p in grouped.items() for row in _blocks(term, 0, p)))


def fetch_postings(
    conn: psycopg.Connection[Any], layout: SchemaTables, terms: Sequence[str]
) -> tuple[int, int, dict[str, Postings]]:
    """(N, total length, postings of ``terms`` that have any): one round trip."""
    parts: dict[str, list[Postings]] = {}
    n = total_len = 0
    with conn.cursor(binary=True) as cur:
        cur.execute(
            sql.SQL(
                "SELECT s.n, s.total_len, p.term, p.data FROM {} s LEFT JOIN {} p ON p.term = ANY(%s)"
            ).format(layout.table("stats"), layout.table("postings")),
            (list(terms),),
        )
        for row in cur:
            n, total_len, term, data = row
            if term is not None:
                parts.setdefault(term, []).append(unpack(data))
    return int(n), int(total_len), {t: _concat(p) for t, p in parts.items()}

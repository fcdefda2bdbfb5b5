"""Open the store of one knowledge base from its URL: the only module that knows every backend.

Backends are imported when first asked for, so an embedded-only deployment never imports
psycopg and :mod:`zhiwen.store.base` (the contract the backends import) imports no backend.

Example::

    from zhiwen.store import open_store

    store = open_store("embedded", path=kb_dir / "store", name="manual", dim=384)
    store = open_store("postgresql://postgres@127.0.0.1:5432/zhiwen", path=kb_dir, name="manual", dim=384)
    store = open_store("qdrant+local:///var/lib/zhiwen/qdrant", path=kb_dir, name="manual", dim=384)
    store = open_store("qdrant://qdrant-0:6333?shards=3&replicas=2", path=kb_dir, name="manual", dim=384)
    drop_store("qdrant+local:///var/lib/zhiwen/qdrant", "manual")
"""

from __future__ import annotations

from pathlib import Path

from zhiwen.errors import InvalidParameter
from zhiwen.store.base import Store

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
QDRANT_SCHEMES = ("qdrant+local://", "qdrant://", "qdrant+http://")


def open_store(url: str, *, path: Path, name: str, dim: int | None) -> Store:
    """Open (creating if needed) the store of one knowledge base.

    ``url`` is ``"embedded"`` (a directory at ``path``), a ``postgresql://`` URL (one schema per
    knowledge base ``name``) or a Qdrant URL: ``qdrant+local://DIR`` (Qdrant Edge in process,
    ``DIR/<name>``) or ``qdrant://host:6333`` (a server or cluster, collections ``zw_<name>``);
    ``path`` is used by the embedded store only.
    """
    if url == "embedded":
        from zhiwen.store.embedded import EmbeddedStore

        return EmbeddedStore(path, dim=dim, name=name)
    if url.startswith(POSTGRES_SCHEMES):
        from zhiwen.store.postgres import PostgresStore

        return PostgresStore(url, kb=name, dim=dim)
    if url.startswith(QDRANT_SCHEMES):
        from zhiwen.store.qdrant import open_qdrant

        return open_qdrant(url, kb=name, dim=dim)
    raise _unknown(url)


def drop_store(url: str, name: str) -> bool:
    """Delete the data of knowledge base ``name`` held by a server store (PostgreSQL, Qdrant).

    True when there was something to delete; the embedded store lives in the KB's directory,
    which the caller removes, so this returns False for it.
    """
    if url == "embedded":
        return False
    if url.startswith(POSTGRES_SCHEMES):
        from zhiwen.store.postgres import drop_kb

        return drop_kb(url, name)
    if url.startswith(QDRANT_SCHEMES):
        from zhiwen.store.qdrant import drop_qdrant_kb

        return drop_qdrant_kb(url, name)
    raise _unknown(url)


def renames(url: str) -> bool:
    """Whether :func:`rename_store` can give a KB's data another name (a Qdrant server cannot)."""
    return not url.startswith(QDRANT_SCHEMES[1:])


def rename_store(url: str, old: str, new: str) -> None:
    """Give the data of knowledge base ``old`` (closed) the name ``new`` (absent): a PostgreSQL
    schema or Qdrant Edge shards. The embedded store lives in the KB's directory, which the
    caller renames, so this does nothing for it."""
    if url == "embedded":
        return
    if url.startswith(POSTGRES_SCHEMES):
        from zhiwen.store._pg_schema import rename_kb

        rename_kb(url, old, new)
        return
    if url.startswith(QDRANT_SCHEMES):
        from zhiwen.store.qdrant import rename_qdrant_kb

        rename_qdrant_kb(url, old, new)
        return
    raise _unknown(url)


def _unknown(url: str) -> InvalidParameter:
    return InvalidParameter(
        f"unknown store {url!r}: use 'embedded', a postgresql:// URL, qdrant+local://PATH or qdrant://HOST:PORT",
        message=f"未知的存储后端：{url}",
    )

"""Open the store of one knowledge base from its URL: the only module that knows every backend.

Backends are imported when first asked for, so an embedded-only deployment never imports
psycopg and :mod:`zhiwen.store.base` (the contract the backends import) imports no backend.

Example::

    from zhiwen.store import open_store

    store = open_store("embedded", path=kb_dir / "store", name="manual", dim=384)
    store = open_store("postgresql://postgres@127.0.0.1:5432/zhiwen", path=kb_dir, name="manual", dim=384)
"""

from __future__ import annotations

from pathlib import Path

from zhiwen.errors import InvalidParameter
from zhiwen.store.base import Store

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def open_store(url: str, *, path: Path, name: str, dim: int | None) -> Store:
    """Open (creating if needed) the store of one knowledge base.

    ``url`` is ``"embedded"`` (a directory at ``path``) or a ``postgresql://`` URL (one schema per
    knowledge base ``name``; ``path`` is unused).
    """
    if url == "embedded":
        from zhiwen.store.embedded import EmbeddedStore

        return EmbeddedStore(path, dim=dim)
    if url.startswith(POSTGRES_SCHEMES):
        from zhiwen.store.postgres import PostgresStore

        return PostgresStore(url, kb=name, dim=dim)
    raise InvalidParameter(
        f"unknown store {url!r}: use 'embedded' or a postgresql:// URL", message=f"未知的存储后端：{url}"
    )

"""Chunk storage and search per knowledge base: the contract, its backends and their factory.

* :mod:`zhiwen.store.base` — the :class:`Store` protocol every backend implements, the
  :class:`StoreFeatures` each declares (and ``Scored``);
* :mod:`zhiwen.store.factory` — :func:`open_store`, URL → backend, imported lazily per backend;
* :mod:`zhiwen.store.embedded` — the default backend (SQLite + numpy BM25 + vectors, one directory);
* :mod:`zhiwen.store.postgres` — PostgreSQL + pgvector;
* :mod:`zhiwen.store.filters` — the metadata filter language both backends apply.

Example::

    from zhiwen.store import Store, open_store

    store: Store = open_store("embedded", path=kb_dir / "store", name="manual", dim=384)
"""

from zhiwen.store.base import Scored, Store, StoreFeatures
from zhiwen.store.factory import open_store

__all__ = ["Scored", "Store", "StoreFeatures", "open_store"]

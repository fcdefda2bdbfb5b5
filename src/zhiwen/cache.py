"""The one in-memory cache of the project: a thread-safe LRU (``cachetools``) with metrics.

Query embeddings, property-search answers and LLM extractions all use it; each names itself, so
``/metrics`` shows hits, misses and size per cache.

Example::

    >>> cache = LRU(2, "demo")
    >>> cache.put("a", 1); cache.put("b", 2); cache.put("c", 3)
    >>> cache.get("a") is None, cache.get("c"), len(cache)
    (True, 3, 2)
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Generic, TypeVar

from cachetools import LRUCache

from zhiwen.metrics import CACHE_HITS, CACHE_MISSES, CACHE_SIZE

V = TypeVar("V")


class LRU(Generic[V]):
    """``maxsize <= 0`` disables the cache (every ``get`` misses, ``put`` keeps nothing)."""

    def __init__(self, maxsize: int, name: str) -> None:
        self.maxsize = maxsize
        self.name = name
        self._data: LRUCache[Hashable, V] = LRUCache(maxsize=max(maxsize, 1))
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> V | None:
        with self._lock:
            value = self._data.get(key) if self.maxsize > 0 else None
        (CACHE_MISSES if value is None else CACHE_HITS).labels(cache=self.name).inc()
        return value

    def put(self, key: Hashable, value: V) -> None:
        if self.maxsize <= 0:
            return
        with self._lock:
            self._data[key] = value
            size = len(self._data)
        CACHE_SIZE.labels(cache=self.name).set(size)

    def discard(self, key: Hashable) -> None:
        """Forget ``key`` (no error when it is not there)."""
        with self._lock:
            self._data.pop(key, None)
            size = len(self._data)
        CACHE_SIZE.labels(cache=self.name).set(size)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
        CACHE_SIZE.labels(cache=self.name).set(0)

    def __len__(self) -> int:
        return len(self._data)

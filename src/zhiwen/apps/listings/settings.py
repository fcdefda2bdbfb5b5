"""Settings of the property-search app: the ``listings`` section of the one tree.

The app owns its settings: re-scoring weights, the RRF constant, caches, the LLM extraction
rate, and when to relax constraints. It declares them here and adds them to the settings tree
as the section ``listings`` (:meth:`zhiwen.config.Settings.section`), so they are read like
every other section: from the environment (``ZHIWEN_LISTINGS__<KEY>``, e.g.
``ZHIWEN_LISTINGS__RRF_K=40``) and from ``.env`` in the working directory.
:func:`listings_settings` takes them from the settings a context carries;
:func:`get_listings_settings` from the process-wide settings, until
:func:`reset_listings_settings` (tests change the environment).

Example::

    >>> listings_settings(ctx.settings).rrf_k
    40
    >>> ListingsSettings(weight_price=0.4).weight_price
    0.4
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from zhiwen.config import Settings, get_settings, reset_settings_cache

SECTION = "listings"  # ZHIWEN_LISTINGS__*


class ListingsSettings(BaseModel):
    """Property search: re-scoring weights and caches."""

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
    # the answer says how many listings match when the KB has at most this many (counted in
    # memory from their metadata, once per KB revision); 0: never count
    count_limit: int = Field(50_000, ge=0)
    # vectors of the listings KB at setup: None follows the app's declaration (KBSpec.vectors),
    # true / false overrides it (ZHIWEN_LISTINGS__VECTORS=true)
    vectors: bool | None = None


def listings_settings(settings: Settings) -> ListingsSettings:
    """The listings section of ``settings`` (``ctx.settings`` in a request)."""
    return settings.section(SECTION, ListingsSettings)


def get_listings_settings() -> ListingsSettings:
    """The listings section of the process-wide settings (environment and ``.env`` read once)."""
    return listings_settings(get_settings())


def reset_listings_settings() -> None:
    """Forget the process-wide settings, this section with them (tests change the environment)."""
    reset_settings_cache()


__all__ = [
    "SECTION",
    "ListingsSettings",
    "get_listings_settings",
    "listings_settings",
    "reset_listings_settings",
]

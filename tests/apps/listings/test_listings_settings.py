"""The app's own settings (:mod:`zhiwen.apps.listings.settings`): the ``listings`` section of the
settings tree, ZHIWEN_LISTINGS__* variables."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from zhiwen.apps.listings.settings import (
    ListingsSettings,
    get_listings_settings,
    listings_settings,
    reset_listings_settings,
)
from zhiwen.config import Settings


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.chdir(tmp_path)  # no .env of the developer's
    reset_listings_settings()
    yield
    reset_listings_settings()


def test_defaults() -> None:
    s = ListingsSettings()
    assert (s.rrf_k, s.weight_base, s.negation_penalty, s.relax_below) == (40, 0.35, 0.5, 3)
    assert s.price_over_budget_tolerance == pytest.approx(0.10)


def test_environment_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZHIWEN_LISTINGS__RRF_K", "25")
    monkeypatch.setenv("ZHIWEN_LISTINGS__CACHE_SIZE", "7")
    monkeypatch.setenv("ZHIWEN_LISTINGS__UNRELATED", "ignored")  # extra="ignore"
    s = get_listings_settings()
    assert (s.rrf_k, s.cache_size) == (25, 7)


def test_dot_env_file(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("ZHIWEN_LISTINGS__MAX_RESULTS_LIMIT=9\nOTHER=1\n", encoding="utf-8")
    assert get_listings_settings().max_results_limit == 9


def test_cached_until_reset(monkeypatch: pytest.MonkeyPatch) -> None:
    first = get_listings_settings()
    monkeypatch.setenv("ZHIWEN_LISTINGS__RRF_K", "11")
    assert get_listings_settings() is first and first.rrf_k == 40
    reset_listings_settings()
    assert get_listings_settings().rrf_k == 11


@pytest.mark.parametrize(("name", "value"), [("RRF_K", "0"), ("PRICE_OVER_BUDGET_TOLERANCE", "1.5")])
def test_validation(monkeypatch: pytest.MonkeyPatch, name: str, value: str) -> None:
    monkeypatch.setenv(f"ZHIWEN_LISTINGS__{name}", value)
    with pytest.raises(ValidationError):
        get_listings_settings()


def test_a_section_of_the_tree_a_context_carries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZHIWEN_LISTINGS__RRF_K", "25")
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    section = listings_settings(settings)
    assert section.rrf_k == 25 and listings_settings(settings) is section  # read once per settings

"""The usage examples in the extraction modules' docstrings are true."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "negation", "vocabulary", "requirements", "price", "location", "layout",
    "floors", "flags", "specials", "quality", "filters", "describe", "extract", "followup",
    "turns",
]  # fmt: skip


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(f"zhiwen.apps.listings.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0

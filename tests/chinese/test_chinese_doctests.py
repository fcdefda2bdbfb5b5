"""The usage examples in the docstrings of :mod:`zhiwen.chinese` are true."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["numerals", "quantities", "normalise", "dates", "gazetteer", "places", "number_check"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(f"zhiwen.chinese.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0

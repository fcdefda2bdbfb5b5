"""Shared by the extraction tests: compare a :class:`Requirements` with a table row.

Keys: attributes of Requirements; ``rooms`` = (min, max); ``districts`` / ``bankuai`` = exact
lists; ``exclude`` = excluded place names; ``special+`` / ``negations+`` / ``keywords+`` = must
contain; ``negations-`` = must not contain; ``decoration_in`` = same set.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from zhiwen.apps.listings.extract import Requirements, extract_rules

SH = {"上海"}


def check_requirements(req: Requirements, expected: dict[str, Any]) -> None:
    for key, want in expected.items():
        if key in _EXACT:
            assert _EXACT[key](req) == want, key
        elif key == "decoration_in":
            assert sorted(req.decoration_in) == sorted(want), key
        elif key.endswith("+"):
            have = getattr(req, key[:-1])
            for item in want:
                assert item in have, f"{key}: {item} not in {have}"
        elif key.endswith("-"):
            have = getattr(req, key[:-1])
            for item in want:
                assert item not in have, f"{key}: {item} in {have}"
        else:
            _check_attribute(req, key, want)


# keys that are no attribute of Requirements, or compared in another form
_EXACT: dict[str, Callable[[Requirements], Any]] = {
    "rooms": lambda req: (req.rooms_min, req.rooms_max),
    "districts": lambda req: req.districts,
    "bankuai": lambda req: req.bankuai,
    "exclude": lambda req: [p.district or p.name for p in req.exclude_places],
}


def _check_attribute(req: Requirements, key: str, want: Any) -> None:
    got = getattr(req, key)
    if isinstance(want, float | int) and not isinstance(want, bool) and got is not None:
        assert got == pytest.approx(want), key
    else:
        assert got == want, key


def run_case(question: str, expected: dict[str, Any]) -> None:
    check_requirements(extract_rules(question, kb_cities=SH), expected)

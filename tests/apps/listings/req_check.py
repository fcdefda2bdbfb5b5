"""Shared by the extraction tests: compare a :class:`Requirements` with a table row.

Keys: attributes of Requirements; ``rooms`` = (min, max); ``districts`` / ``bankuai`` = exact
lists; ``exclude`` = excluded place names; ``special+`` / ``negations+`` / ``keywords+`` = must
contain; ``negations-`` = must not contain; ``decoration_in`` = same set.
"""

from __future__ import annotations

from typing import Any

import pytest

from zhiwen.apps.listings.extract import Requirements, extract_rules

SH = {"上海"}


def check_requirements(req: Requirements, expected: dict[str, Any]) -> None:
    for key, want in expected.items():
        if key == "rooms":
            assert (req.rooms_min, req.rooms_max) == want, key
        elif key == "districts":
            assert req.districts == want, key
        elif key == "bankuai":
            assert req.bankuai == want, key
        elif key == "exclude":
            assert [p.district or p.name for p in req.exclude_places] == want, key
        elif key.endswith("+"):
            have = getattr(req, key[:-1])
            for item in want:
                assert item in have, f"{key}: {item} not in {have}"
        elif key.endswith("-"):
            have = getattr(req, key[:-1])
            for item in want:
                assert item not in have, f"{key}: {item} in {have}"
        elif key == "decoration_in":
            assert sorted(req.decoration_in) == sorted(want), key
        else:
            got = getattr(req, key)
            if isinstance(want, float | int) and not isinstance(want, bool) and got is not None:
                assert got == pytest.approx(want), key
            else:
                assert got == want, key


def run_case(question: str, expected: dict[str, Any]) -> None:
    check_requirements(extract_rules(question, kb_cities=SH), expected)

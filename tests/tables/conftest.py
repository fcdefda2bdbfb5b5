"""Fixtures of the table tests: a folder of admission-site pages."""

from __future__ import annotations

from pathlib import Path

import pytest
from table_fixtures import make_site


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return make_site(tmp_path / "site")

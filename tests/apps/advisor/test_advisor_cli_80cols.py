"""The advisor's calculators in an 80-column terminal: tables and notes whole, never cut."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner, Result

from zhiwen.clikit import console as cli_console

_FRAME = re.compile(r"[\s\u2500-\u257f]+")


@pytest.fixture
def narrow(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setattr(cli_console.console, "width", 80)
    yield


def run(*args: str) -> Result:
    from zhiwen.cli.main import app

    return CliRunner().invoke(app, ["advisor", "calc", *args])


def test_loan_at_80_columns(narrow: None) -> None:
    r = run("loan", "--price", "3000000", "--down-payment-ratio", "0.3", "--years", "30", "--rate", "3.1",
            "--schedule", "yearly")  # fmt: skip
    assert r.exit_code == 0, r.output
    assert max(len(line) for line in r.output.splitlines()) <= 80 and "…" not in r.output
    assert "月供" in r.output and "剩余本金" in r.output and "2,056,882.67" in r.output


def test_tax_notes_fold_under_their_bullet(narrow: None) -> None:
    r = run("tax", "--price", "3000000", "--area", "89", "--house-age", "3")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert max(len(line) for line in lines) <= 80 and "…" not in r.output
    assert not any(line.strip() == "·" for line in lines)  # a bullet never stands alone
    assert "契税" in _FRAME.sub("", r.output) and "合计" in r.output

"""bench/dialogues/advisor.jsonl replayed through the app, one session per dialogue: every
expected number (computed by the calculators when the file was written) must come out to the
cent — the loan (monthly_payment, loan_amount, down_payment, total_interest, years, rate), the
taxes (deed_tax, tax_total) and the repayment pressure (pressure_level).

Where the values are read: the first ``calc_loan`` / ``calc_tax`` / ``assess_pressure`` result
in ``answer.data["tool_calls"]`` (an equal-principal loan's ``monthly_payment`` is its first month).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from zhiwen.appkit.app import AppContext, AskRequest
from zhiwen.apps.advisor.app import AdvisorApp

DIALOGUES = Path(__file__).resolve().parents[3] / "bench" / "dialogues" / "advisor.jsonl"
SOURCES = {
    "calc_loan": ("monthly_payment", "loan_amount", "down_payment", "total_interest", "years", "rate"),
    "calc_tax": ("deed_tax", "total"),
    "assess_pressure": ("level",),
}
RENAMED = {"tax_total": ("calc_tax", "total"), "pressure_level": ("assess_pressure", "level")}


def load() -> list[dict[str, Any]]:
    return [json.loads(line) for line in DIALOGUES.read_text("utf-8").splitlines() if line.strip()]


def observed(answer: Any) -> dict[str, Any]:
    """The figures of one answer under the dialogue file's names."""
    first: dict[str, dict[str, Any]] = {}
    for call in answer.data["tool_calls"]:
        if "result" in call:
            first.setdefault(call["name"], call["result"])
    out: dict[str, Any] = {}
    for name, keys in SOURCES.items():
        for key in keys:
            if name in first:
                out[key] = first[name][key]
    for alias, (name, key) in RENAMED.items():
        if name in first:
            out[alias] = first[name][key]
    return out


def test_the_file_has_enough_follow_ups() -> None:
    dialogues = load()
    assert len(dialogues) >= 12 and all(d["app"] == "advisor" and len(d["turns"]) >= 2 for d in dialogues)


@pytest.mark.parametrize("index", range(len(load())))
def test_dialogue(advisor_ctx: AppContext, index: int) -> None:
    app = AdvisorApp()
    dialogue = load()[index]
    for turn in dialogue["turns"]:
        answer = app.ask(AskRequest(question=turn["user"], session_id=f"bench-{index}"), advisor_ctx)
        got = observed(answer)
        want = turn["expect"]
        assert {k: got.get(k) for k in want} == want, (turn["user"], answer.data["facts"])
        assert "未说明贷款年限" not in answer.answer or "years" not in want

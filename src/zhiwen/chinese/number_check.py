"""The number check for LLM-written text: every figure must come from a tool or the user.

The one check the tool loop (:mod:`zhiwen.tools.loop`), the advisor's role messages and the
answer stage's grounding (:mod:`zhiwen.answer.grounding`) run.

Numbers are read from the text (digits, thousands separators, Chinese numerals through
``cn2an``, units 万/亿/千 and %), and each must match some number of the tool results, the
user's input or the templated message, within the precision it is written with: 8967.34,
8,967, 8967.3 and 0.90万 all match 8967.34; 44.84% matches a ratio of 0.4484. Small integers
(list markers, "2年") are always allowed.

Strict about values (#31): a number is read only as it is written (a percent as its ratio or
its figure, 万/亿/千 as the amount or the figure before the unit) — never shifted by 100 or
10,000 on its own. A real model's stray ``0.9`` (a JSON confidence) once passed because 90万
÷ 100 is 0.9; 3.1% and 0.031 are the same value, 3.1% and 0.031% are not.

Example::

    >>> allowed = allowed_numbers([{"monthly_payment": 8967.34, "ratio": 0.4484}], ["月收入2万"])
    >>> check_numbers("月供约0.90万元，占收入44.84%", allowed).ok
    True
    >>> check_numbers("月供9500元", allowed).unsupported
    ['9500']
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from zhiwen.chinese.numerals import SCALE, to_arabic

NUMBER_RE = re.compile(r"(?<![\d.])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)\s*(%|％|万|亿|千)?")
TRIVIAL_MAX = 12  # integers up to this need no source (list numbers, months, "2年")


@dataclass(frozen=True, slots=True)
class FoundNumber:
    raw: str
    value: float  # as written, before the unit
    decimals: int
    unit: str | None

    def candidates(self) -> list[tuple[float, float]]:
        """(value in base units, tolerance) readings of the number."""
        half = 0.5 * 10 ** (-self.decimals) + 1e-9
        if self.unit in ("%", "％"):
            return [(self.value / 100, half / 100), (self.value, half)]
        if self.unit in SCALE:
            scale = SCALE[self.unit]
            return [(self.value * scale, half * scale), (self.value, half)]
        return [(self.value, half)]


def extract_numbers(text: str) -> list[FoundNumber]:
    out = []
    for m in NUMBER_RE.finditer(to_arabic(text)):
        digits = m.group(1).replace(",", "")
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        out.append(FoundNumber(m.group(0).strip(), float(digits), decimals, m.group(2)))
    return out


def _walk(value: Any, out: list[float]) -> None:
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int | float):
        out.append(float(value))
    elif isinstance(value, str):
        out.extend(n for f in extract_numbers(value) for n, _ in f.candidates())
    elif isinstance(value, dict):
        for v in value.values():
            _walk(v, out)
    elif isinstance(value, list | tuple):
        for v in value:
            _walk(v, out)


def allowed_numbers(results: Iterable[Any], texts: Iterable[str] = ()) -> list[float]:
    """Every number in tool results (nested) and texts (user input, the templated message)."""
    out: list[float] = []
    for r in results:
        _walk(r, out)
    for t in texts:
        _walk(t, out)
    return sorted(set(out))


@dataclass(slots=True)
class NumberCheck:
    ok: bool
    unsupported: list[str] = field(default_factory=list)
    checked: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "unsupported": self.unsupported, "checked": self.checked}


def _supported(number: FoundNumber, allowed: list[float]) -> bool:
    if number.unit is None and number.decimals == 0 and number.value <= TRIVIAL_MAX:
        return True
    for value, tol in number.candidates():
        if any(abs(value - a) <= tol + abs(a) * 1e-12 for a in allowed):
            return True
    return False


def key_numbers(template: str) -> list[FoundNumber]:
    """The figures a message must keep: the numbers the template puts in bold (**8,967.34元**)."""
    return [n for span in re.findall(r"\*\*(.+?)\*\*", template) for n in extract_numbers(span)]


def missing_key_numbers(text: str, template: str) -> list[str]:
    """Bold figures of ``template`` that ``text`` does not state (in any rounding or unit)."""
    found = extract_numbers(text)
    missing = []
    for key in key_numbers(template):
        value = key.candidates()[0][0]
        if not any(_supported(n, [value]) for n in found if not (n.unit is None and n.value <= TRIVIAL_MAX)):
            missing.append(key.raw)
    return missing


def check_numbers(text: str, allowed: list[float]) -> NumberCheck:
    """Which numbers of ``text`` no tool result or user input supports."""
    found = extract_numbers(text)
    bad = [n.raw for n in found if not _supported(n, allowed)]
    return NumberCheck(ok=not bad, unsupported=bad, checked=len(found))

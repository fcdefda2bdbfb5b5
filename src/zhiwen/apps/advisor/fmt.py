r"""Number formatting for the role messages: 元 with thousands separators, 万元, percentages.

Example::

    >>> yuan(8967.344), wan(3_000_000), wan(1_128_243.98), pct(0.44837)
    ('8,967.34元', '300万元', '112.82万元', '44.84%')
    >>> join_md(["**标题**：", "- 一", "- 二", "结论。"])
    '**标题**：\n\n- 一\n- 二\n\n结论。'
"""

from __future__ import annotations

import re


def yuan(value: float) -> str:
    return f"{value:,.2f}元"


def wan(value: float, digits: int = 2) -> str:
    """元 → 万元, trailing zeros dropped (300万元, 112.82万元)."""
    text = f"{value / 10_000:,.{digits}f}".rstrip("0").rstrip(".")
    return f"{text}万元"


def wan_amount(value_wan: float) -> str:
    """A figure already in 万元 (the listings' total prices)."""
    text = f"{value_wan:,.2f}".rstrip("0").rstrip(".")
    return f"{text}万元"


def pct(ratio: float, digits: int = 2) -> str:
    text = f"{ratio * 100:.{digits}f}".rstrip("0").rstrip(".")
    return f"{text}%"


def unit_price(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}元/㎡"


_ITEM_RE = re.compile(r"^\s*(?:[-*] |\||\d+\. )")


def join_md(lines: list[str]) -> str:
    """Lines as markdown: list items and table rows stay together, every other line is its own
    paragraph (single newlines would merge them into one paragraph when rendered)."""
    out = ""
    for i, line in enumerate(lines):
        if i:
            together = bool(_ITEM_RE.match(line) and _ITEM_RE.match(lines[i - 1]))
            out += "\n" if together else "\n\n"
        out += line
    return out

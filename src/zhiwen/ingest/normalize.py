"""Text clean-up shared by every document loader: CJK radicals, invisible characters, broken lines.

PDFs made by Chrome/Skia and other tools often map glyphs to the Kangxi Radicals block
(U+2F00–U+2FD5, e.g. ⼈ U+2F08) or the CJK Radicals Supplement (U+2E80–U+2EFF, e.g. ⺠ U+2EA0)
instead of the ideographs 人 and 民. NFKC fixes the first block only, so the supplement gets the
Unicode ``EquivalentUnifiedIdeograph`` table below. Only those code points (and the CJK
compatibility ideographs) are touched: NFKC of the whole text would also turn the full-width
punctuation ，。（） into ASCII and change what users see.

:func:`join_lines` glues lines a PDF broke mid-sentence: no space between two CJK characters,
one space between two Latin words, a paragraph break kept after a sentence end.

Example::

    >>> normalize_text("中华⼈⺠共和国")
    '中华人民共和国'
    >>> join_lines(["第一条 为了规范出境入境管理，维护中华", "人民共和国的主权。"])
    '第一条 为了规范出境入境管理，维护中华人民共和国的主权。'
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

# Unicode EquivalentUnifiedIdeograph.txt, U+2E81..U+2EF3 (U+2E80 and U+2E9A have no equivalent)
_SUPPLEMENT_PAIRS = (
    "⺁厂 ⺂乛 ⺃乚 ⺄乙 ⺅亻 ⺆冂 ⺇𠘨 ⺈刀 ⺉刂 ⺊卜 ⺋㔾 ⺌小 ⺍小 ⺎兀 ⺏尣 ⺐尢 "
    "⺑𡯂 ⺒巳 ⺓幺 ⺔彑 ⺕𫜹 ⺖忄 ⺗心 ⺘扌 ⺙攵 ⺛旡 ⺜日 ⺝月 ⺞歺 ⺟母 ⺠民 ⺡氵 "
    "⺢氺 ⺣灬 ⺤爫 ⺥爫 ⺦丬 ⺧牛 ⺨犭 ⺩王 ⺪𤴔 ⺫目 ⺬示 ⺭礻 ⺮𥫗 ⺯糹 ⺰纟 ⺱罓 "
    "⺲罒 ⺳㓁 ⺴冗 ⺵𦉫 ⺶羊 ⺷𦍌 ⺸𦍋 ⺹耂 ⺺肀 ⺻聿 ⺼肉 ⺽𦥑 ⺾艹 ⺿艹 ⻀艹 ⻁虎 "
    "⻂衤 ⻃覀 ⻄西 ⻅见 ⻆角 ⻇𧢲 ⻈讠 ⻉贝 ⻊𧾷 ⻋车 ⻌辶 ⻍辶 ⻎辶 ⻏邑 ⻐钅 ⻑長 "
    "⻒镸 ⻓长 ⻔门 ⻕𨸏 ⻖阝 ⻗雨 ⻘青 ⻙韦 ⻚页 ⻛风 ⻜飞 ⻝食 ⻞𩙿 ⻟飠 ⻠饣 ⻡𩠐 "
    "⻢马 ⻣骨 ⻤鬼 ⻥鱼 ⻦鸟 ⻧卤 ⻨麦 ⻩黄 ⻪黾 ⻫斉 ⻬齐 ⻭歯 ⻮齿 ⻯竜 ⻰龙 ⻱龜 "
    "⻲亀 ⻳龟"
)
RADICAL_SUPPLEMENT: dict[str, str] = {pair[0]: pair[1:] for pair in _SUPPLEMENT_PAIRS.split()}


def _build_table() -> dict[int, str]:
    table: dict[int, str] = {ord(k): v for k, v in RADICAL_SUPPLEMENT.items()}
    for cp in list(range(0x2F00, 0x2FD6)) + list(range(0xF900, 0xFB00)):
        ch = chr(cp)
        nf = unicodedata.normalize("NFKC", ch)
        if nf != ch:
            table[cp] = nf
    # soft hyphen, zero-width space/joiners, BOM: invisible, but they split BM25 tokens
    for cp in (0x00AD, 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF):
        table[cp] = ""
    table[0x3000] = " "  # ideographic space
    table[0x00A0] = " "
    return table


_TABLE = _build_table()
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def normalize_text(text: str) -> str:
    """Radicals → ideographs, invisible characters dropped, control characters removed."""
    return _CONTROL.sub("", text.translate(_TABLE))


def is_cjk(ch: str) -> bool:
    cp = ord(ch)
    return (
        0x3400 <= cp <= 0x9FFF
        or 0xF900 <= cp <= 0xFAFF
        or 0x20000 <= cp <= 0x3FFFF
        or 0x3000 <= cp <= 0x303F  # CJK punctuation
        or 0xFF00 <= cp <= 0xFFEF  # full-width forms
    )


_SENTENCE_END = tuple("。！？；：!?;:")


def join_pair(left: str, right: str) -> str:
    """How to glue two wrapped lines: '' between CJK, ' ' between Latin words, '-' dropped."""
    if not left or not right:
        return left + right
    a, b = left[-1], right[0]
    if is_cjk(a) or is_cjk(b):
        return left + right
    if a == "-" and len(left) > 1 and left[-2].isalpha() and b.islower():
        return left[:-1] + right  # a hyphenated English word broken at the line end
    return f"{left} {right}"


def join_lines(lines: Iterable[str]) -> str:
    """Join the wrapped lines of one paragraph (see :func:`join_pair`)."""
    out = ""
    for line in lines:
        line = line.strip()
        if line:
            out = join_pair(out, line) if out else line
    return out


def ends_sentence(line: str) -> bool:
    return line.rstrip().endswith(_SENTENCE_END)


def squeeze_blank_lines(text: str) -> str:
    """At most one blank line in a row; no trailing spaces."""
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()

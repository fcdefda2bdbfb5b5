"""A knowledge base's own words: its dictionary, synonym groups and chunk keywords, in its tokenizer.

rjieba's dictionary is process-global, so a KB's words never go into it (two KBs must not see
each other's words). :class:`KBTokenizer` instead adds, after the jieba tokens, every
occurrence of a dictionary word (or synonym term) that jieba did not already emit whole — on
passages and queries alike — so ``知识库管理员`` matches ``知识库管理员`` even where jieba cuts
it. Without words it tokenizes exactly like :class:`~zhiwen.text.tokenizer.Tokenizer`.

* **Keywords** of a chunk join its tokens :data:`KEYWORD_REPEAT` times (a higher term frequency
  in the lexical branch; ``bench/bench_curation.py`` measured the weight).
* **Synonyms** expand a query in the lexical branch (:meth:`Lexicon.expand`): each term of a
  group found in the query adds the group's other terms, at :data:`SYNONYM_WEIGHT` of the term's
  weight where the store honours term weights (pseudo-relevance feedback weighs its terms), as
  plain tokens elsewhere. Passages are not
  expanded (no re-index when a group changes, beyond its terms becoming whole words).

The vocabulary is an immutable :class:`Lexicon` swapped in one assignment, so a search never
sees half a change.

Example::

    >>> tok = KBTokenizer()
    >>> tok.use(Lexicon.build(words=["知识库管理员"], groups=[["土豆", "马铃薯", "洋芋"]]))
    >>> "知识库管理员" in tok.tokenize("请联系知识库管理员")
    True
    >>> tok.lexicon.expand(["土豆", "炖"], [1.0, 0.6], weighted=True)
    (['土豆', '炖', '马铃薯', '洋芋'], [1.0, 0.6, 1.0, 1.0])
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from zhiwen.documents import Chunk
from zhiwen.text.tokenizer import Tokenizer

#: a keyword's tokens join its chunk's tokens this many times
KEYWORD_REPEAT = 3
#: a synonym's weight relative to the query term it came from (stores with term weights). 1.0
#: beat 0.5 and 0.3 on the recipes' colloquial questions and tied on the manual's
#: (``bench/bench_curation.py``); it is also what the stores without term weights do.
SYNONYM_WEIGHT = 1.0


class WordMatcher:
    """Every occurrence of a set of words in a (lower-cased) text; a regex finds the places
    where a word can start, a set lookup checks each length that starts there."""

    def __init__(self, words: Iterable[str]) -> None:
        self.words = frozenset(w.lower() for w in words if w)
        lengths: dict[str, set[int]] = {}
        for w in self.words:
            lengths.setdefault(w[0], set()).add(len(w))
        self._lengths = {c: sorted(ls, reverse=True) for c, ls in lengths.items()}
        starts = "".join(sorted(self._lengths))
        self._starts = re.compile(f"[{re.escape(starts)}]") if starts else None

    def __bool__(self) -> bool:
        return bool(self.words)

    def counts(self, text: str) -> Counter[str]:
        """How often each word occurs in ``text`` (overlapping occurrences count)."""
        out: Counter[str] = Counter()
        if self._starts is None:
            return out
        words, lengths, end = self.words, self._lengths, len(text)
        for m in self._starts.finditer(text):
            i = m.start()
            for n in lengths[m.group()]:
                if i + n <= end and (piece := text[i : i + n]) in words:
                    out[piece] += 1
        return out


@dataclass(frozen=True, slots=True)
class Lexicon:
    """One KB's dictionary words, synonym groups and chunk keywords (see the module docstring)."""

    words: tuple[str, ...] = ()
    groups: tuple[tuple[str, ...], ...] = ()
    keywords: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    matcher: WordMatcher = field(default_factory=lambda: WordMatcher(()))
    synonyms: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        words: Iterable[str] = (),
        groups: Iterable[Sequence[str]] = (),
        keywords: Mapping[str, Sequence[str]] | None = None,
    ) -> Lexicon:
        words = tuple(words)
        sets: tuple[tuple[str, ...], ...] = tuple(tuple(g) for g in groups)
        synonyms: dict[str, tuple[str, ...]] = {}
        for group in sets:
            terms = [t.lower() for t in group]
            for t in terms:
                synonyms[t] = tuple(o for o in terms if o != t)
        whole = [*words, *(t for g in sets for t in g)]
        return cls(
            words=words,
            groups=sets,
            keywords={k: tuple(v) for k, v in (keywords or {}).items() if v},
            matcher=WordMatcher(whole),
            synonyms=synonyms,
        )

    def with_keywords(self, keywords: Mapping[str, Sequence[str]]) -> Lexicon:
        """This lexicon with the keywords of these chunks replaced (an empty list: none)."""
        if all(tuple(self.keywords.get(cid, ())) == tuple(kw) for cid, kw in keywords.items()):
            return self
        kw = dict(self.keywords)
        for cid, words in keywords.items():
            if words:
                kw[cid] = tuple(words)
            else:
                kw.pop(cid, None)
        return Lexicon(self.words, self.groups, kw, self.matcher, self.synonyms)

    def whole_words(self, text: str, tokens: list[str]) -> list[str]:
        """``tokens`` plus the occurrences of dictionary words jieba did not emit whole."""
        found = self.matcher.counts(text.lower())
        if not found:
            return tokens
        have = Counter(t for t in tokens if t in found)
        extra = [w for w, n in found.items() for _ in range(n - have.get(w, 0))]
        return tokens + extra

    def expand(
        self, tokens: Sequence[str], weights: Sequence[float] | None, *, weighted: bool
    ) -> tuple[list[str], list[float] | None]:
        """The query ``tokens`` with the synonyms of its terms (see the module docstring);
        unchanged (the same weights) when no term has one."""
        syn = self.synonyms
        if not syn or not any(t in syn for t in tokens):
            return list(tokens), None if weights is None else list(weights)
        base = [1.0] * len(tokens) if weights is None else [float(w) for w in weights]
        out, out_w, seen = list(tokens), list(base), set(tokens)
        for term, w in zip(tokens, base, strict=True):
            for other in syn.get(term, ()):
                if other not in seen:
                    seen.add(other)
                    out.append(other)
                    out_w.append(w * SYNONYM_WEIGHT)
        return out, out_w if weighted else None


class KBTokenizer(Tokenizer):
    """A :class:`~zhiwen.text.tokenizer.Tokenizer` that knows its KB's :class:`Lexicon`."""

    def __init__(
        self, *, mode: str = "search", stopwords: Iterable[str] | None = None, user_dict: str | None = None
    ) -> None:
        super().__init__(mode=mode, stopwords=stopwords, user_dict=user_dict)
        self._lexicon = Lexicon()

    @property
    def lexicon(self) -> Lexicon:
        return self._lexicon

    def use(self, lexicon: Lexicon) -> None:
        self._lexicon = lexicon  # one assignment: a search sees the old or the new words

    def tokenize(self, text: str) -> list[str]:
        tokens = super().tokenize(text)
        lexicon = self._lexicon
        return lexicon.whole_words(text, tokens) if lexicon.matcher else tokens

    def keyword_tokens(self, keywords: Sequence[str]) -> list[str]:
        one = [t for kw in keywords for t in self.tokenize(kw)]
        return one * KEYWORD_REPEAT

    def chunk_tokens(self, chunk: Chunk, keywords: Sequence[str] | None = None) -> list[str]:
        """The tokens a chunk is indexed with: its ``embed_text``'s, then its keywords' (given,
        else the lexicon's for its id)."""
        tokens = self.tokenize(chunk.embed_text)
        kw = self._lexicon.keywords.get(chunk.id, ()) if keywords is None else keywords
        return tokens + self.keyword_tokens(kw) if kw else tokens

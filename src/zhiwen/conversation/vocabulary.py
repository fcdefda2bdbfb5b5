"""What counts as an entity in a conversation: names from the knowledge base and the apps.

A :class:`Vocabulary` maps names (document titles, dishes, countries, districts, 板块 …) to a
kind and finds them in text, leftmost-longest, with a character trie (a question is scanned in
microseconds however many names there are). :func:`kb_vocabulary` builds one from a KB's
document titles (cached per KB revision); apps add their gazetteers with ``|``.

**Look-alike pages.** Where sibling organisations' pages share their headings
(「东湖大学计算机学院本科生培养」「东湖大学外国语学院本科生培养」…), the whole title is no name a
user types: :func:`sibling_names` finds the names in front of the shared headings
(「东湖大学计算机学院」, and 「东湖大学」 in front of its colleges), kind :data:`SIBLING`.
:meth:`Vocabulary.parts_of` is what the titles say belongs to a name (its headings' words,
its majors: 本科生, 毕业生, 软件工程 …): a question that names only those is still about it.

Example::

    >>> v = Vocabulary({"北京大学法学院": "title", "西班牙": "country", "法国": "country"})
    >>> [(m.text, m.kind) for m in v.find("那西班牙和法国呢")]
    [('西班牙', 'country'), ('法国', 'country')]
    >>> (v | Vocabulary({"糖醋排骨": "dish"})).kind_of("糖醋排骨")
    'dish'
    >>> titles = [f"{u}{c}{h}" for u in ("东湖大学", "西岭大学", "南江大学")
    ...           for c in ("计算机学院", "外国语学院", "法学院") for h in ("概况", "本科生培养", "联系方式")]
    >>> sorted(sibling_names(titles))[:2]
    ['东湖大学', '东湖大学外国语学院']
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import rjieba

from zhiwen.cache import LRU
from zhiwen.documents import Document

#: names shorter than this are too ambiguous to carry a conversation (单字 titles, "法")
MIN_NAME_CHARS = 2
#: a title's decorations that a user never types: 《》, a date or edition in brackets, 的做法
_DECORATION = re.compile(r"[《》「」“”\"]|[（(][^）)]*[）)]|的做法$|做法$")
_END = object()
#: the kind of a KB's document titles, and of the sibling names found in front of their headings
TITLE = "title"
SIBLING = "sibling"
#: a title prefix is a sibling's name when it is followed by at least this many headings, each
#: of them shared by at least this many names (a grid of look-alike pages, not one family of titles)
MIN_SIBLINGS = 3
#: what separates a title's parts (「本科生培养 - 计算机学院」「东湖大学｜概况」): never inside a name
#: a prefix that ends in a number or a date (「东湖大学2021年」 in front of news titles) is no name
_NUMBER_END = re.compile(r"[0-9０-９]+[年月日号期届]?$")
_SEPARATORS = frozenset(" \t-_|｜·•—–/／:：,，、")


@dataclass(frozen=True, slots=True)
class Mention:
    text: str
    kind: str
    start: int
    end: int


class Vocabulary:
    """Entity names with their kind; ``find`` returns non-overlapping leftmost-longest mentions."""

    def __init__(self, names: Mapping[str, str] | Iterable[str] = (), *, kind: str = "entity") -> None:
        pairs = names.items() if isinstance(names, Mapping) else ((n, kind) for n in names)
        self._kinds: dict[str, str] = {}
        self._trie: dict[Any, Any] = {}
        self._parts: dict[str, frozenset[str]] = {}  # name → parts_of(name), until a name is added
        self._children: dict[str, Vocabulary] = {}  # parent → children_of(parent), likewise
        for name, name_kind in pairs:
            self.add(name, name_kind)

    def add(self, name: str, kind: str = "entity") -> None:
        name = name.strip()
        if len(name) < MIN_NAME_CHARS or name in self._kinds:
            return
        self._kinds[name] = kind
        self._parts.clear()
        self._children.clear()
        node = self._trie
        for ch in name:
            node = node.setdefault(ch, {})
        node[_END] = name

    def __len__(self) -> int:
        return len(self._kinds)

    def __contains__(self, name: object) -> bool:
        return name in self._kinds

    def __or__(self, other: Vocabulary) -> Vocabulary:
        merged = Vocabulary(self._kinds)
        for name, kind in other._kinds.items():
            merged.add(name, kind)
        return merged

    def kind_of(self, name: str) -> str | None:
        return self._kinds.get(name)

    def parts_of(self, name: str) -> frozenset[str]:
        """The words the titles that contain ``name`` add to it: its headings and sub-units.

        >>> v = Vocabulary({"东湖大学计算机学院": SIBLING, "东湖大学计算机学院本科生培养": TITLE,
        ...                 "东湖大学计算机学院软件工程专业介绍": TITLE})
        >>> sorted(v.parts_of("东湖大学计算机学院"))
        ['专业', '介绍', '培养', '本科生', '软件工程']
        """
        found = self._parts.get(name)
        if found is None:
            own = set(rjieba.cut(name))
            words = {
                w
                for title, kind in self._kinds.items()
                if kind == TITLE and name in title and title != name
                for w in rjieba.cut(title.replace(name, " "))
            }
            found = frozenset(w for w in words if len(w.strip()) >= MIN_NAME_CHARS and w not in own)
            self._parts[name] = found
        return found

    def sibling_in(self, text: str) -> str | None:
        """The longest sibling name ``text`` starts with (a title's organisation), if any."""
        siblings = [n for n in self._prefixes(text) if self._kinds[n] == SIBLING]
        return siblings[-1] if siblings else None

    def parents_of(self, name: str) -> list[str]:
        """The sibling names ``name`` starts with, longest first, itself included when it is one
        (「东湖大学计算机学院」 → itself, then 「东湖大学」)."""
        return [n for n in reversed(self._prefixes(name)) if self._kinds[n] == SIBLING]

    def children_of(self, parent: str) -> Vocabulary:
        """The part-names of the sibling names under ``parent``: what follows it in each
        (「东湖大学」 → 外国语学院 for 「东湖大学外国语学院」), as a vocabulary to find them with.

        >>> v = Vocabulary({"东湖大学": SIBLING, "东湖大学外国语学院": SIBLING, "东湖大学法学院": SIBLING})
        >>> [m.text for m in v.children_of("东湖大学").find("那外国语学院呢")]
        ['外国语学院']
        """
        found = self._children.get(parent)
        if found is None:
            under = (n for n, k in self._kinds.items() if k == SIBLING and n.startswith(parent))
            found = Vocabulary({n[len(parent) :]: SIBLING for n in under})
            self._children[parent] = found
        return found

    def _prefixes(self, text: str) -> list[str]:
        """Every name ``text`` starts with, shortest first."""
        node: dict[Any, Any] | None = self._trie
        out = []
        for ch in text:
            node = node.get(ch) if node is not None else None
            if node is None:
                break
            if _END in node:
                out.append(node[_END])
        return out

    def _longest_at(self, text: str, start: int) -> str | None:
        node: dict[Any, Any] | None = self._trie
        found = None
        for ch in text[start:]:
            node = node.get(ch) if node is not None else None
            if node is None:
                break
            found = node.get(_END, found)
        return found

    def find(self, text: str) -> list[Mention]:
        out: list[Mention] = []
        i = 0
        while i < len(text):
            name = self._longest_at(text, i)
            if name is None:
                i += 1
                continue
            out.append(Mention(name, self._kinds[name], i, i + len(name)))
            i += len(name)
        return out


def sibling_names(titles: Iterable[str], *, min_siblings: int = MIN_SIBLINGS) -> set[str]:
    """The names in front of the headings that sibling titles share (see the module docstring).

    A title is cut into words (jieba; a separator always cuts); a prefix is a name when it is
    followed by ``min_siblings`` headings that at least ``min_siblings`` prefixes are followed
    by too, and its headings do not all start with the same character (「东湖」 is always followed
    by 「大学…」, however jieba cuts it: the name goes on). Titles of one family
    (「中华人民共和国…法」) share no headings: they give no names.
    """
    cut = [_title_words(t) for t in titles]
    followers: dict[tuple[str, ...], set[tuple[str, ...]]] = defaultdict(set)
    leaders: dict[tuple[str, ...], set[tuple[str, ...]]] = defaultdict(set)
    for words in cut:
        for i in range(1, len(words)):
            followers[words[:i]].add(words[i:])
            leaders[words[i:]].add(words[:i])
    names = set()
    for prefix, tails in followers.items():
        headings = [t for t in tails if len(leaders[t]) >= min_siblings]
        if len(headings) >= min_siblings and len({t[0][0] for t in headings}) > 1:
            name = "".join(prefix).strip("".join(_SEPARATORS))
            if len(name) >= MIN_NAME_CHARS and not _NUMBER_END.search(name):
                names.add(name)
    return names


def _title_words(title: str) -> tuple[str, ...]:
    """A title's words, a separator run as one word of its own (a cut no name spans)."""
    words: list[str] = []
    for word in rjieba.cut(_DECORATION.sub("", title).strip()):
        if word and all(ch in _SEPARATORS for ch in word):
            if words and words[-1] != " ":
                words.append(" ")
        else:
            words.append(word)
    return tuple(words)


def title_names(title: str) -> list[str]:
    """The form a user types of a title: without its decorations (《》, a date, 的做法)."""
    plain = _DECORATION.sub("", title).strip()
    return [plain] if len(plain) >= MIN_NAME_CHARS else [title.strip()] if title.strip() else []


class TitledStore(Protocol):
    def doc_ids(self) -> set[str]: ...


class TitledCollection(Protocol):
    """What :func:`kb_vocabulary` needs of a knowledge base."""

    name: str
    path: Path  # the KB's folder: two homes may hold a KB of the same name and revision

    @property
    def revision(self) -> int: ...

    @property
    def store(self) -> TitledStore: ...

    def get_parents(self, ids: Sequence[str]) -> list[Document]: ...


_KB_VOCABULARIES: LRU[Vocabulary] = LRU(16, "conversation_vocabulary")


def kb_vocabulary(kb: TitledCollection) -> Vocabulary:
    """The KB's document titles as entities (cached until the KB changes)."""
    key = (str(kb.path), kb.revision)
    cached = _KB_VOCABULARIES.get(key)
    if cached is not None:
        return cached
    titles = [doc.title or "" for doc in kb.get_parents(sorted(kb.store.doc_ids()))]
    vocabulary = titles_vocabulary(titles)
    _KB_VOCABULARIES.put(key, vocabulary)
    return vocabulary


def titles_vocabulary(titles: Iterable[str]) -> Vocabulary:
    """Titles as :data:`TITLE` names, and the :func:`sibling_names` in front of their headings.

    >>> titles_vocabulary(["红烧肉的做法", "糖醋排骨"]).kind_of("红烧肉")
    'title'
    """
    titles = list(titles)
    vocabulary = Vocabulary()
    for name in sorted(sibling_names(titles)):
        vocabulary.add(name, SIBLING)
    for title in titles:
        for name in title_names(title):
            vocabulary.add(name, TITLE)
    return vocabulary

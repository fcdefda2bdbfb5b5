"""What counts as an entity in a conversation: names from the knowledge base and the apps.

A :class:`Vocabulary` maps names (document titles, dishes, countries, districts, 板块 …) to a
kind and finds them in text, leftmost-longest, with a character trie (a question is scanned in
microseconds however many names there are). :func:`kb_vocabulary` builds one from a KB's
document titles (cached per KB revision); apps add their gazetteers with ``|``.

Example::

    >>> v = Vocabulary({"北京大学法学院": "title", "西班牙": "country", "法国": "country"})
    >>> [(m.text, m.kind) for m in v.find("那西班牙和法国呢")]
    [('西班牙', 'country'), ('法国', 'country')]
    >>> (v | Vocabulary({"糖醋排骨": "dish"})).kind_of("糖醋排骨")
    'dish'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from zhiwen.cache import LRU
from zhiwen.documents import Document

#: names shorter than this are too ambiguous to carry a conversation (单字 titles, "法")
MIN_NAME_CHARS = 2
#: a title's decorations that a user never types: 《》, a date or edition in brackets, 的做法
_DECORATION = re.compile(r"[《》「」“”\"]|[（(][^）)]*[）)]|的做法$|做法$")
_END = object()


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
        for name, name_kind in pairs:
            self.add(name, name_kind)

    def add(self, name: str, kind: str = "entity") -> None:
        name = name.strip()
        if len(name) < MIN_NAME_CHARS or name in self._kinds:
            return
        self._kinds[name] = kind
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


def title_names(title: str) -> list[str]:
    """The form a user types of a title: without its decorations (《》, a date, 的做法)."""
    plain = _DECORATION.sub("", title).strip()
    return [plain] if len(plain) >= MIN_NAME_CHARS else [title.strip()] if title.strip() else []


class TitledStore(Protocol):
    def doc_ids(self) -> set[str]: ...


class TitledCollection(Protocol):
    """What :func:`kb_vocabulary` needs of a knowledge base."""

    name: str

    @property
    def revision(self) -> int: ...

    @property
    def store(self) -> TitledStore: ...

    def get_parents(self, ids: Sequence[str]) -> list[Document]: ...


_KB_VOCABULARIES: LRU[Vocabulary] = LRU(16, "conversation_vocabulary")


def kb_vocabulary(kb: TitledCollection) -> Vocabulary:
    """The KB's document titles as entities (cached until the KB changes)."""
    key = (kb.name, kb.revision)
    cached = _KB_VOCABULARIES.get(key)
    if cached is not None:
        return cached
    vocabulary = Vocabulary()
    for doc in kb.get_parents(sorted(kb.store.doc_ids())):
        for name in title_names(doc.title or ""):
            vocabulary.add(name, "title")
    _KB_VOCABULARIES.put(key, vocabulary)
    return vocabulary

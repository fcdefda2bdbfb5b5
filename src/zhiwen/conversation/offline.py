"""The offline condenser: a follow-up question made standalone by rules, no model.

Rules, tried in order on the question; the first that applies wins, and a question none
applies to passes unchanged (a standalone question is never touched):

- **sibling**: 「那外国语学院呢？」「外国语学院的院长是谁？」 after 「东湖大学计算机学院…」 — a
  part-name whose full name under the topic's parent is a sibling name of the vocabulary
  (「东湖大学外国语学院」: :meth:`Vocabulary.children_of`) switches to it and keeps the parent.
- **ordinal**: 「那第二个呢？」「第三个专业…」「最后一个」 — an item of the list the conversation was
  about (:func:`~zhiwen.conversation.slots.listed_items` of an earlier answer: the one holding
  the item the last question named, else the newest) takes the ordinal's place, and the rules
  below complete it. An ordinal is never a name: with no such list, or one too short, the
  question stays as asked (an LLM condense step may still read it).

0. **slot**: 「那2022年呢」「历史类的呢」 — a follow-up that only changes a year or a word of a kind
   (…类, …省, …专业: :mod:`~zhiwen.conversation.slots`) asks the previous question again with
   that part changed: 「2021年四川省物理类金融学类最低分」 → 「2022年四川省物理类金融学类最低分」.
1. **substitution** (ellipsis): 「那西班牙呢？」 — a short question that names a new entity and ends
   in 呢/怎么样 takes the previous question and puts the new entity in the slot of the old one of
   the same kind (or of the topic): 「中国公民去泰国需要签证吗」 → 「中国公民去西班牙需要签证吗」.
2. **anaphora**: 「它在哪个校区？」「这道菜要炖多久？」「该学院开设了哪些课程？」 — a pronoun or a
   demonstrative phrase is replaced by the conversation's topic.
3. **generic** and **part** (look-alike pages, :meth:`Vocabulary.parts_of`): a bare generic noun
   that the topic ends with stands for it — 「学院有几个系？」 → 「东湖大学计算机学院有几个系？」;
   a question that names only what the KB's titles give the topic (its headings' words, its
   majors: 「本科生…」「毕业生…」「软件工程专业…」) and no other entity gets the topic in front.
4. **subject**: 「开设了哪些课程？」 — a short question that names nothing (no entity of the
   vocabulary, no rare word) gets the topic as its subject.

The **topic** is the entity the conversation is about: the last one a user question named (an
earlier follow-up resolved first; a title's sibling name rather than the whole title), else one
named in the last answer, else — with no vocabulary hit at all — the rarest word of the last
question (jieba's IDF: names are rare). A question that names only the topic's parts stays on it.

The **focus** (``Standalone.focus``) is the topic when it is a name of the vocabulary and the
question names no other entity: retrieval favours the documents whose title names it
(:mod:`zhiwen.retrieve.focus`). It is dropped as soon as the question names another entity,
and there is none without a conversation.

Example::

    >>> c = OfflineCondenser(Vocabulary({"北京大学法学院": "title", "泰国": "country", "西班牙": "country"}))
    >>> history = [{"role": "user", "content": "北京大学法学院是哪年成立的？"}]
    >>> c.condense(history, "它在哪个校区？").question
    '北京大学法学院在哪个校区？'
    >>> c.condense([{"role": "user", "content": "中国公民去泰国需要签证吗？"}], "那西班牙呢？").question
    '中国公民去西班牙需要签证吗？'
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import jieba
import rjieba

from zhiwen.answer.scoring import term_weight
from zhiwen.conversation.model import Standalone, message_text
from zhiwen.conversation.slots import Ordinal, listed_items, ordinal_in, slot_followup
from zhiwen.conversation.vocabulary import SIBLING, TITLE, Mention, Vocabulary

#: a question longer than this (in letters and characters) is taken to name its own subject
SHORT_QUESTION_CHARS = 12
#: a word this specific (jieba IDF; unknown words score 12) names the question's own subject
SPECIFIC_IDF = 10.0
#: a character this common (要, 是, 的 …) makes an unknown word a phrase (要炖), not a name
COMMON_CHAR_IDF = 5.0
#: turns of the history the topic is looked for in (the newest ones)
WINDOW_TURNS = 6
#: a noun at least this rare (jieba IDF) can be a topic when no name is mentioned (西安, not 好看)
TOPIC_NOUN_IDF = 6.5
#: an answer is about one entity when its opening characters name exactly one
ANSWER_FOCUS_CHARS = 200
#: 「那X呢」: what X may hold besides a name (的做法, 的话 …) / at most, when it names nothing known
ELLIPSIS_EXTRA_CHARS = 4
ELLIPSIS_BARE_CHARS = 6

_PUNCT = re.compile(r"[\s？?！!。．.，,、；;：:“”\"'‘’（）()《》]+")
_ELLIPSIS = re.compile(
    r"^(?:那么|那|如果是|要是|换成|改成|还有)?(?P<x>.{1,16}?)(?:的话)?(?P<end>呢|怎么样|如何|怎样)[？?！!。.\s]*$"
)
#: what makes a short sentence a question: a question mark, a question word or particle
ASKS = re.compile(
    r"[？?]|什么|哪|多少|多久|多长|几|怎么|怎样|如何|为什么|为何|是否|吗|呢|有没有|能不能|可不可以|要不要"
)
_TITLE = re.compile(r"《[^》]+》")
_PRONOUN = re.compile(r"它们|它|他们|她们|其(?![他实中次余间后前它一])|这里|那里|这儿|那儿")
_DEMONSTRATIVE = re.compile(
    r"(?:这|那|该|此|本)(?:个|些|种|家|所|位|部|本|道|项|条|款|门|座|件|套|只|类|张|份|国)?"
)
#: the noun after a demonstrative: up to 4 characters, ending where the predicate starts
_NOUN_AFTER = re.compile(r"[\u4e00-\u9fffA-Za-z0-9]{1,4}")
#: what may come before a question's subject (「请问学院…」「那学院…」)
_OPENING = re.compile(r"^(?:请问|那么|那|还有|另外|再问一下)[，,\s]*")
#: characters a predicate starts with (这道菜|要…, 该学院|开设…): the demonstrative's noun ends there
#: what may end a question after a bare ordinal (「最后一个吧」)
_TRAILING = frozenset(("呢", "吧", "啊", "呀", "的呢", "怎么样", "如何", "的话呢"))
_PREDICATE_START = frozenset(
    "要是在有会能需怎什如多哪可应的了吗呢么和与跟都也还就被把让给对从到为向开何几样般时次些种里儿边"
)


@dataclass(frozen=True, slots=True)
class _State:
    """What the earlier turns established: the last standalone question and the topic."""

    question: str | None = None
    mentions: tuple[Mention, ...] = ()
    topic: str | None = None
    listings: tuple[str, ...] = ()  # the earlier answers that enumerate items, oldest first


def _content_chars(text: str) -> int:
    return len(_PUNCT.sub("", text))


class OfflineCondenser:
    """History + question → :class:`Standalone`, by the three rules of the module docstring."""

    def __init__(self, vocabulary: Vocabulary | None = None, *, window: int = WINDOW_TURNS) -> None:
        self.vocabulary = vocabulary or Vocabulary()
        self.window = window

    # -- the topic ------------------------------------------------------------------------------
    def _rarest_noun(self, text: str) -> str | None:
        """The rarest noun of ``text`` (jieba's dictionary tags; names are rare), if rare enough."""
        nouns = [w for w in rjieba.cut(_PUNCT.sub(" ", text)) if len(w) >= 2 and _is_noun(w)]
        best = max(nouns, key=term_weight, default=None)
        return best if best is not None and term_weight(best) >= TOPIC_NOUN_IDF else None

    def _focused(self, answer: str | None) -> str | None:
        """The one entity an answer is about (it opens with exactly one name), if any."""
        named = {m.text for m in self.vocabulary.find(answer[:ANSWER_FOCUS_CHARS])} if answer else set()
        return named.pop() if len(named) == 1 else None

    def _topic_of(self, state: _State, resolved: Standalone, answer: str | None) -> str | None:
        """What a user turn that names no entity leaves the conversation about."""
        if resolved.changed:
            return resolved.topic
        if state.topic is not None and self._keeps(state.topic, resolved.question):
            return state.topic  # a turn without a subject of its own stays on topic
        return self._focused(answer) or self._rarest_noun(resolved.question) or state.topic

    def _advance(self, state: _State, question: str, answer: str | None) -> _State:
        """The state after one earlier user turn (resolved against the turns before it)."""
        resolved = self._resolve(state, question) or Standalone.unchanged(question)
        mentions = tuple(self.vocabulary.find(resolved.question))
        topic = self._named(mentions[0]) if mentions else self._topic_of(state, resolved, answer)
        listings = (*state.listings, answer) if answer and listed_items(answer) else state.listings
        return _State(resolved.question, mentions, topic, listings)

    def _named(self, mention: Mention) -> str:
        """The entity a mention names: a whole title's sibling name (its organisation), else itself."""
        if mention.kind == TITLE:
            return self.vocabulary.sibling_in(mention.text) or mention.text
        return mention.text

    def _state(self, history: Sequence[Mapping[str, Any]]) -> _State:
        recent = [m for m in history if m.get("role") in ("user", "assistant")][-2 * self.window :]
        state = _State()
        for i, message in enumerate(recent):
            if message.get("role") != "user":
                continue
            text = message_text(message)
            if not text:
                continue
            nxt = recent[i + 1] if i + 1 < len(recent) else None
            answer = message_text(nxt) if nxt is not None and nxt.get("role") == "assistant" else None
            state = self._advance(state, text, answer)
        return state

    # -- the rules ------------------------------------------------------------------------------
    def _sibling(self, state: _State, question: str) -> Standalone | None:
        """A part-name (外国语学院) whose full name under a parent of the topic (东湖大学) is a
        sibling name: the question switches to that sibling and keeps the parent."""
        if not state.topic:
            return None
        named = self.vocabulary.find(question)
        for parent in self.vocabulary.parents_of(state.topic):
            if parent in question:
                return None  # the question names the parent itself
            for child in self.vocabulary.children_of(parent).find(question):
                if not any(m.start < child.end and child.start < m.end for m in named):
                    return self._switched(state, question, child, parent)
        return None

    def _switched(self, state: _State, question: str, child: Mention, parent: str) -> Standalone:
        full = parent + child.text
        match = _ELLIPSIS.match(question.strip())
        if match and match.group("x").strip() == child.text and state.topic not in (None, parent):
            base = self._asked_about(state, state.topic)  # 「那外国语学院呢？」: the same asked of it
            if base is not None and state.topic is not None:
                rewritten = base.replace(state.topic, full, 1)
                return Standalone(rewritten, question, "sibling", topic=full, replaced=state.topic)
        rewritten = question[: child.start] + full + question[child.end :]
        return Standalone(rewritten, question, "sibling", topic=full, replaced=child.text)

    def _ordinal(self, state: _State, question: str, ordinal: Ordinal) -> Standalone:
        """The list item an ordinal points to in its place (see the module docstring)."""
        start = question.index(ordinal.phrase)
        rest = question[start + len(ordinal.phrase) :]
        noun = _noun_after(rest)  # 第二个专业: a list of 专业
        picked = _picked(state, ordinal, noun)
        if picked is None:
            return Standalone.unchanged(question)  # never a name: asked as it is
        item, current = picked
        match = _ELLIPSIS.match(question.strip())
        bare = match is not None and match.group("x").strip().removesuffix("的") == ordinal.phrase
        at = _item_at(state, current) if current is not None else None
        if bare and current is not None and at is not None and state.question is not None:
            # the same asked of the other item
            rewritten = state.question[:at] + item + state.question[at + len(current) :]
            return Standalone(rewritten, question, "ordinal", topic=self._topic_in(rewritten, item, state),
                              replaced=ordinal.phrase)  # fmt: skip
        if len(noun) >= 2 and item.endswith(noun):
            rest = rest[len(noun) :]  # 第二个学院 → 外国语学院, not 外国语学院学院
        rewritten = question[:start] + item + rest
        for rule in (self._sibling, self._anaphora, self._part, self._subject):
            found = rule(state, rewritten)
            if found is not None:
                return replace(found, original=question, method="ordinal", replaced=ordinal.phrase)
        topic = self._topic_in(rewritten, item, state)
        return Standalone(rewritten, question, "ordinal", topic=topic, replaced=ordinal.phrase)

    def _topic_in(self, rewritten: str, item: str, state: _State) -> str | None:
        """The entity the item names in the rewritten question, else the conversation's topic."""
        named = [self._named(m) for m in self.vocabulary.find(rewritten) if item in m.text]
        return named[0] if named else state.topic

    def _slot(self, state: _State, question: str) -> Standalone | None:
        """「那2022年呢」「历史类的呢」: the previous question with one slot changed
        (:mod:`~zhiwen.conversation.slots`); a follow-up naming an entity of the vocabulary is
        the substitution rule's (it knows which entity it replaces)."""
        if state.question is None or self.vocabulary.find(question):
            return None
        found = slot_followup(state.question, question)
        if found is None:
            return None
        rewritten, old = found
        return Standalone(rewritten, question, "slot", topic=state.topic, replaced=old)

    def _substitution(self, state: _State, question: str) -> Standalone | None:
        match = _ELLIPSIS.match(question.strip())
        if match is None or state.question is None:
            return None
        new = match.group("x").strip()
        named = self.vocabulary.find(new)
        if named:
            new_mention = named[0]
            if len(new) - len(new_mention.text) > ELLIPSIS_EXTRA_CHARS:
                return None  # more than a name: a question of its own (…没有答案时会怎样？)
            new, kind = new_mention.text, new_mention.kind
            same_kind = [m for m in state.mentions if m.kind == kind and m.text != new]
            old = same_kind[0].text if same_kind else state.topic
        elif match.group("end") == "呢" and len(new) <= ELLIPSIS_BARE_CHARS and not ASKS.search(new):
            old = state.topic
        else:
            return None
        base = self._asked_about(state, old)
        if not new or base is None or old is None or new == old:
            return None
        return Standalone(base.replace(old, new, 1), question, "substitution", topic=new, replaced=old)

    def _asked_about(self, state: _State, old: str | None) -> str | None:
        """The last question that names ``old`` — with a sibling topic in front when it was asked
        without it (「录取最低分…？」「那西岭大学计算机学院呢？」 asks the same of the other)."""
        if not old or state.question is None:
            return None
        if old in state.question:
            return state.question
        if old == state.topic and self.vocabulary.kind_of(old) == SIBLING:
            return old + state.question
        return None

    def _anaphora(self, state: _State, question: str) -> Standalone | None:
        if not state.topic or self.vocabulary.find(question):
            return None
        phrase = self._anaphor(question)
        if phrase is None:
            return None
        start = question.index(phrase)
        rewritten = question[:start] + state.topic + question[start + len(phrase) :]
        return Standalone(rewritten, question, "anaphora", topic=state.topic, replaced=phrase)

    @staticmethod
    def _anaphor(question: str) -> str | None:
        """The first pronoun or demonstrative phrase (with its noun) that points back, if any.

        Only at a word boundary (因此, 尤其 are words of their own), and a sentence-initial bare
        那 is "then" (那如果…), not "that".
        """
        starts = _word_starts(question)
        found: list[tuple[int, str]] = []
        for match in _DEMONSTRATIVE.finditer(question):
            word = match.group()
            token = starts.get(match.start(), "")
            if not token or len(token) > len(word) or (match.start() == 0 and word == "那"):
                continue  # inside a word (本地, 本科生, 这一, 这样) or "then" (那如果…)
            noun = _noun_after(question[match.end() :])
            if noun or len(word) > 1:
                found.append((match.start(), word + noun))
        found += [(m.start(), m.group()) for m in _PRONOUN.finditer(question) if m.start() in starts]
        return min(found)[1] if found else None

    def _part(self, state: _State, question: str) -> Standalone | None:
        """A bare generic noun the topic ends with (学院 → 东湖大学计算机学院), or a question that
        names the topic's parts (本科生, 软件工程专业 …) and no other entity: the topic put in."""
        topic = state.topic
        if not topic or topic not in self.vocabulary or topic in question or self.vocabulary.find(question):
            return None
        if not self._keeps(topic, question):
            return None
        head = _OPENING.match(question)
        start = head.end() if head else 0
        word = next(iter(rjieba.cut(question[start:])), "")
        if len(word) >= 2 and topic.endswith(word) and _is_noun(word) and not names_something(word):
            # the question opens with the noun the topic ends with: 学院 stands for 东湖大学计算机学院
            # (「…有什么规定？」 ends with one: an object, not the topic)
            rewritten = question[:start] + topic + question[start + len(word) :]
            return Standalone(rewritten, question, "generic", topic=topic, replaced=word)
        parts = self.vocabulary.parts_of(topic)
        named = [w for w in rjieba.cut(question) if w in parts]
        if not named:
            return None
        return Standalone(topic + question.strip(), question, "part", topic=topic, replaced=named[0])

    def _keeps(self, topic: str, question: str) -> bool:
        """A question that names no vocabulary entity keeps the topic when it names no subject of
        its own, names only the topic's parts, or the topic is a sibling (among look-alike pages
        only another sibling's name can change it)."""
        kind = self.vocabulary.kind_of(topic)
        if kind == SIBLING or not self._names_subject(question):
            return True
        return kind is not None and self.stays_on(topic, question)  # parts: a name's own titles

    def stays_on(self, topic: str, question: str) -> bool:
        """Every specific word of ``question`` is the topic's or one of its parts."""
        parts = self.vocabulary.parts_of(topic)
        words = rjieba.cut(_PUNCT.sub(" ", question.replace(topic, " ")))
        return all(w in parts or w in topic for w in words if names_something(w))

    def focus_of(self, question: str, topic: str | None) -> tuple[str, ...]:
        """``(topic,)`` when the (standalone) question is about the topic and names no other
        entity of the vocabulary; else nothing (see the module docstring)."""
        if not topic or topic not in self.vocabulary:
            return ()
        if any(topic not in m.text for m in self.vocabulary.find(question)):
            return ()  # another entity (a sibling, the topic's parent, another title)
        return (topic,) if topic in question or self._keeps(topic, question) else ()

    def _subject(self, state: _State, question: str) -> Standalone | None:
        if not state.topic or _content_chars(question) > SHORT_QUESTION_CHARS:
            return None
        if not ASKS.search(question):
            return None  # a remark (「其实我不太确定」) has no subject to fill
        if state.topic in question or self._names_subject(question):
            return None
        return Standalone(state.topic + question.strip(), question, "subject", topic=state.topic)

    def _names_subject(self, question: str) -> bool:
        """The question names its own subject: a vocabulary name, a 《title》 or a specific word."""
        if self.vocabulary.find(question) or _TITLE.search(question):
            return True
        return any(names_something(w) for w in rjieba.cut(_PUNCT.sub(" ", question)))

    def _resolve(self, state: _State, question: str) -> Standalone | None:
        ordinal = ordinal_in(question)
        if ordinal is not None and _refers(question, ordinal):
            return self._ordinal(state, question, ordinal)
        rules = (self._sibling, self._slot, self._substitution, self._anaphora, self._part, self._subject)
        for rule in rules:
            found = rule(state, question)
            if found is not None:
                return found
        return None

    # -- the stage ------------------------------------------------------------------------------
    def condense(self, history: Sequence[Mapping[str, Any]], question: str) -> Standalone:
        """The standalone form of ``question`` after ``history`` (OpenAI messages)."""
        if not any(m.get("role") == "user" for m in history):
            return Standalone.unchanged(question)
        state = self._state(history)
        found = self._resolve(state, question) or Standalone(question, question, topic=state.topic)
        return replace(found, focus=self.focus_of(found.question, found.topic))


def _picked(state: _State, ordinal: Ordinal, noun: str) -> tuple[str, str | None] | None:
    """(the item ``ordinal`` points to, the item the last question named) in the list the
    conversation is about: the newest that holds an item the last question named, else the
    newest; None when there is no list or it has no such item."""
    lists = [tuple(listed_items(answer, of=noun)) for answer in state.listings]
    for items in reversed(lists):
        named = [i for i in items if _item_at(state, i) is not None]
        if named:
            current = max(named, key=len)
            index = items.index(current) + ordinal.step if ordinal.step else ordinal.index
            return _at(items, index, current)
    if ordinal.step or not lists:
        return None  # 上一个/下一个 of what?
    return _at(lists[-1], ordinal.index, None)


def _refers(question: str, ordinal: Ordinal) -> bool:
    """The ordinal points back: it ends the question (「那第二个呢？」「说说最后一个」), or opens it
    and is followed by its noun or the predicate (「第二个专业…」「第三个的院长…」「第二道怎么做」) —
    not 「谁是第一个登上月球的人」「第一个登上月球的人是谁」, which ask about a first of their own."""
    start = question.index(ordinal.phrase)
    rest = _PUNCT.sub("", question[start + len(ordinal.phrase) :])
    if not rest or rest in _TRAILING:
        return True
    head = _OPENING.match(question)
    if start != (head.end() if head else 0):
        return False
    word = next(iter(rjieba.cut(rest)), "")
    return rest[0] in _PREDICATE_START or _is_noun(word)


def _item_at(state: _State, item: str) -> int | None:
    """Where the last question names ``item``: whole, or as the end of a longer name (计算机学院
    in 东湖大学计算机学院), not cut off inside one (计算机科学与技术 of 计算机科学与技术学院)."""
    for m in re.finditer(re.escape(item), state.question or ""):
        if not any(n.start < m.end() < n.end for n in state.mentions):
            return m.start()
    return None


def _at(items: tuple[str, ...], index: int, current: str | None) -> tuple[str, str | None] | None:
    position = index + len(items) if index < 0 else index
    return (items[position], current) if 0 <= position < len(items) else None


def _noun_after(text: str) -> str:
    run = _NOUN_AFTER.match(text)
    noun = ""
    for ch in run.group() if run else "":
        if ch in _PREDICATE_START:
            break
        noun += ch
    return noun


def names_something(word: str) -> bool:
    """A specific word (校区 is not, 知识库 is), or an unknown one that is no phrase (要炖)."""
    word = word.strip()
    if len(word) < 2:
        return False
    weight = term_weight(word)
    if weight >= 12.0:  # unknown to the IDF table: a name, unless a common character makes it a phrase
        return min(term_weight(ch) for ch in word) >= COMMON_CHAR_IDF
    return weight >= SPECIFIC_IDF


def _word_starts(text: str) -> dict[int, str]:
    """Each word of ``text`` (jieba) by the offset it starts at."""
    starts, offset = {}, 0
    for word in rjieba.cut(text):
        starts[offset] = word
        offset += len(word)
    return starts


@lru_cache(maxsize=1)
def _noun_tags() -> frozenset[str]:
    """The words jieba's dictionary tags as nouns (n, nr, ns, nt, nz …), read once."""
    path = Path(jieba.__file__).parent / "dict.txt"
    nouns = set()
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            parts = line.split()
            if len(parts) == 3 and parts[2].startswith("n"):
                nouns.add(parts[0])
    return frozenset(nouns)


def _is_noun(word: str) -> bool:
    return word in _noun_tags()

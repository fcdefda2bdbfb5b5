"""Answers of the policy app: the table rows first, date-aware notes, citations ``[n]`` always.

* **Table rows** — for each country the question names, its row of the visa-free table (fetched
  by id ``country/<ISO2>`` from the visa KB, not guessed by search). A country without a row
  gets an honest 「免签政策表中未找到…」, never a guess.
* **Dates** — a row or cited policy whose end date is before ``as_of`` (today by default) gets
  a note that it may have expired and that the current rule must be checked.
* **Offline** (:func:`extractive_body`) the answer leads with the rows, then the notes, then the
  best passages; **with an LLM** (:func:`llm_messages`) the same facts go into the prompt, and
  :func:`append_missing_notes` adds any note the model left out (a model is never trusted to
  keep a date or a "not found").

Example::

    >>> rows = lookup_rows(visa_kb, [gaz.lookup("France")])
    >>> notes = date_notes(rows, sources, as_of=date(2026, 1, 15))
    >>> notes[0].startswith("⚠️ 注意：法国（France）")
    True
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from zhiwen.answer.extractive import truncate
from zhiwen.answer.prompts import qa_messages
from zhiwen.answer.stage import excerpt
from zhiwen.appkit.app import Citation
from zhiwen.documents import Document

from .countries import Country
from .visa_table import POLICY_TYPE_ZH

if TYPE_CHECKING:
    from zhiwen.kb import KnowledgeBase
    from zhiwen.llm.base import Message

DOMAIN = "中国出入境免签政策、机组人员出入境与相关法律法规"
MAX_PASSAGES = 5
_OUTBOUND = re.compile(
    r"中国(公民|人|护照|游客|籍).{0,12}(去|到|前往|赴|入境)|(去|到|前往|赴).{0,10}(旅游|出差)?.{0,4}签证"
)


@dataclass(frozen=True, slots=True)
class TableRow:
    """A country the question names and its row of the visa-free table (``doc`` None: no row)."""

    country: Country
    doc: Document | None
    kb: str = ""
    page: Document | None = None  # the policy page the source site shows for this row

    @property
    def found(self) -> bool:
        return self.doc is not None

    @property
    def meta(self) -> dict[str, Any]:
        return dict(self.doc.metadata) if self.doc is not None else {}

    @property
    def chunk_id(self) -> str:
        return f"country/{self.country.iso2}#0"

    @property
    def end_date(self) -> date | None:
        return _date(self.meta.get("end_date"))

    @property
    def policy_type(self) -> str:
        return str(self.meta.get("policy_type") or "none")

    def expired(self, as_of: date) -> bool:
        end = self.end_date
        return end is not None and end < as_of

    def summary(self) -> str:
        """``国家（Country）：免签停留 N 天；政策类型：…；截止日期：…``"""
        if self.doc is None:
            return not_found_line(self.country)
        m = self.meta
        types = m.get("policies_zh") or m.get("policies") or "无"
        end = m.get("end_date") or "长期有效"
        name = f"{self.country.zh}（{self.country.en}）"
        return f"{name}：免签停留 {m.get('days')} 天；政策类型：{types}；截止日期：{end}"

    def citations(self, max_chars: int = 500) -> list[Citation]:
        """The row (and its policy page) as sources, marked ``lookup`` (fetched by id, not searched)."""
        out = []
        for doc, cid in ((self.doc, self.chunk_id), (self.page, self.page.id if self.page else "")):
            if doc is not None:
                meta = {**doc.metadata, "lookup": True}
                out.append(
                    Citation(kb=self.kb, id=cid, title=doc.title, text=doc.text[:max_chars], metadata=meta)
                )
        return out


def _date(value: Any) -> date | None:
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value)) if value else None
    except ValueError:
        return None


def lookup_rows(visa_kb: KnowledgeBase | None, countries: Sequence[Country]) -> list[TableRow]:
    """Each country's table row, by document id (no search: a row is there or it is not)."""
    if visa_kb is None or not countries:
        return []
    docs = {d.id: d for d in visa_kb.get_parents([f"country/{c.iso2}" for c in countries])}
    page_ids = [str(d.metadata.get("policy_doc") or "") for d in docs.values()]
    pages = {d.id: d for d in visa_kb.get_parents([p for p in page_ids if p])}
    rows = []
    for c in countries:
        doc = docs.get(f"country/{c.iso2}")
        page = pages.get(str(doc.metadata.get("policy_doc") or "")) if doc is not None else None
        rows.append(TableRow(c, doc, visa_kb.name, page))
    return rows


def order_sources(rows: Sequence[TableRow], sources: Sequence[Citation], max_chars: int) -> list[Citation]:
    """The asked countries' rows first (retrieved or looked up), then their policy pages when
    retrieval did not bring them, then the retrieved sources in their order."""
    by_id = {s.id: s for s in sources}
    docs_seen = {s.id.split("#", 1)[0] for s in sources}
    front: list[Citation] = []
    for row in rows:
        if row.doc is None:
            continue
        lookup = row.citations(max_chars)
        front.append(by_id.get(row.chunk_id) or lookup[0])
        if row.page is not None and row.page.id not in docs_seen:
            front.append(lookup[1])
            docs_seen.add(row.page.id)
    moved = {c.id for c in front}
    return front + [s for s in sources if s.id not in moved]


def not_found_line(country: Country) -> str:
    return (
        f"免签政策表中未找到{country.zh}（{country.en}）的免签政策：表中没有该国的免签记录，"
        f"不能据此认定可以免签入境。请在出行前通过中国驻外使领馆或国家移民管理局核实签证要求。"
    )


def _as_of_label(as_of: date) -> str:
    return f"今天（{as_of.isoformat()}）" if as_of == date.today() else f"查询日期（{as_of.isoformat()}）"


def date_notes(rows: Sequence[TableRow], sources: Sequence[Citation], as_of: date) -> list[str]:
    """A note per expired row; without rows (no country asked about), one per expiry date among
    the cited sources (other countries' rows retrieved for a named country are not the answer)."""
    notes = []
    for row in rows:
        if row.found and row.expired(as_of):
            notes.append(
                f"⚠️ 注意：{row.country.zh}（{row.country.en}）的免签政策在表中记录的截止日期为"
                f"{row.end_date}，早于{_as_of_label(as_of)}，该政策可能已到期或已调整，"
                f"请以国家移民管理局、外交部等官方渠道公布的现行规定为准。"
            )
    if rows:
        return notes
    others: dict[str, list[str]] = {}
    for s in sources:
        end = _date(s.metadata.get("end_date"))
        if end is None or end >= as_of:
            continue
        others.setdefault(end.isoformat(), []).append(str(s.metadata.get("country_zh") or s.title))
    for end_text, titles in others.items():
        shown = "、".join(dict.fromkeys(titles[:4]))
        notes.append(
            f"⚠️ 注意：引用的政策（{shown}）截止日期为{end_text}，早于{_as_of_label(as_of)}，"
            f"可能已到期或已调整，请核实现行规定。"
        )
    return notes


def outbound_notes(question: str, rows: Sequence[TableRow]) -> list[str]:
    """For 中国公民去X: the table is about entering China; only mutual exemption works both ways."""
    if not _OUTBOUND.search(question):
        return []
    notes = []
    for row in rows:
        if not row.found:
            continue
        c = row.country
        if row.policy_type == "mutual":
            notes.append(
                f"中国与{c.zh}互免签证，协议对双方公民适用，中国公民前往{c.zh}同样可按协议免签入境。"
            )
        else:
            kind = POLICY_TYPE_ZH.get(row.policy_type, "免签")
            notes.append(
                f"表中{c.zh}的政策是中国给予{c.zh}公民来华的{kind}，不是互免：中国公民前往{c.zh}仍需按该国规定办理签证。"
            )
    return notes


def cite_index(sources: Sequence[Citation], source_id: str) -> int | None:
    """The ``[n]`` of a chunk id, or of the first chunk of a document id."""
    exact = next((i for i, s in enumerate(sources, 1) if s.id == source_id), None)
    if exact is not None:
        return exact
    return next((i for i, s in enumerate(sources, 1) if s.id.startswith(source_id + "#")), None)


def extractive_body(
    question: str, intent: str, rows: Sequence[TableRow], sources: Sequence[Citation], notes: Sequence[str]
) -> str:
    """Rows first (cited), then notes, then the best passages not already shown."""
    parts: list[str] = []
    if rows:
        lines = []
        for row in rows:
            n = cite_index(sources, row.chunk_id)
            lines.append(row.summary() + (f" [{n}]" if n and row.found else ""))
            m = cite_index(sources, row.page.id) if row.page is not None else None
            if row.page is not None and m:
                lines.append(f"　详见{row.page.title} [{m}]")
        parts.append("【免签政策表】\n" + "\n".join(lines))
    if notes:
        parts.append("\n".join(notes))
    shown = {row.chunk_id for row in rows} | {row.page.id for row in rows if row.page is not None}
    passages: list[str] = []
    for i, s in enumerate(sources, 1):
        other_row = rows and s.metadata.get("kind") == "visa_country"  # rows of countries not asked about
        if s.id in shown or s.id.split("#", 1)[0] in shown or other_row or len(passages) >= MAX_PASSAGES:
            continue
        # a bullet is quoted under its heading (「❌ You Cannot：Work, study…」), never bare
        heading = (s.section or "").split(">")[-1].strip()
        best = excerpt(question, s.title, s.text, max_chars=260, heading=heading) or truncate(s.text, 260)
        passages.append(f"[{i}] {s.title}：{' '.join(best.split())}")
    if passages:
        parts.append(
            ("【相关规定与说明】\n" if intent != "other" else "【相关规定】\n") + "\n".join(passages)
        )
    return "\n\n".join(parts)


def llm_messages(
    question: str,
    rows: Sequence[TableRow],
    sources: Sequence[Citation],
    notes: Sequence[str],
    *,
    as_of: date,
    context_chars: int = 600,
) -> list[Message]:
    contexts = [(s.title, truncate(s.text, context_chars)) for s in sources]
    facts = [f"今天（或查询日期）是 {as_of.isoformat()}。"]
    for row in rows:
        n = cite_index(sources, row.chunk_id)
        facts.append(f"免签政策表：{row.summary()}" + (f"（上下文 [{n}]）" if n else ""))
    facts.extend(notes)
    facts.append(
        "回答要求：先给出结论；涉及具体国家时先说明表中的天数、政策类型和截止日期；"
        "政策截止日期早于查询日期的，必须提醒可能已到期、请以官方现行规定为准；"
        "表中没有的国家，直接说明免签政策表中未找到，不要猜测。"
    )
    return qa_messages(question, contexts, domain=DOMAIN, extra_instruction="\n".join(facts))


_WARNED = re.compile(r"到期|过期|失效|核实|现行|最新|以官方")


def append_missing_notes(text: str, rows: Sequence[TableRow], notes: Sequence[str]) -> str:
    """Add the not-found lines and date notes (``date_notes``) the model's answer does not carry."""
    missing = [not_found_line(r.country) for r in rows if not r.found and "未找到" not in text]
    for note in notes:
        dates = re.findall(r"\d{4}-\d{2}-\d{2}", note.split("早于")[0])
        if not (dates and all(d in text for d in dates) and _WARNED.search(text)):
            missing.append(note)
    return text if not missing else text.rstrip() + "\n\n" + "\n".join(missing)

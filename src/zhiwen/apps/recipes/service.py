"""Recipe QA over a HowToCook knowledge base: route → retrieve → one LLM call or extractive.

* ``detail`` (宫保鸡丁怎么做): the dish is found by name (synonym variants + fuzzy, see
  :mod:`.names`) and by hybrid retrieval of the expanded question; one recipe appears once
  (parent aggregation). Context: the best recipe in full, the runners-up briefly. Offline: its
  ``必备原料和工具`` and ``操作`` sections (+ ``计算`` when short).
* ``list`` (推荐几个简单的素菜): up to N distinct dishes satisfying the category/difficulty filters
  taken from the question, ranked by relevance, topped up from the catalog when retrieval finds
  fewer. Offline: the dish names with category and difficulty.
* ``general`` (什么是川菜): the generic passage QA of :mod:`zhiwen.answer.qa`.

Routing uses rules; only when they are unsure and an LLM is configured does one routing call
(``purpose=recipes.route``) happen. A clear detail question therefore costs exactly one LLM call.

Example::

    >>> kb = open_kb("recipes")
    >>> ans = answer_recipe(kb, "番茄炒蛋怎么做")
    >>> ans.route, ans.sources[0].metadata["name"], ans.llm_used
    ('detail', '西红柿炒鸡蛋', False)
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from zhiwen.answer.events import AppEvent
from zhiwen.answer.extractive import compose_list, compose_sections, truncate
from zhiwen.answer.model import Answer, Citation
from zhiwen.answer.prompts import qa_messages
from zhiwen.answer.qa import (
    AnswerPlan,
    execute,
    execute_stream,
    pipeline_for,
    plan_generic,
    resolve_llm,
)
from zhiwen.config import Settings
from zhiwen.documents import Document
from zhiwen.llm import AUTO, llm_purpose
from zhiwen.llm.base import ChatModel
from zhiwen.retrieve.pipeline import RetrievalPipeline
from zhiwen.store.filters import parse_filters

from .names import Dish, DishCatalog, catalog_for, dish_phrase, expand_variants
from .prompts import route_messages
from .routing import (
    CATEGORY_LABELS,
    RouteDecision,
    classify,
    list_query,
    prefers_easiest,
    question_filters,
    wanted_count,
)

if TYPE_CHECKING:
    from zhiwen.kb import KnowledgeBase

log = logging.getLogger(__name__)

APP = "recipes"
DOMAIN = "家常菜烹饪（HowToCook 菜谱）"
DETAIL_SECTIONS = ("必备原料和工具", "操作")
ROUTES = ("list", "detail", "general")
_INTRO_SKIP = re.compile(r"^(#|预估|!\[|>|\s*$)")


def dish_label(metadata: dict[str, Any]) -> str:
    """``素菜 · ★★`` from a recipe's metadata."""
    parts = []
    cat = metadata.get("category")
    if cat:
        parts.append(CATEGORY_LABELS.get(str(cat), str(cat)))
    diff = metadata.get("difficulty")
    if isinstance(diff, int) and not isinstance(diff, bool) and diff > 0:
        parts.append("★" * diff)
    return " · ".join(parts)


def recipe_intro(doc: Document, max_chars: int = 150) -> str:
    """The recipe's first prose paragraph (after the title)."""
    for line in doc.text.splitlines():
        if not _INTRO_SKIP.match(line):
            return truncate(line.strip(), max_chars)
    return ""


def _source(doc: Document, score: float, kb: str) -> Citation:
    return Citation(kb=kb, id=doc.id, title=doc.title or doc.id, score=round(float(score), 6),
                    metadata=dict(doc.metadata))


def decide_route(
    question: str, catalog: DishCatalog | None, llm: ChatModel | None
) -> tuple[RouteDecision, list[Any]]:
    """Rules first; the LLM only when the rules are unsure. Returns the decision and dish matches."""
    matches = catalog.match(question) if catalog is not None else []
    decision = classify(question, dish_found=bool(matches))
    if decision.confident or llm is None:
        return decision, matches
    try:
        with llm_purpose("recipes.route"):
            data = llm.chat_json(route_messages(question))
    except Exception as exc:  # any failure: keep the rule's guess
        log.warning("LLM routing failed (%s: %s); using %s", type(exc).__name__, exc, decision.route)
        return decision, matches
    route = data.get("route") if isinstance(data, dict) else None
    if route in ROUTES:
        return RouteDecision(str(route), True, "llm"), matches
    return decision, matches


# -- detail --------------------------------------------------------------------------------------
def plan_detail(
    kb: KnowledgeBase,
    question: str,
    catalog: DishCatalog | None,
    matches: list[Any],
    *,
    top_k: int = 3,
    pipeline: RetrievalPipeline | None = None,
) -> AnswerPlan:
    phrase = dish_phrase(question) or question
    expansions = [v for v in expand_variants(phrase)[1:6] if v]
    names = [m.name for m in matches if m.name not in expansions]
    query = " ".join([question, *expansions, *names])
    found = pipeline_for(kb, pipeline).search_parents(kb, query, top_k=max(top_k + 2, 5))
    parents = found.parents
    ordered: dict[str, Citation] = {}
    docs: dict[str, Document] = {p.document.id: p.document for p in parents}
    scores = {p.document.id: p.score for p in parents}
    top_score = max(scores.values(), default=1.0)
    if matches:
        missing = [m.dish.doc_id for m in matches if m.dish.doc_id not in docs]
        if missing:
            docs.update({d.id: d for d in kb.get_parents(missing)})
        for m in matches:
            doc = docs.get(m.dish.doc_id)
            if doc is not None:
                ordered[doc.id] = _source(doc, max(scores.get(doc.id, 0.0), top_score), kb.name)
    for p in parents:
        if p.document.id not in ordered:
            ordered[p.document.id] = _source(p.document, p.score, kb.name)
    sources = list(ordered.values())[:top_k]
    context: list[tuple[str, str]] = []
    for i, s in enumerate(sources):
        doc = docs[s.id]
        text = truncate(doc.text, 4000) if i == 0 else truncate(doc.text, 500)
        context.append((f"{s.title}（{dish_label(s.metadata)}）", text))

    def body() -> str:
        first = docs[sources[0].id]
        text = compose_sections(first, DETAIL_SECTIONS, cite=1, optional=("计算",))
        others = [f"[{i}] {s.metadata.get('name') or s.title}" for i, s in enumerate(sources[1:], 2)]
        if others:
            text += "\n\n其他相关菜谱：" + "、".join(others)
        return text

    return AnswerPlan(
        app=APP,
        route="detail",
        sources=sources,
        messages=qa_messages(
            question,
            context,
            domain=DOMAIN,
            extra_instruction="做法类问题请按「所需食材」「操作步骤」分条作答，用量以上下文为准。",
        )
        if sources
        else None,
        extractive_body=body,
        purpose="recipes.detail",
        params=found.params,
    )


# -- list ----------------------------------------------------------------------------------------
Ranked = list[tuple[Document, float]]


def _dish_name(doc: Document) -> str:
    return str(doc.metadata.get("name") or doc.title)


def _difficulty(doc: Document) -> int:
    diff = doc.metadata.get("difficulty")
    return diff if isinstance(diff, int) and not isinstance(diff, bool) and diff > 0 else 9


def _distinct(parents: list[Any], flt: Any) -> Ranked:
    """(document, score) in retrieval order, one per dish name, only those passing ``flt``."""
    out: Ranked = []
    seen: set[str] = set()
    for p in parents:
        name = _dish_name(p.document)
        if name in seen or (flt and not flt.matches(p.document.metadata)):
            continue
        seen.add(name)
        out.append((p.document, p.score))
    return out


def _easiest_first(
    kb: KnowledgeBase,
    searcher: RetrievalPipeline,
    question: str,
    spec: dict[str, Any],
    ranked: Ranked,
    n: int,
) -> Ranked:
    """简单/容易: ★ dishes before ★★ ones (#30: 「简单的素菜」 listed only ★★ while ★ ones exist).

    With content words (「用鸡蛋做的简单菜」) relevance still decides which dishes qualify: the 2n
    most relevant are reordered by stars. Without them (「简单的素菜」) the ★ dishes of the
    category are searched on their own, so every ★ dish can be listed, each with its own score.
    """
    terms = list_query(question)
    if terms:
        return sorted(ranked[: 2 * n], key=lambda ds: _difficulty(ds[0])) + ranked[2 * n :]
    one_star = parse_filters({**spec, "difficulty": 1})
    found = searcher.search_parents(kb, question, top_k=max(3 * n, 10), filters=one_star)
    first = _distinct(found.parents, one_star)
    names = {_dish_name(doc) for doc, _ in first}
    rest = [ds for ds in ranked if _dish_name(ds[0]) not in names]
    return sorted(first + rest, key=lambda ds: _difficulty(ds[0]))  # stable: relevance within a star


def plan_list(
    kb: KnowledgeBase,
    question: str,
    catalog: DishCatalog | None,
    *,
    count: int | None = None,
    pipeline: RetrievalPipeline | None = None,
) -> AnswerPlan:
    n = count or wanted_count(question)
    spec = question_filters(question)
    flt = parse_filters(spec) if spec else None
    query = list_query(question) or question
    searcher = pipeline_for(kb, pipeline)
    found = searcher.search_parents(kb, query, top_k=max(3 * n, 10), filters=flt)
    ranked = _distinct(found.parents, flt)
    if prefers_easiest(question) and "difficulty" in spec:
        ranked = _easiest_first(kb, searcher, question, spec, ranked, n)
    picked: list[Citation] = []
    docs: dict[str, Document] = {}
    seen_names: set[str] = set()

    def take(doc: Document, score: float) -> None:
        name = _dish_name(doc)
        if name in seen_names or (flt and not flt.matches(doc.metadata)):
            return
        seen_names.add(name)
        docs[doc.id] = doc
        picked.append(_source(doc, score, kb.name))

    for doc, score in ranked[:n]:
        take(doc, score)
    if len(picked) < n and catalog is not None and flt:
        # retrieval ranks by relevance; the catalog guarantees N dishes when enough satisfy the filters
        terms = [t for t in query.split() if t]
        rest: list[Dish] = [d for d in catalog.dishes if d.doc_id not in docs and flt.matches(d.metadata)]
        rest.sort(key=lambda d: (-sum(t in d.name for t in terms), d.difficulty or 9, d.name))
        need = [d.doc_id for d in rest[: (n - len(picked)) * 2]]
        for doc in kb.get_parents(need):
            if len(picked) >= n:
                break
            take(doc, 0.0)
    context = [
        (f"{s.metadata.get('name') or s.title}（{dish_label(s.metadata)}）", recipe_intro(docs[s.id]))
        for s in picked
    ]

    def body() -> str:
        items = [
            (str(s.metadata.get("name") or s.title), dish_label(s.metadata), i)
            for i, s in enumerate(picked, 1)
        ]
        head = f"为你找到 {len(items)} 道菜："
        return head + "\n" + compose_list(items)

    return AnswerPlan(
        app=APP,
        route="list",
        sources=picked,
        messages=qa_messages(
            question,
            context,
            domain=DOMAIN,
            extra_instruction="这是推荐类问题：逐条列出上下文中的菜名（附一句理由），不要推荐上下文以外的菜。",
        )
        if picked
        else None,
        extractive_body=body,
        purpose="recipes.list",
        params=found.params,
    )


# -- entry points --------------------------------------------------------------------------------
def plan_recipe(
    kb: KnowledgeBase,
    question: str,
    *,
    top_k: int | None = None,
    llm: ChatModel | None = None,
    pipeline: RetrievalPipeline | None = None,
) -> AnswerPlan:
    """Route the question and build its plan (``llm`` is only used for unsure routing)."""
    try:
        catalog: DishCatalog | None = catalog_for(kb)
    except Exception as exc:  # a KB without listable documents still answers by retrieval
        log.warning("no dish catalog for %s: %s", kb.name, exc)
        catalog = None
    decision, matches = decide_route(question, catalog, llm)
    log.debug("recipe route %s (%s) for %r", decision.route, decision.reason, question)
    if decision.route == "detail":
        return plan_detail(kb, question, catalog, matches, top_k=top_k or 3, pipeline=pipeline)
    if decision.route == "list":
        return plan_list(kb, question, catalog, count=top_k, pipeline=pipeline)
    return plan_generic(kb, question, pipeline=pipeline, top_k=top_k or 5, app=APP, domain=DOMAIN)


def _settings(kb: KnowledgeBase, settings: Settings | None) -> Settings:
    return settings if settings is not None else kb.settings


def answer_recipe(
    kb: KnowledgeBase,
    question: str,
    *,
    top_k: int | None = None,
    llm: ChatModel | Any | None = AUTO,
    settings: Settings | None = None,
    timeout_s: float | None = None,
    pipeline: RetrievalPipeline | None = None,
) -> Answer:
    model = resolve_llm(llm, _settings(kb, settings))
    plan = plan_recipe(kb, question, top_k=top_k, llm=model, pipeline=pipeline)
    return execute(plan, model, timeout_s=timeout_s)


def stream_recipe(
    kb: KnowledgeBase,
    question: str,
    *,
    top_k: int | None = None,
    llm: ChatModel | Any | None = AUTO,
    settings: Settings | None = None,
    timeout_s: float | None = None,
    pipeline: RetrievalPipeline | None = None,
) -> Iterator[AppEvent]:
    model = resolve_llm(llm, _settings(kb, settings))
    plan = plan_recipe(kb, question, top_k=top_k, llm=model, pipeline=pipeline)
    return execute_stream(plan, model, timeout_s=timeout_s)

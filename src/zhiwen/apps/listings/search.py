"""Finding the listings: vector ∥ full-text under the hard constraints, fused, relaxed, re-scored.

:class:`ListingSearch` is the retrieval half of a property search over one listings KB:

1. **Branches**: the explicit constraints are store filters inside both the vector and the
   full-text branch (a thread pool of 4, shared with the LLM extraction); the branches are fused
   with RRF (k = ``ZHIWEN_LISTINGS__RRF_K`` = 40). One failing branch leaves the other to answer.
2. **The engine's stages** (rerank, thresholds, MMR) run over the fused candidates when a
   pipeline is given (:meth:`refine`), so the runtime settings apply here too.
3. **Relaxation**: fewer exact matches than ``min(max_results, ZHIWEN_LISTINGS__RELAX_BELOW)``
   → search again with the constraints relaxed in :data:`~.extract.RELAX_ORDER`, each tier saying
   what it relaxed ("已放宽: 面积条件").
4. **Re-score** (:mod:`.scoring`) and keep the best ``max_results``; exact matches first.

What is probed once per KB revision (the cities the KB holds, every listing's metadata for the
count of matches) is shared by every view of the search (:meth:`over`).

Example::

    >>> search = ListingSearch(open_kb("listings"), get_listings_settings())   # doctest: +SKIP
    >>> fused = search.retrieve("浦东 2室", {"district": "浦东"}, 12)            # doctest: +SKIP
    >>> search.shown(search.relaxation_tiers(req, "浦东 2室", fused, 3, 12)[0], req, 3)  # doctest: +SKIP
"""

from __future__ import annotations

import copy
import logging
import re
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from zhiwen.apps.listings.answer_text import property_view
from zhiwen.apps.listings.extract import Requirements, hard_filters, normalise_question, relaxable_steps
from zhiwen.apps.listings.scoring import Weights, score_listing
from zhiwen.apps.listings.settings import ListingsSettings
from zhiwen.chinese.gazetteer import get_gazetteer
from zhiwen.documents import SearchHit
from zhiwen.errors import InvalidParameter, ZhiwenError
from zhiwen.metrics import FALLBACKS
from zhiwen.retrieve.fusion import rrf
from zhiwen.retrieve.pipeline import RetrievalPipeline
from zhiwen.store.filters import parse_filters

log = logging.getLogger(__name__)

#: the searches and the LLM extraction of every listings question run here, in parallel
POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="listings")

Scored = list[tuple[SearchHit, float]]  # hits with their fused (0..1) score, best first
Tier = tuple[Scored, list[str]]  # candidates, and the relaxations they need


def search_text(question: str, req: Requirements) -> str:
    """The retrieval query: the question without negated clauses, plus canonical words."""
    t = normalise_question(question)
    t = re.sub(r"(不要|不想要|不考虑|不接受|远离|避开|拒绝|别|排除)[^，,。；;！!？?、和的]{0,8}", " ", t)
    extra = [p.name.replace("/", " ") for p in req.places] + req.estates + req.special + req.keywords
    extra += req.decoration_in
    text = " ".join([t, *extra]).strip()
    return text or question


class ListingSearch:
    """The retrieval over one listings KB (thread-safe; :meth:`over` gives a view of another handle)."""

    def __init__(self, kb: Any, listings: ListingsSettings) -> None:
        self.kb = kb
        self.listings = listings
        self.weights = Weights.from_settings(listings)
        #: what is probed once per KB revision ("cities", "metadata" → (revision, value)); shared
        #: by every view of this search (:meth:`over`), as is the lock
        self._probed: dict[str, tuple[int, Any]] = {}
        self._lock = threading.Lock()

    def over(self, kb: Any) -> ListingSearch:
        """This search over ``kb`` (the handle the registry holds now), sharing what it probed."""
        if kb is self.kb:
            return self
        view = copy.copy(self)
        view.kb = kb
        return view

    # -- probed once per KB revision -------------------------------------------------------------
    def _per_revision(self, name: str, probe: Callable[[], Any]) -> Any:
        """``probe()`` once per KB revision (its value shared by every view of this search)."""
        rev = self.kb.revision
        with self._lock:
            got = self._probed.get(name)
        if got is not None and got[0] == rev:
            return got[1]
        value = probe()
        with self._lock:
            self._probed[name] = (rev, value)
        return value

    def kb_cities(self) -> set[str]:
        """Cities present in the KB (probed once per revision with a 1-hit BM25 per city)."""
        return set(self._per_revision("cities", self._probe_cities))

    def _probe_cities(self) -> set[str]:
        found: set[str] = set()
        for city in get_gazetteer().cities:
            try:
                if self.kb.search(city, mode="bm25", top_k=1, filters={"city": city}):
                    found.add(city)
            except ZhiwenError:
                log.debug("city probe failed for %s", city, exc_info=True)
        return found

    def _metadata(self) -> list[dict[str, Any]] | None:
        """Every listing's metadata, read once per KB revision (None: too many to count here)."""
        store = self.kb.store

        def read() -> list[dict[str, Any]] | None:
            if store.count() > self.listings.count_limit:
                return None
            return [dict(d.metadata) for d in store.get_parents(sorted(store.doc_ids()))]

        return self._per_revision("metadata", read)

    def count_matches(self, filters: dict[str, Any]) -> int | None:
        """How many listings pass every hard constraint (None: the KB is too large to count)."""
        try:
            metas = self._metadata()
        except ZhiwenError:
            log.debug("listings: could not read the metadata to count", exc_info=True)
            return None
        if metas is None:
            return None
        condition = parse_filters(filters)
        return sum(1 for m in metas if condition.matches(m))

    # -- the branches ----------------------------------------------------------------------------
    def branches(self, query: str, k: int, filters: dict[str, Any]) -> dict[str, Future[Any]]:
        """The vector and the full-text search, started in the pool."""
        return {
            "dense": POOL.submit(self._branch, query, "dense", k, filters),
            "bm25": POOL.submit(self._branch, query, "bm25", k, filters),
        }

    def _branch(self, query: str, mode: str, k: int, filters: dict[str, Any]) -> list[SearchHit]:
        try:
            return self.kb.search(query, mode=mode, top_k=k, filters=filters)
        except InvalidParameter as exc:
            if mode == "dense":  # a KB without vectors: full-text answers alone
                log.debug("dense branch unavailable: %s", exc)
                return []
            raise

    def retrieve(
        self, query: str, filters: dict[str, Any], k: int, futures: dict[str, Future[Any]] | None = None
    ) -> Scored:
        """Vector ∥ full-text under the filters, RRF-fused: [(hit, rrf score)] best first."""
        futures = futures or self.branches(query, k, filters)
        lists: dict[str, list[SearchHit]] = {}
        errors: list[BaseException] = []
        for name, fut in futures.items():
            try:
                lists[name] = fut.result()
            except Exception as exc:  # one failing branch leaves the other to answer
                errors.append(exc)
                FALLBACKS.labels(kind=f"listings_{name}_failed").inc()
                log.warning("listings %s branch failed: %s", name, exc)
        if len(errors) == len(futures) and errors:
            raise errors[0]
        by_id: dict[str, SearchHit] = {}
        rankings = []
        for hits in lists.values():
            if hits:
                rankings.append([(h.id, float(h.score)) for h in hits])
                for h in hits:
                    by_id.setdefault(h.id, h)
        fused = rrf(rankings, k=self.listings.rrf_k) if rankings else []
        return [(by_id[i], s) for i, s in fused]

    @staticmethod
    def refine(
        pipeline: RetrievalPipeline | None, query: str, fused: Scored
    ) -> tuple[Scored, dict[str, Any]]:
        """The engine's post-search stages (rerank, thresholds, MMR) over the fused candidates."""
        if pipeline is None or not fused:
            return fused, {}
        refined = pipeline.rerank(query, [replace(h, score=s) for h, s in fused], top_k=len(fused))
        params = {**refined.params, "diagnostics": refined.diagnostics}
        if not refined.diagnostics.get("reranked"):
            return [(h, float(h.score)) for h in refined.hits], params
        # rerank scores (logits or probabilities) become 0..1 like the RRF scores they replace
        scores = [float(h.score) for h in refined.hits]
        lo, hi = min(scores), max(scores)
        span = (hi - lo) or 1.0
        return [(h, (float(h.score) - lo) / span if hi > lo else 1.0) for h in refined.hits], params

    # -- relaxation and re-scoring ---------------------------------------------------------------
    def relaxation_tiers(
        self, req: Requirements, query: str, fused: Scored, n: int, k: int
    ) -> tuple[list[Tier], list[str]]:
        """Exact matches first, then listings that need a stated relaxation (each tier with the
        relaxations it needs), and every relaxation tried."""
        ls = self.listings
        tiers: list[Tier] = [(fused, [])]
        labels: list[str] = []
        if len(fused) >= min(n, ls.relax_below) or req.unknown_city:
            return tiers, labels
        seen = {h.id for h, _ in fused}
        relaxed: set[str] = set()
        for step, label in relaxable_steps(req):
            relaxed.add(step)
            labels.append(label)
            more = self.retrieve(
                query, hard_filters(req, relaxed, tolerance=ls.price_over_budget_tolerance), k
            )
            new = [(h, s) for h, s in more if h.id not in seen]
            if new:
                tiers.append((new, list(labels)))
                seen.update(h.id for h, _ in new)
            if sum(len(t) for t, _ in tiers) >= n:
                break
        return tiers, labels

    def shown(self, tiers: list[Tier], req: Requirements, n: int) -> list[dict[str, Any]]:
        """The ``n`` listings shown: exact matches first, then each relaxation tier in turn."""
        props: list[dict[str, Any]] = []
        for hits, tier_labels in tiers:
            props.extend(self._rescored(hits, tier_labels, req, n - len(props)))
            if len(props) >= n:
                break
        return props

    def _rescored(
        self, hits: Scored, tier_labels: list[str], req: Requirements, room: int
    ) -> list[dict[str, Any]]:
        """One tier's listings re-scored against the requirements, best first, at most ``room``."""
        if not hits:
            return []
        best = max(s for _, s in hits) or 1.0
        scored = []
        for h, s in hits:
            meta = dict(h.chunk.metadata)
            sc = score_listing(meta, req, rrf_norm=s / best, weights=self.weights, relaxed=tier_labels)
            scored.append((sc.score, h, meta, sc))
        # listings that hit a soft negation (远离高架 …) come after every clean one
        scored.sort(key=lambda x: (bool(x[3].negations), -x[0], x[1].id))
        props: list[dict[str, Any]] = []
        for score, h, meta, sc in scored[: max(room, 0)]:
            p = property_view(meta, h.chunk.doc_id)
            p["match_score"] = round(score, 4)
            p["match_percentage"] = round(score * 100)
            p["match_reasons"] = sc.reasons or ["与问题语义相关"]
            p["relaxed"] = bool(tier_labels)
            props.append(p)
        return props


__all__ = ["POOL", "ListingSearch", "search_text"]

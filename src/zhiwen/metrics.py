"""Every Prometheus metric of zhiwen, defined once so names stay consistent.

``GET /metrics`` exposes the default registry. Labels are kept low-cardinality (route
templates, KB names, branch names — never queries).
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

# -- HTTP --------------------------------------------------------------------------------------
HTTP_REQUESTS = Counter("zhiwen_http_requests_total", "HTTP requests", ["route", "method", "status"])
HTTP_LATENCY = Histogram(
    "zhiwen_http_request_seconds", "HTTP request latency", ["route", "method"], buckets=_LATENCY_BUCKETS
)

# -- retrieval ---------------------------------------------------------------------------------
SEARCHES = Counter("zhiwen_searches_total", "Searches run", ["kb", "mode"])
SEARCH_LATENCY = Histogram(
    "zhiwen_search_seconds", "Search latency (without rerank)", ["mode"], buckets=_LATENCY_BUCKETS
)
BRANCH_FAILURES = Counter(
    "zhiwen_branch_failures_total", "A retrieval branch raised; the other branch answered", ["branch"]
)
BRANCH_EMPTY = Counter("zhiwen_branch_empty_total", "A retrieval branch returned nothing", ["branch"])
CANDIDATES = Histogram(
    "zhiwen_search_candidates", "Candidates after fusion", buckets=(0, 1, 5, 10, 20, 50, 100, 200, 500)
)
PASSED_THRESHOLD = Histogram(
    "zhiwen_search_passed_threshold",
    "Results that passed the score threshold",
    buckets=(0, 1, 2, 5, 10, 20, 50, 100),
)
EMPTY_RESULTS = Counter("zhiwen_search_empty_results_total", "Searches that returned no result", ["route"])
FALLBACKS = Counter("zhiwen_fallbacks_total", "Fallbacks taken", ["kind"])

# -- rerank / embedding ------------------------------------------------------------------------
RERANK_LATENCY = Histogram("zhiwen_rerank_seconds", "Cross-encoder rerank latency", buckets=_LATENCY_BUCKETS)
RERANK_FAILURES = Counter("zhiwen_rerank_failures_total", "Reranker errors (fused order used)")
EMBED_LATENCY = Histogram("zhiwen_embedding_seconds", "Embedding latency", ["kind"], buckets=_LATENCY_BUCKETS)
EMBEDDED_TEXTS = Counter("zhiwen_embedded_texts_total", "Texts sent to the embedding model", ["provider"])
EMBED_CACHE_HITS = Counter("zhiwen_embedding_cache_hits_total", "Embeddings served from the on-disk cache")

# -- LLM ---------------------------------------------------------------------------------------
LLM_CALLS = Counter("zhiwen_llm_calls_total", "LLM calls", ["purpose", "outcome"])
LLM_TOKENS = Counter("zhiwen_llm_tokens_total", "LLM tokens", ["kind"])
LLM_LATENCY = Histogram("zhiwen_llm_seconds", "LLM call latency", ["purpose"], buckets=_LATENCY_BUCKETS)
LLM_ERRORS = Counter("zhiwen_llm_errors_total", "LLM errors by error code", ["code"])
EXTRACTIVE_ANSWERS = Counter(
    "zhiwen_extractive_answers_total", "Answers composed without an LLM", ["app", "reason"]
)
CONDENSED_QUESTIONS = Counter(
    "zhiwen_condensed_questions_total", "Follow-up questions made standalone, by method", ["method"]
)
CONDENSE_CALLS = Counter(
    "zhiwen_condense_calls_total", "LLM condense calls by outcome (used, rejected, error)", ["outcome"]
)

# -- caches ------------------------------------------------------------------------------------
CACHE_HITS = Counter("zhiwen_cache_hits_total", "Cache hits", ["cache"])
CACHE_MISSES = Counter("zhiwen_cache_misses_total", "Cache misses", ["cache"])
CACHE_SIZE = Gauge("zhiwen_cache_entries", "Cache entries", ["cache"])

# -- store -------------------------------------------------------------------------------------
STORE_ERRORS = Counter("zhiwen_store_errors_total", "Store errors", ["backend", "kind"])

# -- resilience (zhiwen.resilience: deadlines, bulkheads, breakers) -----------------------------
DEGRADED = Counter(
    "zhiwen_degraded_total", "Calls that gave way (extractive answer, fused order)", ["what", "reason"]
)
REJECTED = Counter(
    "zhiwen_rejected_total", "Requests or calls refused at once (full queue, open breaker)", ["kind", "by"]
)
BULKHEAD_IN_USE = Gauge("zhiwen_bulkhead_in_use", "Calls or requests running, per kind of work", ["bulkhead"])
BULKHEAD_WAITING = Gauge("zhiwen_bulkhead_waiting", "Calls or requests waiting for a slot", ["bulkhead"])
BULKHEAD_LIMIT = Gauge("zhiwen_bulkhead_limit", "Slots per kind of work", ["bulkhead"])
BREAKER_STATE = Gauge(
    "zhiwen_breaker_state", "Breaker per endpoint: 0 closed, 1 half-open, 2 open", ["kind", "endpoint"]
)
BREAKER_FAILURES = Gauge(
    "zhiwen_breaker_failures", "Failures in a row counted by a circuit breaker", ["kind", "endpoint"]
)

# -- what people ask (zhiwen.questionlog): counted when an answer is logged ----------------------
QUESTIONS = Counter("zhiwen_questions_total", "Questions answered", ["kb", "app"])
QUESTIONS_UNANSWERED = Counter(
    "zhiwen_questions_unanswered_total",
    "Questions refused, not answerable, or answered by a fallback",
    ["kb", "app"],
)
QUESTIONS_FAQ = Counter(
    "zhiwen_questions_faq_total", "Questions answered by an FAQ entry word for word", ["kb", "app"]
)
QUESTION_LLM_CALLS = Counter("zhiwen_question_llm_calls_total", "LLM calls made for questions", ["kb", "app"])
QUESTION_TOKENS = Counter(
    "zhiwen_question_tokens_total", "LLM tokens spent on questions", ["kb", "app", "kind"]
)
QUESTION_LATENCY = Histogram(
    "zhiwen_question_seconds", "Time to answer a question", ["kb", "app"], buckets=_LATENCY_BUCKETS
)
FEEDBACK = Counter("zhiwen_feedback_total", "Ratings given to answers (up, down)", ["kb", "rating"])
QUESTION_LOG_DROPPED = Counter(
    "zhiwen_question_log_dropped_total",
    "Question records not written: the queue was full, the write failed, or the log was closed",
    ["reason"],
)
QUESTION_LOG_WRITTEN = Counter("zhiwen_question_log_written_total", "Question records written")
QUESTION_LOG_QUEUE = Gauge("zhiwen_question_log_queue", "Question records waiting for the writer")

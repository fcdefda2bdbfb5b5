"""OCR of page images with RapidOCR (PP-OCRv4 Chinese models shipped inside the wheel).

``rapidocr-onnxruntime`` bundles its ONNX models, so nothing is downloaded at run time; it is the
``[ocr]`` extra (``pip install 'zhiwen[ocr]'``). Pages run in a bounded thread pool (ONNX Runtime
releases the GIL; each engine uses one intra-op thread, so ``threads`` = cores busy), and every
result is cached on disk by the hash of the page image, so a re-run does not OCR again.

Example::

    >>> engine = OcrEngine(threads=2, cache_dir=home / "cache" / "ocr")
    >>> lines = engine.recognize(pil_image)          # [OcrLine(text, x0, top, x1, bottom), ...]
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from zhiwen.fsutil import atomic_write_text

log = logging.getLogger(__name__)
ENGINE_TAG = "rapidocr-onnxruntime/PP-OCRv4/no-cls/v2"  # part of the cache key: a new model re-OCRs


# how to get the extra, for the Chinese messages that need it (zhiwen is installed from a clone)
INSTALL_HINT = "在 zhiwen 源码目录运行 pip install -e '.[ocr]'"


class OcrUnavailable(RuntimeError):
    """RapidOCR is not installed (the ``[ocr]`` extra)."""


@dataclass(frozen=True, slots=True)
class OcrLine:
    text: str
    x0: float
    top: float
    x1: float
    bottom: float
    score: float = 1.0


def ocr_available() -> bool:
    try:
        import rapidocr_onnxruntime  # noqa: F401
    except Exception:
        return False
    return True


class OcrEngine:
    """A pool of RapidOCR engines with an on-disk result cache (see the module docstring)."""

    def __init__(self, *, threads: int = 2, cache_dir: Path | None = None) -> None:
        if not ocr_available():
            raise OcrUnavailable("rapidocr-onnxruntime is not installed")
        self.threads = max(1, threads)
        self.cache_dir = cache_dir
        self._local = threading.local()
        self._pool = ThreadPoolExecutor(max_workers=self.threads, thread_name_prefix="zhiwen-ocr")
        self.cache_hits = 0
        self.recognized = 0

    def _engine(self) -> Any:
        engine = getattr(self._local, "engine", None)  # thread-local: one engine per pool thread
        if engine is None:
            from rapidocr_onnxruntime import RapidOCR

            # one ONNX thread per engine: the pool gives the parallelism, without oversubscription.
            # rec_batch_num=1: batches pad every line to the widest one; on a statute page batch 1
            # recognised in 2.5 s what the default batch of 6 took 8.4 s for (bench_documents.py)
            engine = RapidOCR(intra_op_num_threads=1, inter_op_num_threads=1, rec_batch_num=1)
            self._local.engine = engine
        return engine

    # -- cache ------------------------------------------------------------------------------------
    @staticmethod
    def image_key(image: Any) -> str:
        h = hashlib.blake2b(digest_size=20)
        h.update(ENGINE_TAG.encode())
        h.update(f"{image.mode}:{image.size}".encode())
        h.update(image.tobytes())
        return h.hexdigest()

    def _cache_path(self, key: str) -> Path | None:
        return None if self.cache_dir is None else self.cache_dir / key[:2] / f"{key}.json"

    def cached(self, key: str) -> list[OcrLine] | None:
        path = self._cache_path(key)
        if path is None or not path.is_file():
            return None
        try:
            rows = json.loads(path.read_text("utf-8"))
            return [OcrLine(**row) for row in rows]
        except (OSError, ValueError, TypeError):
            return None

    def _store(self, key: str, lines: list[OcrLine]) -> None:
        path = self._cache_path(key)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps([asdict(x) for x in lines], ensure_ascii=False))

    # -- recognition ------------------------------------------------------------------------------
    def recognize(self, image: Any, key: str | None = None) -> list[OcrLine]:
        """Text lines of one page image (pixel coordinates), from the cache when seen before."""
        key = key or self.image_key(image)
        hit = self.cached(key)
        if hit is not None:
            self.cache_hits += 1
            return hit
        import numpy as np

        # no angle classifier: it flipped upright Chinese lines to 180° (lost whole lines) in our tests
        result, _ = self._engine()(np.asarray(image.convert("RGB")), use_cls=False)
        lines: list[OcrLine] = []
        for box, text, score in result or []:
            xs = [float(p[0]) for p in box]
            ys = [float(p[1]) for p in box]
            lines.append(OcrLine(str(text), min(xs), min(ys), max(xs), max(ys), float(score)))
        self._store(key, lines)
        self.recognized += 1
        return lines

    def map_pages(
        self,
        pages: Iterable[tuple[int, Any]],
        *,
        on_done: Callable[[int], None] | None = None,
    ) -> Iterator[tuple[int, list[OcrLine]]]:
        """OCR ``(page index, image)`` pairs with at most ``2 × threads`` images in memory.

        Images are produced lazily by the caller (rendering a PDF is not thread-safe, so it stays
        in the caller's thread); results come back in page order.
        """
        window: list[tuple[int, Future[list[OcrLine]]]] = []
        limit = 2 * self.threads

        def drain(n: int) -> Iterator[tuple[int, list[OcrLine]]]:
            while len(window) > n:
                index, fut = window.pop(0)
                lines = fut.result()
                if on_done:
                    on_done(index)
                yield index, lines

        for index, image in pages:
            key = self.image_key(image)
            hit = self.cached(key)
            if hit is not None:
                self.cache_hits += 1
                done: Future[list[OcrLine]] = Future()
                done.set_result(hit)
                window.append((index, done))
            else:
                window.append((index, self._pool.submit(self.recognize, image, key)))
            yield from drain(limit)
        yield from drain(0)

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    def __enter__(self) -> OcrEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

"""What runs behind the routes for as long as the app runs, and the lifespan that runs it.

:func:`~zhiwen.api.app.create_app` owns it: the app's lifespan widens the thread pool, warms the
LLM client and the offline answerer up, and — as its :class:`Background` says — runs

* the **upload worker** of the home's :class:`~zhiwen.uploads.UploadService`: at start it
  resumes or fails what the last process left, at shutdown it stops after the file in hand (the
  job stays queued for the next start);
* the **vector filler** (:mod:`zhiwen.kb.background`): at start it queues every KB with missing
  vectors, at shutdown it stops between two batches (committed vectors stay).

``zhiwen serve`` asks for both (:meth:`Background.server`); an app built without them (tests,
an embedding app) queues uploads and serves documents, but indexes nothing in the background.
The routes reach the service through :func:`get_uploads`. The home's question log
(``app.state.question_log``, opened by ``create_app``) is closed when the app stops: what was
recorded is written before the process goes.

Example::

    >>> app = create_app(settings, background=Background.server(on_stopped=lambda: release_home(settings)))
    >>> with TestClient(create_app(settings, background=Background(vectors=True))) as client:
    ...     vector_filler().wait_idle(timeout=60)
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass

import anyio.to_thread
from fastapi import FastAPI, Request

from zhiwen.config import Settings
from zhiwen.config.runtime import DynamicSettingsService
from zhiwen.sync.service import running_syncs
from zhiwen.uploads import UploadService

log = logging.getLogger(__name__)

Lifespan = Callable[[FastAPI], contextlib.AbstractAsyncContextManager[None]]


@dataclass(frozen=True, slots=True)
class Background:
    """Which background work the app runs; ``on_stopped`` is called once all of it has stopped."""

    uploads: bool = False  # the upload worker (resume at start, stop after the file in hand)
    vectors: bool = False  # the vector filler (every KB's missing vectors)
    sync: bool = False  # the sync schedule (KBs with a sync_interval, zhiwen.sync.service)
    on_stopped: Callable[[], None] | None = None

    @classmethod
    def server(cls, on_stopped: Callable[[], None] | None = None) -> Background:
        """Everything a server runs (``zhiwen serve``, ``zhiwen demo``)."""
        return cls(uploads=True, vectors=True, sync=True, on_stopped=on_stopped)


def get_uploads(request: Request) -> UploadService:
    """The app's uploads and documents (``app.state.uploads``, made by ``create_app``)."""
    uploads: UploadService = request.app.state.uploads
    return uploads


def app_lifespan(settings: Settings, background: Background) -> Lifespan:
    """The app's lifespan: the thread pool and the warm-up, then ``background``'s work."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        _widen_thread_pool(settings)
        # the LLM client (the openai SDK takes ~1 s to import) loads in the background, so the
        # first questions do not spend their deadline on it
        runtime = app.state.dynamic_settings
        threading.Thread(
            target=_warm_up, args=(settings, runtime), name="zhiwen-warm-up", daemon=True
        ).start()
        try:
            with _filling_vectors(settings, background.vectors), running_syncs(settings, background.sync):
                async with _running_uploads(app.state.uploads, background.uploads):
                    yield
        finally:
            await anyio.to_thread.run_sync(app.state.question_log.close)  # writes what is queued
            if background.on_stopped is not None:
                background.on_stopped()

    return lifespan


def _widen_thread_pool(settings: Settings) -> None:
    # admitted answer + search requests each hold a worker thread: never let them take every
    # thread of the pool that cheap routes and FastAPI's sync dependencies share
    limiter = anyio.to_thread.current_default_thread_limiter()
    cfg = settings.resilience
    limiter.total_tokens = max(limiter.total_tokens, cfg.answer_concurrency + cfg.search_concurrency + 16)


@contextlib.asynccontextmanager
async def _running_uploads(uploads: UploadService, enabled: bool) -> AsyncIterator[None]:
    if not enabled:
        yield
        return
    await anyio.to_thread.run_sync(uploads.start)  # recovery reads the queue and the ledgers
    try:
        yield
    finally:
        await anyio.to_thread.run_sync(uploads.stop)


@contextlib.contextmanager
def _filling_vectors(settings: Settings, enabled: bool) -> Iterator[None]:
    if not enabled:
        yield
        return
    from zhiwen.kb.registry import vector_filler

    filler = vector_filler()
    try:
        queued = filler.resume_all(settings)
        log.info("vector filler: checking %d knowledge base(s) for missing vectors", queued)
    except OSError as exc:  # an unreadable home must not stop the server
        log.warning("cannot resume missing vectors: %s", exc)
    try:
        yield
    finally:
        filler.stop()


def _warm_up(settings: Settings, runtime: DynamicSettingsService) -> None:
    """Off the request path: build the LLM client, load the offline answerer's term statistics,
    and check that an enabled rerank model is on disk — a missing one is said at start (and
    remembered: searches keep the fused order)."""
    try:
        from zhiwen.answer.scoring import preload_idf
        from zhiwen.llm import get_llm
        from zhiwen.retrieve.rerank import RerankerUnavailable, get_reranker

        preload_idf()
        get_llm(settings)
        rerank = runtime.get().rerank
        if rerank.enabled:
            try:
                get_reranker(rerank, api_key=settings.rerank.api_key).check()
            except RerankerUnavailable as exc:
                log.warning("rerank is enabled but cannot run: %s", exc.message)
    except Exception:  # a warm-up only: the first request reports any real problem
        log.debug("warm-up failed", exc_info=True)

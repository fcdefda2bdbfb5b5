"""Build the :class:`~zhiwen.appkit.app.AppContext` an app answers with, outside a request.

The API builds one per server (``app.state``) through :func:`zhiwen.httpkit.deps.get_app_context`;
the CLI, scripts and tests call :func:`build_context`. Both read the runtime settings stored
under ``ZHIWEN_HOME`` (the admin API's overrides), so ``zhiwen ask`` answers with the same
rerank / MMR / threshold settings as the server.

Example::

    >>> ctx = build_context()                 # settings from the environment, LLM if configured
    >>> answer = app.ask(AskRequest(question="怎么创建知识库"), ctx)
"""

from __future__ import annotations

from typing import Any

from zhiwen.appkit.app import AppContext
from zhiwen.config import Settings, get_settings
from zhiwen.config.runtime import DynamicSettingsService
from zhiwen.llm import AUTO, get_llm
from zhiwen.retrieve.pipeline import RetrievalPipeline
from zhiwen.retrieve.rerank import get_reranker


def build_pipeline(settings: Settings, runtime: DynamicSettingsService | None = None) -> RetrievalPipeline:
    """The pipeline over the runtime settings (static defaults + the admin's overrides)."""
    runtime = runtime or DynamicSettingsService(settings)
    api_key = settings.rerank.api_key
    return RetrievalPipeline(
        runtime.get,
        reranker_factory=lambda cfg: get_reranker(cfg, api_key=api_key),
        overrides=runtime.overrides,
    )


def build_context(
    settings: Settings | None = None,
    *,
    pipeline: RetrievalPipeline | None = None,
    llm: Any = AUTO,
) -> AppContext:
    from zhiwen.kb import open_kb

    settings = settings or get_settings()
    return AppContext(
        settings=settings,
        pipeline=pipeline or build_pipeline(settings),
        llm=get_llm(settings) if llm is AUTO else llm,
        open_kb=lambda name: open_kb(name, settings=settings),
    )

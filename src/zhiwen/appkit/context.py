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

from typing import TYPE_CHECKING, Any

from zhiwen.appkit.app import AppContext
from zhiwen.config import Settings, get_settings
from zhiwen.config.runtime import DynamicSettingsService
from zhiwen.errors import SetupHint, SetupHints, setup_hinted
from zhiwen.llm import AUTO, get_llm
from zhiwen.retrieve.pipeline import RetrievalPipeline
from zhiwen.retrieve.rerank import get_reranker

if TYPE_CHECKING:
    from zhiwen.kb import KnowledgeBase


def build_pipeline(settings: Settings, runtime: DynamicSettingsService | None = None) -> RetrievalPipeline:
    """The pipeline over the runtime settings (static defaults + the admin's overrides)."""
    runtime = runtime or DynamicSettingsService(settings)
    api_key = settings.rerank.api_key
    return RetrievalPipeline(
        runtime.get,
        reranker_factory=lambda cfg: get_reranker(cfg, api_key=api_key),
        overrides=runtime.overrides,
    )


def installed_setup_hint(kb: str) -> SetupHint:
    """How ``kb`` is built, as the installed apps say (:meth:`AppRegistry.setup_hint`)."""
    from zhiwen.appkit.registry import load_apps

    return load_apps().setup_hint(kb)


def build_context(
    settings: Settings | None = None,
    *,
    pipeline: RetrievalPipeline | None = None,
    llm: Any = AUTO,
    setup_hints: SetupHints = installed_setup_hint,
) -> AppContext:
    """The context an app answers with: ``settings`` (default: the environment's), the pipeline
    over the runtime settings, the LLM (``AUTO``: the one the settings configure; None: none), and
    a KB opener whose "KB not found" names the command that builds the KB (``setup_hints``: the
    installed apps' by default)."""
    from zhiwen.kb import open_kb

    settings = settings or get_settings()

    def opened(name: str) -> KnowledgeBase:
        with setup_hinted(setup_hints):
            return open_kb(name, settings=settings)

    return AppContext(
        settings=settings,
        pipeline=pipeline or build_pipeline(settings),
        llm=get_llm(settings) if llm is AUTO else llm,
        open_kb=opened,
    )

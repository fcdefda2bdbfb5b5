"""Where the top layers (API, CLI) find the apps: Python entry points in the group ``zhiwen.apps``.

Every app, built in or installed with pip, is one entry point naming an app object (a
:class:`~zhiwen.appkit.BaseApp`)::

    [project.entry-points."zhiwen.apps"]
    recipes = "zhiwen.apps.recipes:app"

A broken app fails loudly when the registry loads — the server and the CLI refuse to start
with the app's name and the error — rather than vanishing silently. ``ZHIWEN_DISABLED_APPS``
(a comma-separated list) leaves named apps out. The engine never imports this module.

Example::

    >>> registry = load_apps()
    >>> sorted(registry)                       # ['listings', 'recipes', …]
    >>> registry.for_kb("recipes").title       # the app that answers a KB whose kb.json says app=recipes
    >>> registry.answerer(None).name             # a KB no app claims: generic QA
    'qa'
    >>> registry.setup_hint("policy_visa").command   # how a missing KB is built
    'zhiwen policy setup ../shared/data'
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import entry_points
from pathlib import Path

from zhiwen.appkit.app import BaseApp, Loader
from zhiwen.appkit.qa import GENERIC_QA
from zhiwen.errors import KnowledgeBaseNotFound, SetupHint, index_hint, set_setup_hints

log = logging.getLogger(__name__)

GROUP = "zhiwen.apps"
#: the data folder an app's setup is pointed at in every hint: the built-in apps read the shared
#: data beside the checkout, as in the README's quickstart
SETUP_DATA = "../shared/data"


def setup_command(app: BaseApp) -> str:
    """``zhiwen policy setup ../shared/data``: the command that builds ``app``'s KBs."""
    return f"zhiwen {app.name} setup {SETUP_DATA}"


class AppLoadError(RuntimeError):
    """An app could not be loaded; the message names it and says how to leave it out."""


@dataclass(frozen=True, slots=True)
class AppSpec:
    name: str
    target: str  # "module:attribute"


def installed_specs() -> list[AppSpec]:
    return sorted((AppSpec(ep.name, ep.value) for ep in entry_points(group=GROUP)), key=lambda s: s.name)


def _load(spec: AppSpec) -> BaseApp:
    module_name, _, attr = spec.target.partition(":")
    try:
        obj = getattr(importlib.import_module(module_name), attr or "app")
    except Exception as exc:
        raise AppLoadError(
            f"应用「{spec.name}」加载失败（{spec.target}）：{type(exc).__name__}: {exc}。"
            f"修复它，或设置 ZHIWEN_DISABLED_APPS={spec.name} 暂时停用"
        ) from exc
    if not isinstance(obj, BaseApp) or obj.name != spec.name:
        raise AppLoadError(
            f"应用「{spec.name}」（{spec.target}）不是名为 {spec.name} 的 BaseApp 对象：{obj!r}"
        )
    return obj


class AppRegistry(Mapping[str, BaseApp]):
    """The loaded apps by name, plus the lookups the API and CLI need."""

    def __init__(self, apps: Iterable[BaseApp]) -> None:
        self._apps = {a.name: a for a in apps}

    def __getitem__(self, name: str) -> BaseApp:
        return self._apps[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._apps)

    def __len__(self) -> int:
        return len(self._apps)

    def for_kb(self, kb_app: str | None) -> BaseApp | None:
        """The app that answers for a KB whose ``kb.json`` names ``kb_app`` (None: generic QA)."""
        if not kb_app:
            return None
        return next((a for a in self._apps.values() if a.serves(kb_app)), None)

    def answerer(self, kb_app: str | None) -> BaseApp:
        """Who answers a KB whose ``kb.json`` names ``kb_app``: that app, else generic QA.

        The one place that chooses: REST, the OpenAI front door and the CLI ask the answerer.
        """
        return self.for_kb(kb_app) or GENERIC_QA

    def owner(self, kb: str) -> BaseApp | None:
        """The app that declares a KB named ``kb`` (its setup builds it), or None."""
        return next((a for a in self._apps.values() if any(s.name == kb for s in a.kbs)), None)

    def setup_hint(self, kb: str) -> SetupHint:
        """How a missing KB ``kb`` is built: its app's setup, or ``zhiwen index`` for a KB no app
        declares. An app's own name (``policy``) is answered with the app's KBs and setup."""
        app = self.owner(kb)
        if app is not None:
            return SetupHint(setup_command(app), app.name)
        named = self._apps.get(kb)
        if named is not None and named.kbs:
            return SetupHint(setup_command(named), named.name, tuple(s.name for s in named.kbs))
        return index_hint(kb)

    def not_set_up(self, app: BaseApp, missing: Iterable[str]) -> KnowledgeBaseNotFound:
        """404 / 3004 for an app whose KBs ``missing`` are not built, naming its setup."""
        names = list(missing)
        command = setup_command(app)
        return KnowledgeBaseNotFound(
            f"app {app.name!r} lacks knowledge bases {names}",
            message=f"{app.title or app.name}的知识库尚未建立：请先运行 {command}",
            data={"kb": names[0] if names else None, "kbs": names, "app": app.name, "setup_command": command},
        )

    def formats(self) -> dict[str, tuple[BaseApp, Loader]]:
        """Ingest formats the apps add, ``name → (app, loader)``."""
        out: dict[str, tuple[BaseApp, Loader]] = {}
        for app in self._apps.values():
            for fmt, loader in app.formats().items():
                out[fmt] = (app, loader)
        return out

    def sniff(self, path: Path) -> tuple[BaseApp, str] | None:
        """The app and format whose data ``path`` holds, judged by content."""
        for app in self._apps.values():
            fmt = app.sniff(path)
            if fmt:
                return app, fmt
        return None


def disabled_apps() -> set[str]:
    """``ZHIWEN_DISABLED_APPS``, read afresh: the apps to leave out."""
    from zhiwen.config import read_setting

    return set(read_setting("disabled_apps"))


def build_registry(specs: Iterable[AppSpec], disabled: set[str] | None = None) -> AppRegistry:
    disabled = disabled_apps() if disabled is None else disabled
    apps = [_load(s) for s in specs if s.name not in disabled]
    log.debug("apps loaded: %s", ", ".join(a.name for a in apps))
    return AppRegistry(apps)


@lru_cache(maxsize=1)
def load_apps() -> AppRegistry:
    """The installed apps, loaded once per process; raises :class:`AppLoadError` on a broken one.

    From then on every "KB not found" of this process names the command that builds the KB
    (:func:`zhiwen.errors.kb_not_found`): the app's setup, or ``zhiwen index``.
    """
    registry = build_registry(installed_specs())
    set_setup_hints(registry.setup_hint)
    return registry

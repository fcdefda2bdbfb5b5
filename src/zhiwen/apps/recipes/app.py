"""The recipe app object: HowToCook QA plugged into the engine.

Example::

    >>> from zhiwen.apps.recipes import app
    >>> ctx = build_context()
    >>> app.setup(Path("../shared/data"), ctx)            # builds the KB "recipes"
    >>> app.ask(AskRequest(question="番茄炒蛋怎么做"), ctx).route       # one turn (conversation service)
    'detail'
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import typer

from zhiwen.appkit import Answer, AppContext, AppEvent, AskRequest, BaseApp, KBSpec, SetupReport, Standalone
from zhiwen.appkit.app import Loader
from zhiwen.conversation.vocabulary import Vocabulary
from zhiwen.errors import IngestError

from .ingest import FORMAT, load_howtocook, sniff_howtocook
from .names import dish_vocabulary
from .service import answer_recipe, stream_recipe


def _dishes_dir(data_dir: Path) -> Path:
    for candidate in (data_dir / "howtocook" / "dishes", data_dir / "dishes", data_dir):
        if candidate.is_dir() and sniff_howtocook(candidate):
            return candidate
    raise IngestError(
        f"no HowToCook recipes under {data_dir}",
        message=f"未在 {data_dir} 下找到 HowToCook 菜谱（应包含 howtocook/dishes）",
    )


class RecipesApp(BaseApp):
    name = "recipes"
    title = "菜谱问答"
    description = "HowToCook 菜谱问答：某道菜怎么做、按分类和难度推荐、烹饪常识"
    kbs = (KBSpec("recipes", "HowToCook 菜谱（每道菜一篇，含分类与难度）"),)

    def formats(self) -> Mapping[str, Loader]:
        return {FORMAT: load_howtocook}

    def sniff(self, path: Path) -> str | None:
        return FORMAT if sniff_howtocook(path) else None

    def setup(
        self, data_dir: Path, ctx: AppContext, *, progress: bool = True, wait: bool = True
    ) -> SetupReport:
        """The KB ``recipes``: its text index, then the vectors (``wait``) or a note on them."""
        from zhiwen.appkit.setup import KBBuild, run_setup

        dishes = _dishes_dir(Path(data_dir))

        build = KBBuild(self.kbs[0], lambda: load_howtocook(dishes))
        return run_setup(self.name, [build], ctx, progress=progress, wait=wait)

    def _kb(self, request: AskRequest, ctx: AppContext) -> str:
        return request.kb or self.kbs[0].name

    def vocabulary(self, request: AskRequest, ctx: AppContext) -> Vocabulary:
        """The dishes: one stays the topic of a conversation (「要炖多久？」); 「那糖醋排骨呢？」 switches."""
        return dish_vocabulary(ctx.open_kb(self._kb(request, ctx)))

    def answer(self, request: AskRequest, question: Standalone, ctx: AppContext) -> Answer:
        kb = ctx.open_kb(self._kb(request, ctx))
        return answer_recipe(kb, question.question, top_k=request.top_k, llm=ctx.llm, pipeline=ctx.pipeline)

    def answer_stream(self, request: AskRequest, question: Standalone, ctx: AppContext) -> Iterator[AppEvent]:
        kb = ctx.open_kb(self._kb(request, ctx))
        return stream_recipe(kb, question.question, top_k=request.top_k, llm=ctx.llm, pipeline=ctx.pipeline)

    def cli(self) -> typer.Typer | None:
        from .cli import commands

        return commands(self)


app = RecipesApp()

"""``zhiwen`` command line: one small module per command group, registered here."""

from __future__ import annotations

import importlib

import typer

from zhiwen.cli import zh

zh.install()  # typer's and click's own words (help, usage, errors) in Chinese, before any command

app = typer.Typer(
    name="zhiwen",
    help="知问 zhiwen：中文离线知识库问答。导入文档，检索，评测，启动服务，提问。",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# module -> its `register(app)` adds commands. Apps come through `zhiwen.cli.apps` (the
# registry): a broken app stops the CLI with its name and the error, never silently.
_COMMAND_MODULES = (
    "zhiwen.cli.index",  # index, kb list/info/delete
    "zhiwen.cli.kb_curation",  # kb chunks/chunk/changes/undo/synonyms/dictionary
    "zhiwen.cli.kb_faq",  # kb faq
    "zhiwen.cli.kb_questions",  # kb questions/stats
    "zhiwen.cli.portable",  # kb export/import, backup, restore
    "zhiwen.cli.search",  # search
    "zhiwen.cli.eval",  # eval
    "zhiwen.cli.tune",  # tune (a KB's fusion / BM25 / feedback parameters)
    "zhiwen.cli.serve",  # serve, demo
    "zhiwen.cli.ask",  # ask (dispatches to the KB's app)
    "zhiwen.cli.chat",  # chat (a conversation in the terminal)
    "zhiwen.cli.feedback",  # feedback (rate an answer by its id)
    "zhiwen.cli.apps",  # apps, and every app's own group (zhiwen <app> …)
    "zhiwen.cli.migrate",  # migrate (every file of a home to this release's formats)
    "zhiwen.cli.sync",  # sync (a KB's remembered sources, only what changed)
)

for _name in _COMMAND_MODULES:
    importlib.import_module(_name).register(app)


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    main()

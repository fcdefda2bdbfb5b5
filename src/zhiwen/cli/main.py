"""``zhiwen`` command line: one small module per command group, registered here."""

from __future__ import annotations

import importlib
import logging

import typer

app = typer.Typer(
    name="zhiwen",
    help="知问 zhiwen — Chinese-first offline RAG: index, search, evaluate, serve, ask.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# module -> its `register(app)` adds commands; a module that fails to import is skipped, so one
# broken app cannot take the whole CLI down.
_COMMAND_MODULES = (
    "zhiwen.cli.index",  # index, kb list/info/delete
    "zhiwen.cli.search",  # search
    "zhiwen.cli.eval",  # eval
    "zhiwen.cli.serve",  # serve, demo
    "zhiwen.cli.ask",  # ask (dispatches to the KB's app)
)

for _name in _COMMAND_MODULES:
    try:
        importlib.import_module(_name).register(app)
    except ModuleNotFoundError as exc:  # pragma: no cover - only while a module is missing
        if exc.name != _name:
            raise
        logging.getLogger(__name__).debug("CLI module %s not available", _name)


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    main()

"""The ``zhiwen kb`` command group: one Typer every module of KB commands adds its commands to.

A module of its own so that the command modules (index, curation, FAQ, questions, export/import)
all depend on it and none on another for the group.
"""

from __future__ import annotations

import typer

kb_app = typer.Typer(
    help="管理知识库：list、info、delete；段落、修改记录、FAQ、词典、同义词；提问记录与统计；export、import",
    no_args_is_help=True,
)

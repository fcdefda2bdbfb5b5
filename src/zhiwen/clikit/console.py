"""Shared CLI helpers: one-line errors, JSON output, ``key=value`` options and filters.

Every command module wraps its commands with :func:`run_cli`, so a :class:`ZhiwenError` (bad
input, unknown KB, store down) becomes ONE red line on stderr and a non-zero exit instead of a
traceback. Exit codes: 2 = the user's input is wrong (3xxx codes, like typer's usage errors),
1 = anything else (LLM/store failures, unexpected errors), 130 = interrupted.

Example::

    @app.command()
    @run_cli
    def search(query: str, kb: str = typer.Option(...)) -> None:
        hits = open_kb(kb).search(query)
        print_json([hit_to_dict(h) for h in hits])
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import numpy as np
import typer
from rich.console import Console
from rich.markdown import Markdown
from rich.markup import escape

from zhiwen.answer.model import Answer
from zhiwen.clikit.tables import answer_table_view
from zhiwen.clikit.view import how_answered, sources_table
from zhiwen.config import read_setting
from zhiwen.documents import Chunk, Document, ParentHit, SearchHit
from zhiwen.errors import InvalidParameter, ZhiwenError, with_setup_hint
from zhiwen.store.filters import Filter, coerce_scalar, parse_cli_filter

P = ParamSpec("P")
R = TypeVar("R")

console = Console()
err_console = Console(stderr=True, soft_wrap=True)
log = logging.getLogger("zhiwen.cli")

EXIT_FAILURE = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


def exit_code_for(exc: ZhiwenError) -> int:
    """3xxx (the request/input is wrong) → 2; everything else → 1."""
    return EXIT_BAD_INPUT if 3000 <= exc.code < 4000 else EXIT_FAILURE


def error_line(exc: BaseException) -> str:
    """The single line shown to the user: the Chinese message alone.

    The technical detail (often English, from a library) goes to the log; ``ZHIWEN_DEBUG=1``
    appends it to the line too.
    """
    if isinstance(exc, ZhiwenError):
        detail = " ".join(exc.detail.split()) if exc.detail else ""
        if detail:
            log.info("error detail [%s]: %s", exc.code, detail)
        shown = detail if detail and _debug() else ""
        return f"错误 [{exc.code}]：{exc.message}" + (f"（{shown}）" if shown else "")
    text = " ".join(str(exc).split())
    return f"内部错误：{type(exc).__name__}" + (f": {text}" if text else "")


def print_error(exc: BaseException) -> None:
    err_console.print(f"[bold red]{escape(error_line(exc))}[/]", highlight=False)


def _debug() -> bool:
    return bool(read_setting("debug"))  # ZHIWEN_DEBUG, read afresh where an error is reported


def run_cli(fn: Callable[P, R]) -> Callable[P, R]:
    """Decorator for typer commands: errors → one red stderr line + exit code (see module doc).

    ``ZHIWEN_DEBUG=1`` re-raises unexpected errors with their traceback.
    """

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except (typer.Exit, typer.Abort, SystemExit):
            raise
        except ZhiwenError as exc:
            from zhiwen.appkit.context import installed_setup_hint

            log.debug("command failed", exc_info=True)
            # a KB found missing below the apps is named with the command that builds it
            print_error(with_setup_hint(exc, installed_setup_hint))
            raise typer.Exit(exit_code_for(exc)) from None
        except KeyboardInterrupt:
            err_console.print("[yellow]已中断[/]")
            raise typer.Exit(EXIT_INTERRUPTED) from None
        except Exception as exc:
            if _debug():
                raise
            log.debug("unexpected error", exc_info=True)
            print_error(exc)
            raise typer.Exit(EXIT_FAILURE) from None

    return wrapper


# -- arguments ---------------------------------------------------------------------------------
def parse_options(pairs: Iterable[str] | None) -> dict[str, Any]:
    """``["city=上海", "limit=3"]`` → ``{"city": "上海", "limit": 3}`` (numbers/bools coerced)."""
    out: dict[str, Any] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InvalidParameter(
                f"bad option {pair!r}; use key=value", message=f"选项格式应为 key=value：{pair}"
            )
        out[key.replace("-", "_")] = coerce_scalar(value.strip())
    return out


def parse_filter_args(exprs: Iterable[str] | None) -> Filter:
    """Repeated ``--filter`` arguments (``category=soup``, ``difficulty<=2``, ``a=x|y``) → Filter."""
    return Filter(tuple(parse_cli_filter(e) for e in exprs or ()))


# -- JSON --------------------------------------------------------------------------------------
def _default(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, set | frozenset | tuple):
        return list(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    if hasattr(obj, "model_dump"):
        return obj.model_dump()
    return str(obj)


def to_json(obj: Any, *, indent: int | None = 2) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=indent, default=_default)


def print_json(obj: Any) -> None:
    """Machine-readable output on stdout (no rich markup, no wrapping)."""
    sys.stdout.write(to_json(obj) + "\n")
    sys.stdout.flush()


def chunk_to_dict(chunk: Chunk) -> dict[str, Any]:
    return {
        "id": chunk.id,
        "doc_id": chunk.doc_id,
        "parent_id": chunk.parent_id,
        "title": chunk.title,
        "text": chunk.text,
        "metadata": dict(chunk.metadata),
    }


def _round(x: float | None) -> float | None:
    return None if x is None else round(float(x), 6)


def hit_to_dict(hit: SearchHit, rank: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {} if rank is None else {"rank": rank}
    out.update(
        {
            "id": hit.chunk.id,
            "score": _round(hit.score),
            "fused_score": _round(hit.fused_score),
            "bm25_score": _round(hit.bm25_score),
            "bm25_rank": hit.bm25_rank,
            "vector_score": _round(hit.vector_score),
            "vector_rank": hit.vector_rank,
            "rerank_score": _round(hit.rerank_score),
            "chunk": chunk_to_dict(hit.chunk),
        }
    )
    if hit.extra:
        out["extra"] = hit.extra
    return out


def document_to_dict(doc: Document, *, text: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {"id": doc.id, "title": doc.title, "metadata": dict(doc.metadata)}
    if text:
        out["text"] = doc.text
    return out


def parent_to_dict(hit: ParentHit, rank: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {} if rank is None else {"rank": rank}
    out.update(
        {
            "id": hit.document.id,
            "score": _round(hit.score),
            "matched": len(hit.matched_chunks),
            "document": document_to_dict(hit.document),
            "matched_chunks": [hit_to_dict(h) for h in hit.matched_chunks],
        }
    )
    return out


# -- display -----------------------------------------------------------------------------------
def snippet(text: str, width: int = 80) -> str:
    """One line of at most ``width`` characters (whitespace collapsed)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def format_metadata(metadata: Mapping[str, Any], *, limit: int = 4) -> str:
    items = [(k, v) for k, v in metadata.items() if not isinstance(v, list | dict) and v not in (None, "")]
    text = " ".join(f"{k}={v}" for k, v in items[:limit])
    return text + (" …" if len(items) > limit else "")


def fmt_score(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def print_understood(question: str, answer: Answer) -> None:
    """「理解为：…」 when the answer searched another question than the one typed (a follow-up)."""
    understood = answer.standalone_question
    if understood and understood.strip() != question.strip():
        console.print(f"[dim]理解为：{escape(understood)}[/]")


def print_app_answer(answer: Answer, *, json_output: bool = False) -> None:
    """The answer, how it was made, and a table of sources (or all of it as JSON)."""
    if json_output:
        print_json(answer.model_dump())
        return
    # answers are markdown (lead, 相关段落, lists, tables, fenced code): rendered, not flattened
    console.print(Markdown(answer.answer, code_theme="ansi_dark", hyperlinks=False))
    table = answer_table_view(answer, console)
    if table is not None:
        console.print(table)
    console.print()
    verdict = "" if answer.answerable is not False else " · [yellow]知识库中没有相关内容[/]"
    console.print(f"[dim]{escape(how_answered(answer))}[/]{verdict}")
    if answer.citations:
        console.print(sources_table(answer.citations, console))

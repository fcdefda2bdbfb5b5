"""Issue 29: one server per ``ZHIWEN_HOME`` — a second ``zhiwen serve`` on the same home refuses to
start, naming the home and the first server's pid and address; a dead server's lock is taken over."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from support.live_zhiwen import LiveServer, free_port, server_env, spawn_serve


def squeezed(text: str) -> str:
    """The console wraps long lines: compare without any whitespace."""
    return "".join(text.split())


def test_a_second_server_on_the_same_home_refuses_and_names_the_first(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = LiveServer(home, tmp_path / "first.log").start()
    try:
        port = free_port()
        with (tmp_path / "second.log").open("wb") as log:
            second = spawn_serve(port, env=server_env(home), cwd=tmp_path, log=log.fileno())
        code = second.wait(timeout=90)
        said = squeezed((tmp_path / "second.log").read_text("utf-8", "replace"))
        assert code == 2, said
        assert f"pid{first.pid}" in said and f"127.0.0.1:{first.port}" in said, said
        assert squeezed(str(home)) in said and "只能运行一个服务" in said, said
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)
        # the first one never noticed
        assert first.get("/healthz").status_code == 200
        assert json.loads((home / "server.json").read_text("utf-8"))["pid"] == first.pid
    finally:
        first.stop()


def test_the_lock_of_a_killed_server_is_taken_over(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = LiveServer(home, tmp_path / "first.log").start()
    dead = first.pid
    first.kill()  # kill -9: its server.json stays behind, naming a dead pid
    assert json.loads((home / "server.json").read_text("utf-8"))["pid"] == dead
    second = LiveServer(home, tmp_path / "second.log")
    try:
        second.start()
        holder = json.loads((home / "server.json").read_text("utf-8"))
        assert holder["pid"] == second.pid and holder["port"] == second.port
    finally:
        second.stop()
    assert not (home / "server.json").exists()  # a clean stop says nothing is running

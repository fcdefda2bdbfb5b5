"""A real ``zhiwen serve`` process on loopback, for tests that kill, restart and share homes.

Every wait is bounded; :meth:`LiveServer.stop` is safe to call twice, and the fixtures that make
one always stop it.

The servers are forked from one pre-imported ``zhiwen`` per test process (:mod:`support.cli_zygote`):
importing the CLI costs ~2.5 s of CPU, and the suite starts dozens of servers. Each is still a
process of its own with its own pid, environment and signals. ``ZHIWEN_TEST_NO_ZYGOTE=1`` starts
them with a plain ``python -m zhiwen.cli serve`` instead.
"""

from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from support.cli_zygote import Forked, Zygote

START_TIMEOUT_S = 90.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_env(home: Path, **settings: str) -> dict[str, str]:
    """The environment of a test server: its home, the instant hash embedder, no network."""
    env = {
        **os.environ,
        "ZHIWEN_HOME": str(home),
        "ZHIWEN_EMBEDDING__PROVIDER": "hash",
        "HF_HUB_OFFLINE": "1",
        **settings,
    }
    for name in ("ZHIWEN_LLM__BASE_URL", "ZHIWEN_STORE", "ZHIWEN_API__KEYS", "ZHIWEN_API__ADMIN_TOKEN"):
        if name not in settings:
            env.pop(name, None)
    return env


def serve_command(port: int) -> list[str]:
    return [sys.executable, "-m", "zhiwen.cli", "serve", "--host", "127.0.0.1", "--port", str(port)]


_ZYGOTE: list[Zygote] = []  # this test process's, started by the first server


def _zygote() -> Zygote:
    if not _ZYGOTE:
        where = Path(tempfile.mkdtemp(prefix="zw-zygote-"))  # short: a Unix socket path is ≤ 107 bytes
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        _ZYGOTE.append(Zygote(where / "zhiwen.sock", env=env, log=where / "zygote.log").start())
        atexit.register(_ZYGOTE[0].stop)
    return _ZYGOTE[0]


def spawn_serve(port: int, *, env: dict[str, str], cwd: Path, log: int) -> subprocess.Popen[bytes] | Forked:
    """``zhiwen serve`` on ``127.0.0.1:port``, its output to the file descriptor ``log``."""
    if os.environ.get("ZHIWEN_TEST_NO_ZYGOTE") == "1":
        return subprocess.Popen(serve_command(port), env=env, stdout=log, stderr=subprocess.STDOUT, cwd=cwd)
    return _zygote().fork(serve_command(port)[3:], env=env, cwd=cwd, stdout=log)


class LiveServer:
    def __init__(self, home: Path, log: Path, **settings: str) -> None:
        self.home = home
        self.log = log
        self.settings = settings
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | Forked | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self) -> LiveServer:
        self.home.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as fh:
            env = server_env(self.home, **self.settings)
            self.proc = spawn_serve(self.port, env=env, cwd=self.home.parent, log=fh.fileno())
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.log.read_text(errors='replace')[-3000:]}")
            try:
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.2)
        self.kill()
        raise RuntimeError(f"server did not start in {START_TIMEOUT_S:.0f} s")

    def kill(self) -> None:
        """kill -9: no shutdown code runs."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)
        self.proc = None

    def stop(self, timeout: float = 30.0) -> int | None:
        """SIGTERM (uvicorn's graceful shutdown), then kill -9 if it outlives ``timeout``."""
        code = None
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                code = self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        self.proc = None
        return code

    # -- HTTP ---------------------------------------------------------------------------------------
    def get(self, path: str, **kw: Any) -> httpx.Response:
        return httpx.get(self.url + path, timeout=kw.pop("timeout", 30), **kw)

    def delete(self, path: str, **kw: Any) -> httpx.Response:
        return httpx.delete(self.url + path, timeout=kw.pop("timeout", 30), **kw)

    def upload(self, kb: str, files: list[tuple[str, bytes]], **kw: Any) -> httpx.Response:
        return httpx.post(
            f"{self.url}/api/v1/kbs/{kb}/documents",
            files=[("files", (name, data)) for name, data in files],
            timeout=kw.pop("timeout", 60),
            **kw,
        )

    def job(self, job_id: str) -> dict[str, Any]:
        resp = self.get(f"/api/v1/jobs/{job_id}")
        assert resp.status_code == 200, resp.text
        data: dict[str, Any] = resp.json()["data"]
        return data

    def wait_job(
        self, job_id: str, until: Callable[[dict[str, Any]], bool] | None = None, timeout: float = 60
    ) -> dict[str, Any]:
        """Poll the job until ``until`` holds (default: it has ended); AssertionError past timeout."""
        done = until or (lambda job: job["status"] in ("done", "partial", "failed"))
        deadline = time.monotonic() + timeout
        job: dict[str, Any] = {}
        while time.monotonic() < deadline:
            job = self.job(job_id)
            if done(job):
                return job
            time.sleep(0.1)
        raise AssertionError(f"job {job_id} not there in {timeout} s: {job}")

    def documents(self, kb: str) -> dict[str, dict[str, Any]]:
        resp = self.get(f"/api/v1/kbs/{kb}/documents")
        assert resp.status_code == 200, resp.text
        return {d["doc_id"]: d for d in resp.json()["data"]["documents"]}

    def metrics(self) -> str:
        return self.get("/metrics").text

"""Attacks on a real zhiwen server on loopback, one row each: what came back and whether the door held.

Starts ``zhiwen serve`` from a source tree (``--src``, default this checkout; pass a git worktree
of an older commit for the "before" column) over a fresh ``ZHIWEN_HOME`` with the sample KB
(``hash`` embedder), twice: once with an API key and an admin token configured, once in the
default no-key mode. Every request goes to 127.0.0.1 only; every wait is bounded.

Usage::

    python bench/bench_abuse.py                                  # this checkout
    git worktree add /tmp/before <commit> && python bench/bench_abuse.py --src /tmp/before/src

Prints a markdown table: attack | expected | got | held.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
KEY, ADMIN = "sk-bench", "admin-bench"
FINISHED = ("done", "failed", "partial", "cancelled")
EVIL = "http://evil.example"
Attack = Callable[["Server"], tuple[str, bool]]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    src: Path
    home: Path
    keys: bool
    port: int = 0
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        env = {**os.environ, "ZHIWEN_HOME": str(self.home), "ZHIWEN_EMBEDDING__PROVIDER": "hash"}
        env["PYTHONPATH"] = str(self.src)
        env.pop("ZHIWEN_LLM__BASE_URL", None)
        if self.keys:
            env["ZHIWEN_API__KEYS"] = json.dumps([KEY])
            env["ZHIWEN_API__ADMIN_TOKEN"] = ADMIN
        return env

    def start(self, port: int | None = None) -> subprocess.Popen[bytes]:
        self.port = port or _free_port()
        cmd = [sys.executable, "-m", "zhiwen.cli", "serve", "--host", "127.0.0.1", "--port", str(self.port)]
        log = (self.home.parent / f"server-{self.port}.log").open("ab")
        proc = subprocess.Popen(cmd, env=self.env(), stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                httpx.get(self.url + "/healthz", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.3)
        self.proc = proc
        return proc

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def call(self, method: str, path: str, *, key: str | None = None, **kw: object) -> httpx.Response:
        headers = dict(kw.pop("headers", {}) or {})  # type: ignore[call-overload]
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return httpx.request(method, self.url + path, headers=headers, timeout=60, **kw)  # type: ignore[arg-type]


def build_demo(src: Path, home: Path) -> None:
    code = (
        "from pathlib import Path; from zhiwen.cli.serve import ensure_demo_kb; "
        f"from zhiwen.config import Settings; ensure_demo_kb(Settings(home=Path({str(home)!r})), "
        "embedder='hash', progress=False)"
    )
    subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(src)}, check=True)


# -- the attacks -------------------------------------------------------------------------------
def _status(r: httpx.Response) -> str:
    return str(r.status_code)


def _doc(name: str = "note.md", text: str = "# 笔记\n\n内容。") -> dict[str, tuple[str, bytes, str]]:
    return {"files": (name, text.encode("utf-8"), "text/markdown")}


def upload_without_key(s: Server) -> tuple[str, bool]:
    r = s.call("POST", "/api/v1/kbs/newkb/documents", files=_doc())
    return _status(r), r.status_code == 401


def delete_kb_without_key(s: Server) -> tuple[str, bool]:
    r = s.call("DELETE", "/api/v1/kbs/demo")
    return _status(r), r.status_code == 401


def search_without_key(s: Server) -> tuple[str, bool]:
    r = s.call("POST", "/knowledge-base/search", json={"kb": "demo", "query": "安装", "top_k": 3})
    return _status(r), r.status_code == 401


def qa_without_key(s: Server) -> tuple[str, bool]:
    r = s.call("POST", "/api/v1/qa", json={"kb": "demo", "question": "怎么安装？"})
    return _status(r), r.status_code == 401


def openai_without_key(s: Server) -> tuple[str, bool]:
    r = s.call("GET", "/v1/models")
    return _status(r), r.status_code == 401


def settings_with_a_plain_key(s: Server) -> tuple[str, bool]:
    r = s.call("PUT", "/admin/settings", key=KEY, json={"retrieval": {"default_mode": "bm25"}})
    return _status(r), r.status_code in (401, 403)


def cross_site_upload(s: Server) -> tuple[str, bool]:
    r = s.call("POST", "/api/v1/kbs/demo/documents", files=_doc(), headers={"Origin": EVIL})
    return _status(r), r.status_code == 403


def cross_site_delete(s: Server) -> tuple[str, bool]:
    r = s.call("DELETE", "/api/v1/kbs/demo", headers={"Origin": EVIL})
    return _status(r), r.status_code == 403


def rebinding_host(s: Server) -> tuple[str, bool]:
    r = s.call("GET", "/api/v1/kbs", headers={"Host": "evil.example"})
    return _status(r), r.status_code in (400, 421)


def curl_without_origin(s: Server) -> tuple[str, bool]:
    r = s.call("POST", "/knowledge-base/search", json={"kb": "demo", "query": "安装", "top_k": 3})
    return _status(r), r.status_code == 200


def huge_embedding_input(s: Server) -> tuple[str, bool]:
    t0 = time.monotonic()
    r = s.call("POST", "/v1/embeddings", key=KEY, json={"model": "demo", "input": "知" * 100_000})
    took = time.monotonic() - t0
    return f"{r.status_code} in {took:.1f} s", 400 <= r.status_code < 500


def many_embedding_inputs(s: Server) -> tuple[str, bool]:
    t0 = time.monotonic()
    r = s.call("POST", "/v1/embeddings", key=KEY, json={"model": "demo", "input": ["知问" * 20] * 2048})
    took = time.monotonic() - t0
    return f"{r.status_code} in {took:.1f} s", (400 <= r.status_code < 500) or took < 30


def _docx_bomb(paragraphs: int = 400_000) -> bytes:
    body = "<w:p><w:r><w:t>知问知问知问知问</w:t></w:r></w:p>" * paragraphs
    xml = (
        '<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/'
        f'wordprocessingml/2006/main"><w:body>{body}</w:body></w:document>'
    )
    types = (
        '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.'
        'wordprocessingml.document.main+xml"/></Types>'
    )
    rels = (
        '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
        'relationships"><Relationship Id="r1" Type="http://schemas.openxmlformats.org/officeDocument/'
        '2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>'
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", types)
        z.writestr("_rels/.rels", rels)
        z.writestr("word/document.xml", xml)
    return out.getvalue()


def _peak_rss_mb(s: Server) -> float:
    assert s.proc is not None
    for line in Path(f"/proc/{s.proc.pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _wait_job(s: Server, job: str, key: str | None, timeout_s: float = 120) -> dict[str, object]:
    deadline = time.monotonic() + timeout_s
    data: dict[str, object] = {}
    while time.monotonic() < deadline:
        r = s.call("GET", f"/api/v1/jobs/{job}", key=key)
        data = dict(r.json().get("data") or {}) if r.status_code == 200 else {"http": r.status_code}
        if data.get("status") in FINISHED or "http" in data:
            return data
        time.sleep(0.5)
    return data


def _job_id(r: httpx.Response) -> str | None:
    data = r.json().get("data") or {}
    return str(data.get("id") or "") or None if isinstance(data, dict) else None


def docx_bomb(s: Server) -> tuple[str, bool]:
    payload = _docx_bomb()
    files = {"files": ("bomb.docx", payload, "application/octet-stream")}
    r = s.call("POST", "/api/v1/kbs/bombs/documents", key=KEY, files=files)
    job = _job_id(r) if r.status_code < 300 else None
    result = _wait_job(s, job, KEY) if job else {}
    peak = _peak_rss_mb(s)
    state = result.get("status")
    got = f"{r.status_code}, {len(payload) // 1024} KB file, job {state}, peak RSS {peak:.0f} MB"
    return got, peak < 1024


def long_cjk_name(s: Server) -> tuple[str, bool]:
    r = s.call("POST", "/api/v1/kbs/names/documents", key=KEY, files=_doc("知" * 300 + ".md"))
    return _status(r), r.status_code < 500


def _upload_then(s: Server, action: Callable[[str], tuple[str, bool]]) -> tuple[str, bool]:
    text = "# 大文档\n\n" + "\n\n".join(f"## 第{i}节\n\n知问的第{i}段内容。" * 3 for i in range(3000))
    r = s.call("POST", "/api/v1/kbs/big/documents", files=_doc("big.md", text))
    job = _job_id(r) if r.status_code < 300 else None
    return action(job or "") if job else (f"upload {r.status_code}", False)


def kill_during_upload(s: Server) -> tuple[str, bool]:
    def after_kill(job: str) -> tuple[str, bool]:
        s.stop(signal.SIGKILL)
        s.start(s.port)
        data = _wait_job(s, job, None, timeout_s=60)
        state = data.get("status", f"HTTP {data.get('http')}")
        return f"job after restart: {state}", state in FINISHED

    return _upload_then(s, after_kill)


def delete_during_upload(s: Server) -> tuple[str, bool]:
    def delete(_job: str) -> tuple[str, bool]:
        r = s.call("DELETE", "/api/v1/kbs/big")
        return _status(r), r.status_code == 409

    return _upload_then(s, delete)


def _http_500s(s: Server) -> float:
    text = s.call("GET", "/metrics").text
    prefix = "zhiwen_http_requests_total"
    lines = [ln for ln in text.splitlines() if ln.startswith(prefix) and 'status="500"' in ln]
    return sum(float(ln.rsplit(" ", 1)[1]) for ln in lines)


def client_hangs_up(s: Server) -> tuple[str, bool]:
    before = _http_500s(s)
    body = {"kb": "demo", "question": "怎么安装？", "stream": True}
    try:
        with httpx.stream("POST", s.url + "/api/v1/qa", json=body, timeout=5) as r:
            next(r.iter_bytes(), None)  # the first bytes, then hang up
    except httpx.HTTPError:
        pass
    time.sleep(1.0)
    counted = _http_500s(s) - before
    return f"500s counted: {counted:.0f}", counted == 0


def second_server_on_the_home(s: Server) -> tuple[str, bool]:
    other = Server(s.src, s.home, keys=False)
    proc = other.start()
    refused = proc.poll() is not None
    other.stop()
    return ("refused" if refused else "started"), refused


ATTACKS_WITH_KEYS: list[tuple[str, str, Attack]] = [
    ("upload with no credentials", "401", upload_without_key),
    ("search with no credentials", "401", search_without_key),
    ("QA with no credentials", "401", qa_without_key),
    ("/v1/models with no credentials", "401", openai_without_key),
    ("change settings with a plain key", "401/403", settings_with_a_plain_key),
    ("/v1/embeddings, one 100,000-character input", "4xx at once", huge_embedding_input),
    ("/v1/embeddings, 2,048 inputs", "4xx or < 30 s", many_embedding_inputs),
    ("a .docx of 400k paragraphs within the size limit", "peak RSS < 1 GB", docx_bomb),
    ("a file name of 300 CJK characters", "no 5xx", long_cjk_name),
    ("DELETE a KB with no credentials", "401", delete_kb_without_key),  # last: it may succeed
]
ATTACKS_WITHOUT_KEYS: list[tuple[str, str, Attack]] = [
    ("curl without Origin still works", "200", curl_without_origin),
    ("a client that hangs up mid-answer", "no 500 counted", client_hangs_up),
    ("cross-site upload (foreign Origin)", "403", cross_site_upload),
    ("DNS rebinding (foreign Host)", "400/421", rebinding_host),
    ("cross-site DELETE of a KB (foreign Origin)", "403", cross_site_delete),  # last: it may succeed
]


LIFECYCLE: list[tuple[str, str, Attack]] = [
    ("DELETE a KB while it imports", "409", delete_during_upload),
    ("kill -9 during an import, restart", "job resumed or failed", kill_during_upload),
    ("a second server on the same ZHIWEN_HOME", "refused", second_server_on_the_home),
]


def _run(server: Server, attacks: list[tuple[str, str, Attack]]) -> list[tuple[str, str, str, bool]]:
    rows = []
    for name, expected, attack in attacks:
        try:
            got, held = attack(server)
        except Exception as exc:  # an attack that breaks the bench is a finding, not a crash
            got, held = f"error: {type(exc).__name__}: {exc}"[:120], False
        rows.append((name, expected, got, held))
    return rows


def run_all(src: Path) -> list[tuple[str, str, str, bool]]:
    rows: list[tuple[str, str, str, bool]] = []
    for keys, attacks in ((True, ATTACKS_WITH_KEYS), (False, ATTACKS_WITHOUT_KEYS), (False, LIFECYCLE)):
        home = Path(tempfile.mkdtemp(prefix="zhiwen-abuse-")) / "home"
        build_demo(src, home)
        server = Server(src, home, keys=keys)
        server.start()
        try:
            rows += _run(server, attacks)
        finally:
            server.stop(signal.SIGKILL)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="the zhiwen source tree to serve")
    args = parser.parse_args()
    rows = run_all(args.src.resolve())
    print(f"## Abuse bench — {args.src}\n")
    print("| attack | expected | got | held |")
    print("|---|---|---|---|")
    for name, expected, got, held in rows:
        print(f"| {name} | {expected} | {got} | {'✔' if held else '✘'} |")
    print(f"\n{sum(r[3] for r in rows)}/{len(rows)} doors held")


if __name__ == "__main__":
    main()

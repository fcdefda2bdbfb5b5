"""Small real KBs for the browser tests, and a ``zhiwen serve`` over them.

:func:`build_home` fills a fresh ZHIWEN_HOME (hash embedder, no LLM) in a few seconds:

| KB | app | from ``../shared/data`` |
|---|---|---|
| ``manual`` | generic QA | zhiwen's own manual (``sample_kb``, bundled) |
| ``depts`` | generic QA | three near-identical department pages (:data:`DEPARTMENTS`, made up) |
| ``recipes`` | recipes | six HowToCook dishes |
| ``listings`` | listings | the first 80 Shanghai Lianjia rows |
| ``policy_visa`` / ``_airline`` / ``_general`` | policy | the visa table + five airline statutes |
| ``advisor_policy`` / ``advisor_faq`` + market tables | advisor | two statutes, the shipped FAQ, all CSVs |

:class:`Server` runs ``python -m zhiwen.cli.main serve`` on a free port with that home (the
tests launch it first and build the KBs while it imports: it opens KBs only on request).
Run this file to look at the page by hand over the same data::

    python tests/browser/ui_fixtures.py /tmp/zhiwen_ui_home --port 8123
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_DATA = Path(os.environ.get("ZHIWEN_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))
ADMIN_TOKEN = "ui-test-token"
API_KEY = "ui-test-key"  # every API call needs a key once one is configured (#29)

RECIPES = (
    "vegetable_dish/凉拌黄瓜.md",
    "vegetable_dish/凉拌豆腐.md",
    "vegetable_dish/凉拌金针菇.md",
    "meat_dish/可乐鸡翅.md",
    "soup/西红柿鸡蛋汤.md",
    "staple/蛋炒饭.md",
)
# the statutes the shipped kbs.toml names for the airline KB (the general KB takes them all)
POLICY_STATUTES = (
    "出境入境管理法",
    "外国人入境出境管理条例",
    "出境入境边防检查条例",
    "民用航空法",
    "上海口岸服务条例",
)
ADVISOR_STATUTES = ("契税法", "个人所得税法")
VISA_DIR = "chinatripinfo_visa_en/docs/source/_static/1_1_visa_policy"
# three pages alike but for the department (made-up facts): a follow-up such as 「它在哪个校区？」
# finds the right one only when the conversation's topic is carried over
DEPARTMENTS = {
    "物理学院": ("2001年", "燕园校区", "普通物理、理论力学、量子力学、固体物理"),
    "化学学院": ("1994年", "昌平校区", "无机化学、有机化学、物理化学、分析化学"),
    "数学学院": ("1995年", "大兴校区", "数学分析、高等代数、概率论、微分几何"),
}


def department_page(name: str) -> str:
    founded, campus, courses = DEPARTMENTS[name]
    full = f"北京大学{name}"
    return (
        f"# {full}\n\n{full}成立于{founded}，是北京大学的院系之一。\n\n"
        f"## 校区\n\n{full}位于{campus}，学院办公楼在校区东侧。\n\n"
        f"## 课程\n\n{full}开设的课程有：{courses}。\n"
    )


def missing_data() -> str | None:
    """Why the fixtures cannot be built here, or None."""
    for sub in ("lianjia_ershoufang", "cn_law_subset", "howtocook/dishes", VISA_DIR):
        if not (SHARED_DATA / sub).exists():
            return f"shared data not found: {SHARED_DATA / sub} (set ZHIWEN_SHARED_DATA)"
    return None


def server_env(home: Path) -> dict[str, str]:
    """The environment of the test server: its own home, hash embedder, no LLM, an admin token
    and one API key (the pages keep it for their tab, :attr:`Server.api_key`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZHIWEN_")}
    env.update(
        ZHIWEN_HOME=str(home),
        ZHIWEN_EMBEDDING__PROVIDER="hash",
        ZHIWEN_API__ADMIN_TOKEN=ADMIN_TOKEN,
        ZHIWEN_API__KEYS=json.dumps([API_KEY]),
        ZHIWEN_LOG_LEVEL="WARNING",
    )
    if "ZHIWEN_SHARED_DATA" in os.environ:
        env["ZHIWEN_SHARED_DATA"] = os.environ["ZHIWEN_SHARED_DATA"]
    return env


def _pick(src: Path, dst: Path, names: tuple[str, ...]) -> None:
    dst.mkdir(parents=True, exist_ok=True)
    for name in names:
        match = next((p for p in sorted(src.glob(f"{name}*.md")) if p.stem.split("(")[0] == name), None)
        if match is None:
            raise FileNotFoundError(f"statute {name} not in {src}")
        shutil.copy(match, dst / match.name)


def build_home(home: Path) -> dict[str, Any]:
    """Build every KB of the table above under ``home`` (created; must not hold KBs yet)."""
    from zhiwen.appkit.context import build_context
    from zhiwen.apps.advisor.kb import build_faq_kb, build_policy_kb
    from zhiwen.apps.advisor.market import build_market, market_path
    from zhiwen.apps.listings.ingest import load_lianjia
    from zhiwen.apps.policy import app as policy_app
    from zhiwen.apps.recipes.ingest import load_howtocook
    from zhiwen.config import LLMSettings, Settings
    from zhiwen.ingest import load_markdown, sample_kb_path
    from zhiwen.kb import close_all, open_kb

    home.mkdir(parents=True, exist_ok=True)
    settings = Settings(
        home=home, embedding={"provider": "hash"}, llm=LLMSettings(base_url=None), _env_file=None
    )
    ctx = build_context(settings, llm=None)
    data = home / "fixture_data"
    built: dict[str, Any] = {}

    kb = open_kb("manual", settings=settings, create=True, embedder="hash")
    built["manual"] = kb.index_corpus(load_markdown(sample_kb_path()), progress=False).chunks

    dishes = data / "dishes"
    for rel in RECIPES:
        (dishes / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SHARED_DATA / "howtocook" / "dishes" / rel, dishes / rel)
    depts = data / "depts"
    depts.mkdir(parents=True, exist_ok=True)
    for name in DEPARTMENTS:
        (depts / f"{name}.md").write_text(department_page(name), encoding="utf-8")
    kb = open_kb("depts", settings=settings, create=True, embedder="hash")
    built["depts"] = kb.index_corpus(load_markdown(depts), progress=False).chunks

    kb = open_kb("recipes", settings=settings, create=True, embedder="hash", app="recipes")
    built["recipes"] = kb.index_corpus(load_howtocook(dishes), progress=False).chunks

    corpus = load_lianjia(SHARED_DATA / "lianjia_ershoufang" / "ErshoufangSpider_sh.csv", limit=80)
    kb = open_kb("listings", settings=settings, create=True, embedder="hash", app="listings")
    built["listings"] = kb.index_documents(corpus.documents, chunks=corpus.chunks, progress=False).chunks

    policy_data = data / "policy"
    shutil.copytree(SHARED_DATA / VISA_DIR, policy_data / VISA_DIR)
    _pick(SHARED_DATA / "cn_law_subset", policy_data / "cn_law_subset", POLICY_STATUTES)
    built.update(policy_app.setup(policy_data, ctx, progress=False).kbs)

    laws = data / "advisor_laws"
    _pick(SHARED_DATA / "cn_law_subset", laws, ADVISOR_STATUTES)
    built["advisor_policy"] = build_policy_kb(ctx, laws, names=ADVISOR_STATUTES, progress=False)
    built["advisor_faq"] = build_faq_kb(ctx, progress=False)
    build_market(SHARED_DATA).save(market_path(home))
    close_all()
    return built


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``zhiwen serve`` in a subprocess over ``home``; :meth:`start` waits for ``/healthz``."""

    def __init__(self, home: Path, port: int | None = None) -> None:
        self.home = home
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = home / "server.log"
        self.api_key: str | None = API_KEY  # what a page enters in the key dialog (None: nothing)

    def launch(self) -> Server:
        """Start the process (it may import while the KBs are still being built)."""
        self.home.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "zhiwen.cli.main", "serve"]
        cmd += ["--host", "127.0.0.1", "--port", str(self.port)]
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                cmd, cwd=self.home, env=server_env(self.home), stdout=out, stderr=subprocess.STDOUT
            )
        return self

    def wait(self, timeout_s: float = 90.0) -> Server:
        """Wait until ``/healthz`` answers."""
        assert self.proc is not None, "launch() first"
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"zhiwen serve exited: {self.log.read_text('utf-8', 'replace')[-2000:]}")
            try:
                if httpx.get(self.url + "/healthz", timeout=1.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"zhiwen serve did not answer in {timeout_s:.0f}s")

    def start(self) -> Server:
        return self.launch().wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description="Build the browser-test KBs and serve the web UI over them.")
    parser.add_argument("home", type=Path)
    parser.add_argument("--port", type=int, default=8123)
    args = parser.parse_args()
    if not (args.home / "kbs").is_dir():
        t0 = time.perf_counter()
        print(build_home(args.home), f"{time.perf_counter() - t0:.1f}s")
    server = Server(args.home, args.port).start()
    print(f"serving {server.url} (Ctrl-C stops)")
    try:
        assert server.proc is not None
        server.proc.wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()

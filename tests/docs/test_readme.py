"""README.md, tested as written: every ```` ```bash ```` block runs against the real CLI.

Each block runs in bash (``set -eo pipefail``) in its own fresh ``ZHIWEN_HOME`` and a scratch
directory laid out like a clone: ``./`` holds the files the README names (:mod:`doc_data`) and
``scripts/``, ``../shared/data`` is the real data (or its subset, where the block's note says
``data="subset"``). For every block: the instant ``hash`` embedder (the vectors are not what a
block shows), no LLM, and a free port instead of 8000. ``curl`` fails on an HTTP error
(``--fail-with-body``). What a block's note asks for (an equivalent, replacements, a server in
the background …) is described in :mod:`readme_blocks`; blocks without a note run as written, and
a block in a shell dialect the test does not know fails :func:`test_every_block_is_accounted_for`.

The ``zhiwen`` on the blocks' PATH forks from a pre-imported CLI (:mod:`support.cli_zygote`): each
command is still its own process with its own fds, env and exit status, without paying the CLI's
~3 s import ~40 times. ``ZHIWEN_DOCTEST_REAL_CLI=1`` runs the installed ``zhiwen`` instead;
``ZHIWEN_DOCTEST_OUT=DIR`` keeps each block's script and output there.

Assertions are few on purpose (the commands' wording changes): exit status 0, plus a phrase or
two per block in :data:`EXPECT`.

    python tests/docs/test_readme.py      # the table: each block, how it runs, and why
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from readme_blocks import Block, parse_readme, script

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
SHARED_DATA = Path(os.environ.get("ZHIWEN_SHARED_DATA", REPO.parent / "shared" / "data"))
BLOCKS = parse_readme(README.read_text("utf-8"))
SHELL = [b for b in BLOCKS if b.lang == "bash"]
NOT_SHELL = {"python", "toml", "text"}  # shown, not run: code for a reader, a tree, a config
BLOCK_TIMEOUT_S = 300

# a phrase or two a block's output must hold (by block id: the heading's slug, -2 … for more)
EXPECT: dict[str, list[str]] = {
    "quickstart": ['"demo"'],
    "using-it": ["西红柿炒鸡蛋", "理解为"],
    "apps-one-setup-each": ["文本索引", "月供"],
    "evaluating-and-serving": ["nDCG@10"],
    "indexing-searchable-in-seconds-vectors-behind-safe-to-interrupt": ["RCEP"],
    "documents-pdf-text-and-scanned-word-powerpoint-excel-html-text": ["policies"],
    "upload-over-the-api": ['"job_id"'],
    "http-api": ['"code":0'],
    "安全-security-model": ['"code":0'],
}

PRELUDE = r"""
set -eo pipefail
DOCTEST_PIDS=()
stop_background() {
  local p
  for p in "${DOCTEST_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
}
trap stop_background EXIT
wait_healthz() {  # $1: the server's pid
  local i
  for i in $(seq 1 900); do
    command curl -sf "http://127.0.0.1:$ZHIWEN_API__PORT/healthz" >/dev/null 2>&1 && return 0
    kill -0 "$1" 2>/dev/null || { echo "doctest: the server exited before /healthz answered" >&2; return 1; }
    sleep 0.1
  done
  echo "doctest: /healthz did not answer within 90 s" >&2
  return 1
}
in_background() { "$@" & DOCTEST_PIDS+=("$!"); wait_healthz "$!"; }
curl() { command curl -sS --fail-with-body "$@"; echo; }
newest_job() {
  "$DOCTEST_PYTHON" -c 'import os, sqlite3
db = sqlite3.connect(os.path.join(os.environ["ZHIWEN_HOME"], "jobs.sqlite3"))
print(db.execute("SELECT id FROM jobs ORDER BY created_at DESC LIMIT 1").fetchone()[0])'
}
wait_jobs() {
  "$DOCTEST_PYTHON" -c 'import os, sqlite3, sys, time
db = os.path.join(os.environ["ZHIWEN_HOME"], "jobs.sqlite3")
for _ in range(600):
    busy = sqlite3.connect(db).execute("SELECT COUNT(*) FROM jobs WHERE status IN (\"queued\", \"running\")")
    if busy.fetchone()[0] == 0:
        sys.exit(0)
    time.sleep(0.1)
sys.exit("doctest: upload jobs still running after 60 s")'
}
"""
BACKGROUND = r"""
zhiwen() { case "$1" in serve|demo) in_background command zhiwen "$@" ;; *) command zhiwen "$@" ;; esac; }
"""
SERVER = r"""
in_background zhiwen demo >"$DOCTEST_TMP/demo.log" 2>&1
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _base_env(tmp: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "ZHIWEN_EMBEDDING__PROVIDER": "hash",
        "HF_HUB_OFFLINE": "1",
        "ZHIWEN_HOME": str(tmp / "unused-home"),
        "DOCTEST_PYTHON": sys.executable,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    for name in (
        "ZHIWEN_LLM__BASE_URL",
        "ZHIWEN_STORE",
        "ZHIWEN_API__KEYS",
        "ZHIWEN_API__ADMIN_TOKEN",
        "COLUMNS",
    ):
        env.pop(name, None)
    return env


@pytest.fixture(scope="module")
def doc_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The blocks' common environment, with the zygote's ``zhiwen`` first on PATH."""
    tmp = tmp_path_factory.mktemp("doctest")
    env = _base_env(tmp)
    if os.environ.get("ZHIWEN_DOCTEST_REAL_CLI") == "1":
        yield env
        return
    from support.cli_zygote import Zygote

    keep = os.environ.get("ZHIWEN_DOCTEST_OUT")
    log = Path(keep) / "zygote.log" if keep else tmp / "zygote.log"  # each command's CPU seconds
    log.parent.mkdir(parents=True, exist_ok=True)
    zygote = Zygote(tmp / "zhiwen.sock", env=env, log=log).start()
    try:
        extra = zygote.client_env()
        yield {**env, **extra, "PATH": f"{extra['ZHIWEN_DOCTEST_BIN']}{os.pathsep}{env['PATH']}"}
    finally:
        zygote.stop()


@pytest.fixture(scope="module")
def data_subset(tmp_path_factory: pytest.TempPathFactory) -> Path | None:
    if not SHARED_DATA.is_dir():
        return None
    from doc_data import make_subset

    return make_subset(SHARED_DATA, tmp_path_factory.mktemp("subset") / "data")


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory, data_subset: Path | None) -> Path:
    """The newcomer's files, made once and copied into each block's directory."""
    from doc_data import make_files

    root = tmp_path_factory.mktemp("files")
    make_files(root, data_subset / "rgb_zh_retrieval" if data_subset else None)
    return root


def _workspace(tmp: Path, files: Path, data: Path | None) -> Path:
    """``tmp/clone`` (the block's cwd) beside ``tmp/shared/data``."""
    cwd = tmp / "clone"
    shutil.copytree(files, cwd, symlinks=True)
    (cwd / "scripts").symlink_to(REPO / "scripts")
    if data is not None:
        (tmp / "shared").mkdir()
        (tmp / "shared" / "data").symlink_to(data)
    return cwd


def _requires(block: Block) -> None:
    if block.note.get("requires") == "ocr":
        pytest.importorskip(
            "rapidocr_onnxruntime", reason="the OCR extra is not installed (pip install -e '.[ocr]')"
        )


def _params() -> list[Any]:
    params = []
    for block in SHELL:
        marks = [pytest.mark.slow] if "slow" in block.note.flags else []
        if "../shared/data" in block.code + block.note.body + block.note.get("before"):
            marks.append(pytest.mark.shared_data)
        params.append(pytest.param(block, id=block.id, marks=marks))
    return params


@pytest.mark.parametrize("block", _params())
def test_block(
    block: Block, tmp_path: Path, doc_env: dict[str, str], files: Path, data_subset: Path | None
) -> None:
    if "skip" in block.note.flags:
        pytest.skip(block.note.get("reason"))
    _requires(block)
    body = script(block, port=(port := _free_port()))
    data: Path | None = SHARED_DATA
    if "../shared/data" in body:
        if not SHARED_DATA.is_dir():
            pytest.skip(f"shared data not found at {SHARED_DATA} (present in CI; set ZHIWEN_SHARED_DATA)")
        data = data_subset if block.note.get("data") == "subset" else SHARED_DATA
    cwd = _workspace(tmp_path, files, data if SHARED_DATA.is_dir() else None)
    env = {
        **doc_env,
        "ZHIWEN_HOME": str(tmp_path / "home"),
        "ZHIWEN_API__PORT": str(port),
        "DOCTEST_TMP": str(tmp_path),
    }
    flags = block.note.flags
    full = (
        PRELUDE + (BACKGROUND if "background" in flags else "") + (SERVER if "server" in flags else "") + body
    )
    done = subprocess.run(
        ["bash", "-c", full],
        cwd=cwd,
        env=env,
        input=block.note.get("stdin"),
        capture_output=True,
        text=True,
        timeout=BLOCK_TIMEOUT_S,
    )
    out = done.stdout + done.stderr
    if os.environ.get("ZHIWEN_DOCTEST_OUT"):  # a folder: each block's script and output, to read
        keep = Path(os.environ["ZHIWEN_DOCTEST_OUT"])
        keep.mkdir(parents=True, exist_ok=True)
        (keep / f"{block.id}.sh").write_text(body, "utf-8")
        (keep / f"{block.id}.out").write_text(f"exit {done.returncode}\n{out}", "utf-8")
    assert done.returncode == 0, (
        f"README block {block.id} (line {block.line}) exited {done.returncode}:\n{out[-4000:]}"
    )
    for phrase in EXPECT.get(block.id, []):
        assert phrase in out, f"README block {block.id}: {phrase!r} not in its output:\n{out[-4000:]}"


def test_every_block_is_accounted_for() -> None:
    """No block in a shell the test skips silently; every expectation names a block that exists."""
    unknown = [(b.id, b.lang) for b in BLOCKS if b.lang != "bash" and b.lang not in NOT_SHELL]
    assert not unknown, f"blocks the doc test neither runs nor knows: {unknown} (use ```bash)"
    ids = [b.id for b in SHELL]
    assert len(ids) == len(set(ids))
    assert not set(EXPECT) - set(ids), f"EXPECT names blocks that are gone: {set(EXPECT) - set(ids)}"
    for block in SHELL:  # a stale replace or a bad note fails here, before anything runs
        script(block, port=8123)


INLINE = re.compile(r"`(zhiwen [^`]+)`")
PLACEHOLDERS = {"COMMAND", "glossary"}  # 「zhiwen COMMAND --help」, the README's example app


def _inline_commands() -> list[str]:
    """The `zhiwen …` spans of the README's prose (its blocks run in test_block)."""
    prose = re.sub(r"^```.*?^```", "", README.read_text("utf-8"), flags=re.S | re.M)
    return sorted(set(INLINE.findall(prose)))


def test_inline_commands_are_real() -> None:
    """Every `zhiwen …` the prose names is a command, with the options it shows."""
    import typer

    from zhiwen.cli.main import app

    wrong = []
    for span in _inline_commands():
        command = typer.main.get_command(app)  # typer's own click: groups are known by .commands
        words = span.split()[1:]
        while words and words[0] in getattr(command, "commands", {}):
            command = command.commands[words.pop(0)]  # type: ignore[attr-defined]
        if words and words[0] in PLACEHOLDERS:
            continue
        known = {o for p in command.params for o in (*p.opts, *p.secondary_opts)} | {"--help"}
        wrong += [f"{span}: {w}" for w in words if w.startswith("-") and w.split("=")[0] not in known]
        if hasattr(command, "commands") and words and not words[0].startswith("-"):
            wrong.append(f"{span}: no command {words[0]!r}")
    assert not wrong, f"README names commands or options the CLI does not have: {wrong}"


SCRIPT = re.compile(r"`python ((?:bench|tests|scripts)/\S+\.py)([^`]*)`")


def test_inline_scripts_are_real() -> None:
    """Every `python bench/….py --option` the prose names exists and still reads that option."""
    prose = re.sub(r"^```.*?^```", "", README.read_text("utf-8"), flags=re.S | re.M)
    wrong = []
    for path, args in SCRIPT.findall(prose):
        source = REPO / path
        if not source.is_file():
            wrong.append(f"{path}: no such file")
            continue
        text = source.read_text("utf-8")
        wrong += [f"{path}: {opt}" for opt in re.findall(r"--[\w-]+", args) if f'"{opt}"' not in text]
    assert not wrong, f"README names scripts or options that are gone: {wrong}"


def report() -> str:
    """A markdown table: each bash block, how the doc test runs it, and the note's reason."""
    rows = ["| block | line | how it runs | why |", "|---|---|---|---|"]
    for b in SHELL:
        extra = sorted(b.note.flags - {"skip"})
        extra += [f'{k}="{b.note.get(k)}"' for k in ("requires", "before", "after") if b.note.get(k)]
        extra += ["stdin"] if b.note.get("stdin") else []
        how = b.how + (f" ({'; '.join(extra)})" if extra else "")
        rows.append(f"| `{b.id}` | {b.line} | {how} | {b.note.get('reason')} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(report())

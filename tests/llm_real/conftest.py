"""Fixtures of the ``llm_real`` tests: a real OpenAI-compatible server on loopback (#31).

``real_llm_url`` finds the server, in this order:

1. ``ZHIWEN_LLM_REAL_URL`` (any OpenAI ``/v1`` base URL: a bigger local model works the same);
2. ``scripts/local-llm.sh``'s server on ``127.0.0.1:$ZHIWEN_LLM_PORT`` (8931), when it answers;
3. that script's build, started (seconds) when it is present and ``ZHIWEN_LLM_REAL=1`` asks for it
   (never in a plain ``scripts/test.sh`` run: there the tests stay skipped, and fast);

and skips every test with the reason otherwise. Every call goes through a
:class:`~llm_real.recording.RecordingProxy`, so a test sees the model's raw replies.

The KBs (hash embedder, from ``../shared/data``) are built once per session in a temporary home.
"""

from __future__ import annotations

import os
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from zhiwen.appkit.app import AppContext
from zhiwen.config import LLMSettings, Settings, reset_settings_cache

from .recording import RecordingProxy

REPO = Path(__file__).resolve().parents[2]
LLM_HOME = Path(os.environ.get("ZHIWEN_LLM_HOME", Path.home() / ".cache" / "zhiwen-llm"))
PORT = int(os.environ.get("ZHIWEN_LLM_PORT", "8931"))
MODEL = os.environ.get("ZHIWEN_LLM_REAL_MODEL", "gemma-3-270m")
SHARED = Path(os.environ.get("ZHIWEN_SHARED_DATA", REPO.parent / "shared" / "data"))


#: a model on two shared CPU cores takes 10-100 s a call: the bounded stages get room to answer
#: (else every classification, rewrite and condense call times out and only the fallback is seen)
CPU_MODEL_ENV = {
    "ZHIWEN_EMBEDDING__PROVIDER": "hash",
    "ZHIWEN_CONVERSATION__CONDENSE_TIMEOUT_S": "30",
    "ZHIWEN_POLICY__INTENT_CLASSIFIER_TIMEOUT": "120",
    "ZHIWEN_POLICY__REWRITE_TIMEOUT": "120",
}


def _answers(base_url: str) -> bool:
    root = base_url.rstrip("/").removesuffix("/v1")
    for path in ("/health", "/v1/models"):
        try:
            with urllib.request.urlopen(root + path, timeout=2) as resp:
                if resp.status == 200:
                    return True
        except OSError:
            continue
    return False


def _built() -> bool:
    return any(LLM_HOME.glob("build-*/bin/llama-server")) and any(LLM_HOME.glob("models/*.gguf"))


def find_server() -> tuple[str | None, str]:
    """``(base_url, "")`` of a server that answers, or ``(None, why not)``."""
    explicit = os.environ.get("ZHIWEN_LLM_REAL_URL")
    if explicit:
        if _answers(explicit):
            return explicit, ""
        return None, f"ZHIWEN_LLM_REAL_URL={explicit} does not answer"
    local = f"http://127.0.0.1:{PORT}/v1"
    if _answers(local):
        return local, ""
    if not _built():
        return None, f"no real LLM server on {local} and no build (run: bash scripts/local-llm.sh)"
    if os.environ.get("ZHIWEN_LLM_REAL") != "1":
        return None, (
            f"no real LLM server on {local}; a build is present: start it (bash scripts/local-llm.sh) "
            "or set ZHIWEN_LLM_REAL=1"
        )
    started = subprocess.run(
        ["bash", str(REPO / "scripts" / "local-llm.sh"), "start"], capture_output=True, text=True, timeout=200
    )
    if started.returncode != 0 or not _answers(local):
        return None, f"scripts/local-llm.sh start failed: {started.stderr[-300:]}"
    return local, ""


@pytest.fixture(scope="session")
def real_llm_url() -> str:
    url, why = find_server()
    if url is None:
        pytest.skip(why)
    return url


@pytest.fixture(scope="session")
def recorder(real_llm_url: str) -> Iterator[RecordingProxy]:
    with RecordingProxy(real_llm_url) as proxy:
        yield proxy


@pytest.fixture(scope="session")
def real_home(tmp_path_factory: pytest.TempPathFactory, real_llm_url: str) -> Iterator[Path]:
    """A session's ZHIWEN_HOME with the KBs the paths need (hash embedder), built once."""
    if not SHARED.is_dir():
        pytest.skip(f"shared data not found at {SHARED}")
    home = tmp_path_factory.mktemp("llm_real_home")
    saved = {k: os.environ.get(k) for k in ("ZHIWEN_HOME", *CPU_MODEL_ENV)}
    os.environ["ZHIWEN_HOME"] = str(home)
    os.environ.update(CPU_MODEL_ENV)
    reset_settings_cache()
    yield home
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    reset_settings_cache()


@pytest.fixture(scope="session")
def offline_ctx(real_home: Path) -> AppContext:
    from zhiwen.appkit.context import build_context

    return build_context(Settings(), llm=None)


@pytest.fixture(scope="session")
def real_ctx(real_home: Path, recorder: RecordingProxy) -> AppContext:
    """The product's context with the real model behind the recording proxy (temperature 0:
    the checks below must hold for the most likely reply, not only for a lucky sample)."""
    from zhiwen.appkit.context import build_context
    from zhiwen.llm import clear_llm_cache

    clear_llm_cache()
    llm = LLMSettings(
        base_url=recorder.base_url, model=MODEL, api_key="local", timeout_s=120, max_retries=0, temperature=0
    )
    return build_context(Settings().model_copy(update={"llm": llm}))


_BUILT: set[str] = set()


def ensure_app(app: str, ctx: AppContext) -> None:
    """Build an app's KBs once per session (``app.setup`` over the shared data)."""
    if app in _BUILT:
        return
    from zhiwen.appkit.registry import load_apps

    load_apps()[app].setup(SHARED, ctx, progress=False)
    _BUILT.add(app)


def ensure_statutes(ctx: AppContext) -> None:
    if "statutes" in _BUILT:
        return
    from zhiwen.kb import open_kb

    kb = open_kb("statutes", settings=ctx.settings, create=True, embedder="hash")
    kb.index_path(SHARED / "cn_law_subset", fmt="markdown", prune=True, progress=False)
    _BUILT.add("statutes")

"""The test command's logic (#30), without running the suite: a newcomer's `bash scripts/test.sh`
installs no torch and nothing into the system unless asked (``--with rerank``, ``--system``,
``CI=true``), says up front what it skips and how to enable it, and `.ci/run` still runs exactly
that command with ``CI=true``. Checked through ``--dry-run`` on a copy of the script."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "test.sh"
CI_RUN = ROOT / ".ci" / "run"
HAS_BASH = shutil.which("bash") is not None
pytestmark = pytest.mark.skipif(not HAS_BASH, reason="needs bash")

TORCH_WHEEL = (
    any(Path("/opt/wheels").glob("torch-*+cpu-cp311-*.whl")) if Path("/opt/wheels").is_dir() else False
)
SYSTEM_CAPABLE = hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get") is not None


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A copy of the script in an empty checkout: no .venv, so what it plans depends on flags only."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(SCRIPT, tmp_path / "scripts" / "test.sh")
    (tmp_path / "scripts" / "ensure-postgres.sh").write_text("exit 0\n")
    return tmp_path


def run(repo: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v for k, v in os.environ.items() if k not in ("CI", "ZHIWEN_TEST_EXTRAS", "ZHIWEN_TEST_SYSTEM")
    }
    return subprocess.run(
        ["bash", str(repo / "scripts" / "test.sh"), *args],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("path", [SCRIPT, CI_RUN])
def test_the_scripts_parse(path: Path) -> None:
    assert subprocess.run(["bash", "-n", str(path)], check=False).returncode == 0


def test_a_newcomers_run_installs_no_torch_and_nothing_into_the_system(repo: Path) -> None:
    r = run(repo, "--dry-run")
    assert r.returncode == 0, r.stderr
    assert "pip install -e '.[dev,qdrant,ocr]'" in r.stdout and "rerank" not in r.stdout.split("skip:")[0]
    assert "install into the system: nothing" in r.stdout
    assert "skip: real cross-encoder tests (no torch)   enable: --with rerank" in r.stdout
    assert "enable: --system" in r.stdout  # PostgreSQL (and chromium where absent)
    assert not (repo / ".venv").exists()  # a dry run changes nothing


@pytest.mark.parametrize(
    ("args", "env"),
    [(("--with", "rerank"), {}), (("--with=rerank,ocr",), {}), ((), {"ZHIWEN_TEST_EXTRAS": "rerank"})],
)
def test_rerank_is_installed_when_asked(repo: Path, args: tuple[str, ...], env: dict[str, str]) -> None:
    r = run(repo, *args, "--dry-run", **env)
    assert r.returncode == 0 and "pip install -e '.[dev,qdrant,ocr,rerank]'" in r.stdout
    assert "no torch" not in r.stdout


@pytest.mark.parametrize(("args", "env"), [(("--system",), {}), ((), {"ZHIWEN_TEST_SYSTEM": "1"})])
def test_system_pieces_only_with_the_flag(repo: Path, args: tuple[str, ...], env: dict[str, str]) -> None:
    r = run(repo, *args, "--dry-run", **env)
    assert r.returncode == 0
    if SYSTEM_CAPABLE:
        assert "install into the system: scripts/ensure-postgres.sh" in r.stdout
        assert "enable: --system" not in r.stdout
    else:
        assert "needs root and apt-get" in r.stderr and "install into the system: nothing" in r.stdout


def test_ci_runs_everything(repo: Path) -> None:
    r = run(repo, "--dry-run", CI="true")
    assert r.returncode == 0
    if TORCH_WHEEL:
        assert ",rerank]'" in r.stdout and "(torch: /opt/wheels/torch-" in r.stdout
    else:
        assert "enable: --with rerank" in r.stdout
    if SYSTEM_CAPABLE:
        assert "scripts/ensure-postgres.sh" in r.stdout


def test_pytest_arguments_pass_through(repo: Path) -> None:
    r = run(repo, "--dry-run", "-k", "store", "-x")
    xdist = "-n auto --maxprocesses 4 --dist loadfile"
    assert f"python -m pytest -q -p no:cacheprovider {xdist} -k store -x" in r.stdout
    r = run(repo, "--dry-run", "-x", ZHIWEN_TEST_WORKERS="0")  # one process: no xdist at all
    assert "python -m pytest -q -p no:cacheprovider -x" in r.stdout
    r = run(repo, "--dry-run", "--", "--system")  # after --, even our own flags go to pytest
    assert "loadfile --system" in r.stdout and "install into the system: nothing" in r.stdout


def test_bad_and_help(repo: Path) -> None:
    bad = run(repo, "--with", "cuda", "--dry-run")
    assert bad.returncode == 2 and "unknown extra 'cuda'" in bad.stderr
    assert run(repo, "--with").returncode == 2
    usage = run(repo, "--help")
    assert usage.returncode == 0 and "--with rerank" in usage.stdout and "--system" in usage.stdout


def test_ci_run_is_the_readme_command_with_ci_true(tmp_path: Path) -> None:
    """.ci/run → `bash scripts/test.sh` with CI defaulted to true (kept if CI set it)."""
    (tmp_path / ".ci").mkdir()
    (tmp_path / "scripts").mkdir()
    shutil.copy(CI_RUN, tmp_path / ".ci" / "run")
    (tmp_path / "scripts" / "test.sh").write_text('echo "CI=$CI args=$#"\n')
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    out = subprocess.run(
        ["bash", str(tmp_path / ".ci" / "run")], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "CI=true args=0"
    out = subprocess.run(
        ["bash", str(tmp_path / ".ci" / "run")],
        env={**env, "CI": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "CI=1 args=0"

"""``/docs`` and ``/redoc`` work offline (assets from the ``fastapi-offline`` package, no CDN);
a settings PUT on a full or read-only disk is a clear 503, the settings intact, no orphan file."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from zhiwen.api.app import create_app
from zhiwen.config import APISettings, LLMSettings, Settings

ADMIN = {"Authorization": "Bearer t"}


def _client(home: Path) -> TestClient:
    cfg = Settings(
        home=home, llm=LLMSettings(base_url=None), api=APISettings(admin_token="t"), _env_file=None
    )
    return TestClient(create_app(cfg), raise_server_exceptions=False)


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_docs_reference_only_local_assets(tmp_path: Path, page: str) -> None:
    client = _client(tmp_path)
    html = client.get(page)
    assert html.status_code == 200
    urls = re.findall(r"""(?:src|href)=["']([^"']+)["']|url: ?['"]([^'"]+)['"]""", html.text)
    urls = [a or b for a, b in urls]
    assert urls and all(u.startswith("/") and not u.startswith("//") for u in urls), urls
    assert "cdn" not in html.text.lower()
    for url in urls:
        assert client.get(url).status_code == 200, url


# -- a settings PUT on a disk that cannot take it -----------------------------------------------
@pytest.fixture
def tiny_home(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs (needs root: mount)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    home = tmp_path / "tiny"
    home.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(home)], check=False).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield home
    finally:
        subprocess.run(["umount", "-l", str(home)], check=False)


def _fill(directory: Path) -> None:
    fd = os.open(directory / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"x" * 1024)
    except OSError:
        pass
    finally:
        os.close(fd)


@pytest.mark.parametrize("fault", ["full", "read-only"])
def test_settings_put_on_a_broken_disk(tiny_home: Path, fault: str) -> None:
    client = _client(tiny_home)
    assert (
        client.put("/admin/settings", json={"rerank": {"score_threshold": 0.3}}, headers=ADMIN).status_code
        == 200
    )
    stored = (tiny_home / "dynamic_settings.json").read_text(encoding="utf-8")
    if fault == "full":
        _fill(tiny_home)
    else:
        subprocess.run(["mount", "-o", "remount,ro", str(tiny_home)], check=True)
    big = {"rerank": {"score_threshold": 0.1}, "adaptive": {"keywords_profile": {"broad": ["词" * 40] * 300}}}
    response = client.put("/admin/settings", json=big, headers=ADMIN)
    assert response.status_code == 503
    body = response.json()
    assert body["code"] == 2002 and "设置未保存" in body["message"]
    assert ("磁盘空间不足" if fault == "full" else "只读") in body["message"]
    assert (tiny_home / "dynamic_settings.json").read_text(encoding="utf-8") == stored
    assert sorted(p.name for p in tiny_home.iterdir()) == sorted(
        ["dynamic_settings.json", *(["filler"] if fault == "full" else [])]
    )  # no orphan temporary file
    overrides = client.get("/admin/settings", headers=ADMIN).json()["data"]["overrides"]
    assert overrides == {"rerank": {"score_threshold": 0.3}}
    assert client.delete("/admin/settings", headers=ADMIN).status_code == 503  # reset too

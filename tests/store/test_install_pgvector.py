"""scripts/install-pgvector.sh derives its trixie source entry from the machine's apt sources.

``--print-source`` runs only the derivation, against fixture apt directories named through
``APT_CONFIG``; nothing is installed and no network is used.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "install-pgvector.sh"

pytestmark = pytest.mark.skipif(
    shutil.which("bash") is None or shutil.which("apt-config") is None, reason="needs bash and apt-config"
)

MIRROR = "http://127.0.0.1:3142/debian"  # e.g. an apt-cacher on this machine

DEB822 = f"""Types: deb
# a comment inside the stanza
URIs: {MIRROR}
Suites: bookworm bookworm-updates
Components: main contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
Check-Valid-Until: no

Types: deb
URIs: {MIRROR}-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""


def print_source(
    tmp_path: Path, files: dict[str, str], suite: str = "bookworm"
) -> subprocess.CompletedProcess[str]:
    etc = tmp_path / "etc"
    (etc / "sources.list.d").mkdir(parents=True)
    for name, text in files.items():
        (etc / name).write_text(text, encoding="utf-8")
    conf = tmp_path / "apt.conf"
    conf.write_text(
        f'Dir::Etc::sourcelist "{etc}/sources.list";\nDir::Etc::sourceparts "{etc}/sources.list.d";\n',
        encoding="utf-8",
    )
    env = {**os.environ, "APT_CONFIG": str(conf), "ZHIWEN_APT_BASE_SUITE": suite}
    return subprocess.run(
        ["bash", str(SCRIPT), "--print-source"], env=env, capture_output=True, text=True, timeout=30
    )


def entry(result: subprocess.CompletedProcess[str]) -> list[str]:
    assert result.returncode == 0, result.stderr
    return [line for line in result.stdout.splitlines() if line and not line.startswith("#")]


def test_deb822_entry_keeps_uris_and_options_and_changes_only_type_suite_components(tmp_path: Path) -> None:
    res = print_source(tmp_path, {"sources.list.d/debian.sources": DEB822})
    assert "zhiwen-trixie-src.sources" in res.stdout
    assert entry(res) == [
        "Types: deb-src",
        f"URIs: {MIRROR}",
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg",
        "Check-Valid-Until: no",
        "Suites: trixie",
        "Components: main",
    ]


def test_deb822_skips_disabled_and_source_only_stanzas_and_keeps_inline_keys(tmp_path: Path) -> None:
    text = (
        "Types: deb\nURIs: file:/srv/old\nSuites: bookworm\nComponents: main\nEnabled: no\n\n"
        "Types: deb-src\nURIs: file:/srv/src-only\nSuites: bookworm\nComponents: main\n\n"
        "Types: deb deb-src\nURIs: file:/srv/mirror/debian\nSuites: bookworm\nComponents: main\n"
        "Signed-By:\n -----BEGIN PGP PUBLIC KEY BLOCK-----\n .\n mQINBF\n"
        " -----END PGP PUBLIC KEY BLOCK-----\n"
    )
    res = print_source(tmp_path, {"sources.list.d/a.sources": text, "sources.list.d/b.sources": DEB822})
    lines = entry(res)
    assert lines[:3] == ["Types: deb-src", "URIs: file:/srv/mirror/debian", "Signed-By:"]
    assert " -----END PGP PUBLIC KEY BLOCK-----" in lines
    assert lines[-2:] == ["Suites: trixie", "Components: main"]


def test_one_line_sources_list_with_options(tmp_path: Path) -> None:
    text = (
        "# deb http://127.0.0.1/commented bookworm main\n"
        f"deb [arch=amd64 signed-by=/k.gpg] {MIRROR}-security bookworm-security main\n"
        f"deb [arch=amd64 signed-by=/k.gpg] {MIRROR} bookworm main contrib\n"
    )
    res = print_source(tmp_path, {"sources.list": text})
    assert "zhiwen-trixie-src.list" in res.stdout
    assert entry(res) == [f"deb-src [arch=amd64 signed-by=/k.gpg] {MIRROR} trixie main"]


def test_no_entry_for_the_release_fails_clearly(tmp_path: Path) -> None:
    res = print_source(tmp_path, {"sources.list.d/debian.sources": DEB822}, suite="jammy")
    assert res.returncode == 1
    assert "no enabled 'deb' entry for suite jammy" in res.stderr


def test_scripts_name_no_remote_host() -> None:
    """Hosts come from the machine's configuration; scripts may only name loopback addresses."""
    urls = []
    for folder in ("scripts", ".ci"):
        for path in sorted((ROOT / folder).rglob("*")) if (ROOT / folder).is_dir() else []:
            if path.is_file():
                text = path.read_text(encoding="utf-8", errors="replace")
                urls += [(path.name, u) for u in re.findall(r"https?://[^\s\"'/:]+", text)]
    remote = [(f, u) for f, u in urls if not re.fullmatch(r"https?://(127\.0\.0\.1|localhost|\[::1\])", u)]
    assert remote == []

"""``zhiwen backup`` / ``zhiwen restore``: a consistent snapshot of a live home, and putting it back.

A backup is a folder:

* every file of the home, each SQLite database (KB stores, ``curation.sqlite``, the question
  log, sessions, the upload queue, the embedding cache, table catalogues — found by their
  header, not by name) copied with SQLite's online backup API, the others byte for byte; a
  KB's folder is copied holding the KB's writer lock, so an index run or curation change waits
  for a moment while searches and answers go on;
* ``postgres/N.dump`` — for a home whose KBs or question log live in PostgreSQL, a
  ``pg_dump`` (custom format, one snapshot) of exactly those schemas (``zw_<kb>``,
  ``zhiwen_questions``);
* ``backup.json`` — written last: format version, zhiwen version, the size and SHA-256 of every
  file. The folder is built as ``DIR.partial`` and renamed when complete, so a backup that was
  cut short is recognisable and refused.

Left out: lock files, SQLite's ``-wal``/``-shm`` (the online copy includes their content), an
import's staging KBs, downloaded models (``hub/``) and the server's ``server.json``.

:func:`restore_home` checks every checksum first (a mismatch, a missing or unexpected file is
refused with the file's name), refuses while a server runs on the target home, moves the current
home aside (``HOME.before-restore-<time>``), puts the files in place and ``pg_restore``s the
dumps into the databases the restored KBs name.

Example::

    report = backup_home(Path("/backups/2026-11-28"))
    restore_home(Path("/backups/2026-11-28"), home=Path("/srv/zhiwen"))
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import hashlib
import itertools
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from zhiwen import __version__
from zhiwen.config import Settings, get_settings
from zhiwen.errors import InvalidParameter, StoreUnavailable
from zhiwen.kb.config import mask_url
from zhiwen.kb.writer import LOCK_DIR, kb_lock
from zhiwen.portable.export import SPOOL_DIR
from zhiwen.portable.importer import STAGING_DIR
from zhiwen.portable.manifest import Member, bundle_error
from zhiwen.portable.progress import NullSteps, Steps
from zhiwen.portable.sqlite_rows import backup_database

BACKUP_FORMAT = "zhiwen-home-backup"
BACKUP_VERSION = 1
MANIFEST = "backup.json"
PARTIAL = ".partial"
PG_DIR = "postgres"
_SQLITE_MAGIC = b"SQLite format 3\x00"
#: folders of the home that are not its data (downloads, an import's staging KBs, locks)
_SKIP_TOP = {"hub", SPOOL_DIR}
_SKIP_ANYWHERE = {STAGING_DIR, LOCK_DIR}
_SKIP_SUFFIXES = ("-wal", "-shm", "-journal", ".lock")
_SKIP_NAMES = {"server.json"}
_READ = 1 << 20
_QUESTION_SCHEMA = "zhiwen_questions"


class PgDump(BaseModel):
    file: str
    url: str  # masked: the restore takes the real URL from the restored KBs / settings
    schemas: list[str]


class BackupManifest(BaseModel):
    format: str = BACKUP_FORMAT
    format_version: int = BACKUP_VERSION
    zhiwen_version: str
    created_at: str
    home: str
    files: dict[str, Member] = Field(default_factory=dict)
    postgres: list[PgDump] = Field(default_factory=list)


@dataclass(slots=True)
class BackupReport:
    path: str
    files: int = 0
    sqlite: int = 0
    bytes: int = 0
    postgres: list[str] = field(default_factory=list)
    seconds: float = 0.0
    moved_aside: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _is_sqlite(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(16) == _SQLITE_MAGIC
    except OSError:
        return False


def _home_files(home: Path) -> Iterator[Path]:
    """The files to back up, relative to ``home`` (see the module docstring for what is left out)."""
    for root, dirs, files in os.walk(home):
        rel_root = Path(root).relative_to(home)
        top = rel_root == Path(".")
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_ANYWHERE and not (top and d in _SKIP_TOP))
        for name in sorted(files):
            if name in _SKIP_NAMES or name.endswith(_SKIP_SUFFIXES) or ".tmp" in name:
                continue
            yield rel_root / name


def _sha256(path: Path) -> Member:
    sha, size = hashlib.sha256(), 0
    with open(path, "rb") as f:
        while block := f.read(_READ):
            sha.update(block)
            size += len(block)
    return Member(bytes=size, sha256=sha.hexdigest())


def backup_home(dest: Path, *, settings: Settings | None = None, steps: Steps | None = None) -> BackupReport:
    """Snapshot the home of ``settings`` into the new folder ``dest`` (see the module docstring)."""
    settings = settings or get_settings()
    steps = steps or NullSteps()
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise InvalidParameter(
            f"{dest} is not empty", message=f"备份目录 {dest} 已存在且不为空，请换一个新目录"
        )
    start = time.perf_counter()
    partial = dest.with_name(dest.name + PARTIAL)
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    report = BackupReport(path=str(dest))
    manifest = BackupManifest(
        zhiwen_version=__version__,
        created_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        home=str(settings.home),
    )
    try:
        files = list(_home_files(settings.home)) if settings.home.is_dir() else []
        steps.start("备份文件", len(files))
        for kb, group in itertools.groupby(files, key=lambda rel: _kb_of(settings, rel)):
            # a KB's files from one moment: its writers wait, its searches go on
            with kb_lock(settings, kb).hold() if kb else contextlib.nullcontext():
                for rel in group:
                    if _copy_one(settings.home / rel, partial / rel, report):
                        manifest.files[rel.as_posix()] = _sha256(partial / rel)
                    steps.advance(1)
        manifest.postgres = _dump_postgres(settings, partial, manifest, steps)
        report.postgres = [d.url for d in manifest.postgres]
        (partial / MANIFEST).write_text(manifest.model_dump_json(indent=2), "utf-8")
        if dest.exists():
            dest.rmdir()
        partial.rename(dest)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    report.files = len(manifest.files)
    report.bytes = sum(m.bytes for m in manifest.files.values())
    report.seconds = time.perf_counter() - start
    return report


def _kb_of(settings: Settings, rel: Path) -> str | None:
    """The KB whose folder holds ``rel`` (None: a file of the home itself)."""
    parts = rel.parts
    return parts[1] if len(parts) > 2 and parts[0] == settings.kb_root.name else None


def _copy_one(source: Path, target: Path, report: BackupReport) -> bool:
    """Copy one file (a SQLite database online); False when it went away meanwhile."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if not source.is_file():  # removed meanwhile (a deleted KB, a finished upload)
        return False
    if _is_sqlite(source):
        backup_database(source, target)
        report.sqlite += 1
    else:
        shutil.copyfile(source, target)
    return True


def _pg_urls(settings: Settings) -> dict[str, list[str]]:
    """PostgreSQL URL → the schemas of this home held there (its KBs', the question log's)."""
    from zhiwen.store._pg_schema import schema_name
    from zhiwen.store.factory import POSTGRES_SCHEMES

    urls: dict[str, list[str]] = {}
    if settings.store.startswith(POSTGRES_SCHEMES):
        urls.setdefault(settings.store, []).append(_QUESTION_SCHEMA)
    root = settings.kb_root
    for kb_json in sorted(root.glob("*/kb.json")) if root.is_dir() else []:
        try:
            store = str(json.loads(kb_json.read_text("utf-8")).get("store", ""))
        except (OSError, ValueError):
            continue
        if store.startswith(POSTGRES_SCHEMES):
            urls.setdefault(store, []).append(schema_name(kb_json.parent.name))
    return urls


def _dump_postgres(settings: Settings, out: Path, manifest: BackupManifest, steps: Steps) -> list[PgDump]:
    dumps: list[PgDump] = []
    urls = _pg_urls(settings)
    if not urls:
        return dumps
    steps.start("导出 PostgreSQL", len(urls))
    (out / PG_DIR).mkdir()
    for i, (url, schemas) in enumerate(sorted(urls.items())):
        rel = f"{PG_DIR}/{i}.dump"
        args = ["pg_dump", "--format=custom", "--no-owner", f"--file={out / rel}", f"--dbname={url}"]
        _run([*args, *(f"--schema={s}" for s in schemas)], "pg_dump")
        manifest.files[rel] = _sha256(out / rel)
        dumps.append(PgDump(file=rel, url=mask_url(url), schemas=schemas))
        steps.advance(1)
    return dumps


def _run(args: list[str], tool: str) -> None:
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=3600, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise StoreUnavailable(
            f"{tool}: {exc}", message=f"无法运行 {tool}（需要 PostgreSQL 客户端工具）"
        ) from exc
    if done.returncode != 0:
        first = (done.stderr.strip().splitlines() or [""])[0]
        raise StoreUnavailable(f"{tool} failed: {first}", message=f"{tool} 失败：{first}")


# -- restore --------------------------------------------------------------------------------------
def read_backup(src: Path) -> BackupManifest:
    """The manifest of a complete backup, every file checked: else BundleError with the reason."""
    src = Path(src)
    if src.name.endswith(PARTIAL) or not (src / MANIFEST).is_file():
        raise bundle_error(
            f"{src}: no {MANIFEST}", f"备份 {src} 不完整（没有写完，缺少 {MANIFEST}），拒绝恢复", "partial"
        )
    try:
        manifest = BackupManifest.model_validate_json((src / MANIFEST).read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise bundle_error(
            f"{MANIFEST}: {exc}".splitlines()[0], f"备份 {src} 的清单已损坏，拒绝恢复", "partial"
        ) from exc
    if manifest.format != BACKUP_FORMAT or manifest.format_version > BACKUP_VERSION:
        raise bundle_error(
            f"backup format {manifest.format} {manifest.format_version}",
            f"备份格式版本 {manifest.format_version} 比本程序支持的 {BACKUP_VERSION} 新，请先升级知问",
            "newer_format",
        )
    _verify(src, manifest)
    return manifest


def _verify(src: Path, manifest: BackupManifest) -> None:
    present = {p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file()} - {MANIFEST}
    for rel, want in manifest.files.items():
        if rel not in present:
            raise bundle_error(f"{rel} missing", f"备份缺少文件 {rel}，拒绝恢复", "missing")
        if _sha256(src / rel) != want:
            raise bundle_error(
                f"{rel}: checksum mismatch",
                f"备份文件 {rel} 的校验和不符（已损坏或被改动），拒绝恢复",
                "checksum",
            )
    extra = sorted(present - set(manifest.files))
    if extra:
        raise bundle_error(
            f"unexpected {extra[:3]}", f"备份中有清单之外的文件 {extra[0]}，拒绝恢复", "checksum"
        )


def restore_home(src: Path, *, home: Path | None = None, settings: Settings | None = None) -> BackupReport:
    """Put the backup ``src`` back as the home ``home`` (default: the configured one)."""
    settings = settings or get_settings()
    target = Path(home) if home is not None else settings.home
    start = time.perf_counter()
    manifest = read_backup(Path(src))
    target_settings = settings.model_copy(update={"home": target})
    report = BackupReport(path=str(target), files=len(manifest.files))
    staging = target.with_name(f".{target.name}.restoring")
    shutil.rmtree(staging, ignore_errors=True)
    for rel in manifest.files:
        if not rel.startswith(PG_DIR + "/"):
            (staging / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(Path(src) / rel, staging / rel)
    try:
        if target.exists():
            report.moved_aside = str(_move_aside(target))
        staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _restore_postgres(Path(src), manifest, target_settings)
    report.bytes = sum(m.bytes for m in manifest.files.values())
    report.postgres = [d.url for d in manifest.postgres]
    report.seconds = time.perf_counter() - start
    return report


def _move_aside(target: Path) -> Path:
    """The current home, renamed out of the way; refused while a server runs on it (it holds
    the home's lock, :mod:`zhiwen.home_lock`)."""
    from filelock import FileLock, Timeout

    from zhiwen.home_lock import LOCK_NAME, HomeInUse, read_holder
    from zhiwen.kb import close_all

    lock = FileLock(str(target / LOCK_NAME), thread_local=False)
    try:
        lock.acquire(blocking=False)
    except Timeout:
        pid = read_holder(target).get("pid", "未知")
        raise HomeInUse(
            f"{target} is used by server pid {pid}",
            message=f"数据目录 {target} 正被知问服务使用（进程 pid {pid}）：请先停止服务再恢复",
            data={"home": str(target), "pid": pid},
        ) from None
    try:
        close_all()  # this process's KBs of the old home
        aside = target.with_name(f"{target.name}.before-restore-{dt.datetime.now():%Y%m%d-%H%M%S}")
        target.rename(aside)
    finally:
        lock.release()
    return aside


def _restore_postgres(src: Path, manifest: BackupManifest, settings: Settings) -> None:
    """``pg_restore --clean`` each dump into the database the restored home names for it."""
    if not manifest.postgres:
        return
    known = {mask_url(u): u for u in _pg_urls(settings)}
    for dump in manifest.postgres:
        url = known.get(dump.url)
        if url is None:
            raise StoreUnavailable(
                f"no URL for {dump.url}",
                message=f"找不到 PostgreSQL 数据库 {dump.url} 的连接地址，无法恢复其中的数据",
            )
        _run(
            ["pg_restore", "--clean", "--if-exists", "--no-owner", f"--dbname={url}", str(src / dump.file)],
            "pg_restore",
        )

"""The two refusals of a versioned file: too new for this release, or needs ``zhiwen migrate``."""

from __future__ import annotations

from pathlib import Path

from zhiwen.errors import StoreUnavailable

MIGRATE_COMMAND = "zhiwen migrate"


class FormatTooNew(StoreUnavailable):
    """A file written by a newer release: refused, never touched."""

    def __init__(self, label: str, path: Path | str, found: int, current: int) -> None:
        super().__init__(
            f"{path}: {label} version {found} > {current}",
            message=f"{label}（{path}）的格式版本为 {found}，比本版本 zhiwen 支持的 {current} 新；"
            "请升级 zhiwen，文件未作任何改动",
            data={"path": str(path), "found": found, "current": current},
        )


class MigrationNeeded(StoreUnavailable):
    """An older file whose migration is too big to run while opening it."""

    def __init__(self, label: str, path: Path | str, found: int, current: int) -> None:
        super().__init__(
            f"{path}: {label} version {found} < {current}, run {MIGRATE_COMMAND}",
            message=f"{label}（{path}）的格式版本为 {found}，需要升级到 {current}："
            f"请先运行 `{MIGRATE_COMMAND}`（可加 --dry-run 先查看），升级前会自动备份",
            data={"path": str(path), "found": found, "current": current, "command": MIGRATE_COMMAND},
        )

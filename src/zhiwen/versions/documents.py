"""JSON files: the version in a ``format_version`` key, migrated by write-new-then-rename.

The original is copied to ``<file>.v<found>.bak`` first; a file that cannot be written (a
read-only home) is migrated in memory only, and again on the next open.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

from zhiwen.fsutil import atomic_write_json
from zhiwen.versions.registry import get_format

log = logging.getLogger(__name__)

KEY = "format_version"


def document_version(data: dict[str, Any]) -> int:
    found = data.get(KEY, 0)
    return found if isinstance(found, int) and not isinstance(found, bool) else 0


def check_document(
    data: dict[str, Any], name: str, path: Path, *, write: bool = True, on_open: bool = True
) -> dict[str, Any]:
    """``data`` (read from ``path``) at the current version of format ``name``."""
    fmt = get_format(name)
    found = document_version(data)
    if found == fmt.current:
        return data
    steps = fmt.pending(found, path, on_open=on_open)
    out = dict(data)
    for step in steps:
        fn = step.function()
        if fn is not None:
            out = fn(out)
        out[KEY] = step.to
    if write:
        try:
            backup = Path(f"{path}.v{found}.bak")
            if not backup.exists():
                shutil.copy2(path, backup)
            atomic_write_json(path, out)
            log.warning("migrated %s (%s) from version %d to %d", path, name, found, fmt.current)
        except OSError as exc:
            log.warning("could not write the migrated %s (kept in memory): %s", path, exc)
    return out

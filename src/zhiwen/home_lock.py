"""One server per ``ZHIWEN_HOME``: ``zhiwen serve`` holds ``<home>/server.lock`` while it runs.

Two servers on one home would each run an upload worker over the same queue and ledgers, and
each resume the other's jobs as if they had died. So the server takes the home's lock before it
binds; ``<home>/server.json`` says who holds it (pid, host name, address, start time). A second
server refuses to start with a Chinese message naming the home and the first server's pid and
address. The lock is the kernel's ``flock`` (through :mod:`filelock`): it goes with its process,
``kill -9`` included, so a lock file left by a dead server is simply taken over (and its stale
``server.json`` rewritten).

Example::

    hold_home(settings, "127.0.0.1", 8000)   # HomeInUse (3008) when another server runs there
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from zhiwen.config import Settings
from zhiwen.errors import ZhiwenError
from zhiwen.fsutil import atomic_write_text

LOCK_NAME = "server.lock"
INFO_NAME = "server.json"


class HomeInUse(ZhiwenError):
    """Another server holds the home's lock."""

    code = 3008
    http_status = 409
    user_message = "数据目录已被另一个知问服务使用"


_HELD: dict[str, FileLock] = {}  # home → the lock this process holds (taking it again is a no-op)


def hold_home(settings: Settings, host: str, port: int) -> None:
    """Take ``settings.home``'s server lock for the life of this process, or raise HomeInUse."""
    home = settings.home
    key = str(home.resolve())
    if key in _HELD:
        return
    home.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(home / LOCK_NAME), timeout=0, thread_local=False)
    try:
        lock.acquire(blocking=False)
    except Timeout:
        raise _in_use(home, read_holder(home)) from None
    _HELD[key] = lock
    holder = {"pid": os.getpid(), "host": host, "port": port, "hostname": socket.gethostname()}
    atomic_write_text(home / INFO_NAME, json.dumps({**holder, "started_at": time.time()}, ensure_ascii=False))


def release_home(settings: Settings) -> None:
    lock = _HELD.pop(str(settings.home.resolve()), None)
    if lock is not None:
        (settings.home / INFO_NAME).unlink(missing_ok=True)
        lock.release()


def read_holder(home: Path) -> dict[str, Any]:
    """What the running server wrote about itself (empty if it has not yet, or it is unreadable)."""
    try:
        data = json.loads((home / INFO_NAME).read_text("utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _in_use(home: Path, holder: dict[str, Any]) -> HomeInUse:
    pid = holder.get("pid", "未知")
    address = f"http://{holder.get('host')}:{holder.get('port')}" if holder.get("port") else "地址未知"
    where = f"{holder['hostname']} 上的" if holder.get("hostname") not in (None, socket.gethostname()) else ""
    return HomeInUse(
        f"{home} is used by server pid {pid} at {address}",
        message=(
            f"数据目录 {home} 已被另一个知问服务使用（{where}进程 pid {pid}，{address}）；"
            "同一个 ZHIWEN_HOME 只能运行一个服务：请先停止它，或为新服务设置另一个 ZHIWEN_HOME"
        ),
        data={"home": str(home), **holder},
    )

"""A pre-imported ``zhiwen`` CLI that forks one real process per command (the doc test's engine).

Importing the CLI costs ~3 s of CPU per ``zhiwen …`` (apps, jieba, cn2an, fastapi); the README's
blocks run ~40 of them. So the doc test starts this *zygote* once: it imports
``zhiwen.cli.main`` and waits on a Unix socket. The ``zhiwen`` on the blocks' PATH is a tiny
client (:data:`CLIENT`, stdlib only, started with ``python -S``) that hands the zygote its
argv, environment, working directory and its stdin/stdout/stderr (``SCM_RIGHTS``). The zygote
forks; the child is an ordinary ``zhiwen`` process from there on: it runs the typer app in its
own main thread, with the caller's fds, env and cwd, exits through the interpreter's normal
shutdown, and its exit status (or signal) becomes the client's. Signals sent to the client
(``kill``, Ctrl-C) are passed to the child, so ``zhiwen serve &`` … ``kill`` works as usual.

Nothing of the command runs in the zygote: it never reads settings, opens a KB or starts a
thread, so every child starts from the state a fresh ``zhiwen`` has after its imports.

The live-server tests (:mod:`support.live_zhiwen`) start their ``zhiwen serve`` processes from
one too, through :class:`Forked`: a Popen-like handle on the forked child itself (its real pid,
so ``kill -9`` and the pid in ``server.json`` are the server's), without a client in between.

Example::

    zygote = Zygote(tmp_path / "zhiwen.sock", env=base_env).start()
    subprocess.run(["bash", "-c", "zhiwen kb list"], env={**env, **zygote.client_env()})
    server = zygote.fork(["serve", "--port", "8123"], env=env, cwd=tmp_path, stdout=log_fd)
    server.terminate(); server.wait(timeout=30)
    zygote.stop()
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

# the client: argv, env, cwd and fds 0-2 to the zygote; the child's pid back, then its status
CLIENT = r"""
import json, os, signal, socket, struct, sys
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.connect(os.environ["ZHIWEN_DOCTEST_SOCKET"])
head = json.dumps({"argv": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd()}).encode()
socket.send_fds(sock, [struct.pack("!I", len(head))], [0, 1, 2])
sock.sendall(head)
def recv_int():
    data = b""
    while len(data) < 4:
        part = sock.recv(4 - len(data))
        if not part:
            sys.exit("doctest: the zhiwen zygote went away (see its log)")
        data += part
    return struct.unpack("!i", data)[0]
child = recv_int()
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, lambda signum, frame: os.kill(child, signum))
status = recv_int()
sys.exit(128 - status if status < 0 else status)
"""


class Zygote:
    """The zygote process and the client's ``bin`` directory (put it first on ``PATH``)."""

    def __init__(self, sock_path: Path, *, env: dict[str, str], log: Path) -> None:
        self.sock_path = sock_path
        self.env = env
        self.log = log
        self.bin_dir = sock_path.parent / "zygote-bin"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 120.0) -> Zygote:
        self.bin_dir.mkdir(parents=True, exist_ok=True)
        client = self.bin_dir / "zhiwen"
        client.write_text(f"#!{sys.executable} -S\n{CLIENT}", "utf-8")
        client.chmod(0o755)
        with self.log.open("ab") as fh:
            self.proc = subprocess.Popen(
                [sys.executable, __file__, str(self.sock_path)],
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=fh,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout
        while not self.sock_path.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"zygote did not start: {self.log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.05)
        return self

    def client_env(self) -> dict[str, str]:
        return {"ZHIWEN_DOCTEST_SOCKET": str(self.sock_path), "ZHIWEN_DOCTEST_BIN": str(self.bin_dir)}

    def fork(self, argv: list[str], *, env: dict[str, str], cwd: Path, stdout: int) -> Forked:
        """``zhiwen <argv>`` forked from the zygote, stdin from /dev/null, stdout and stderr to ``stdout``."""
        return Forked(self.sock_path, argv, env=env, cwd=cwd, stdout=stdout)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Forked:
    """A child of the zygote, driven like :class:`subprocess.Popen` (``pid``, ``returncode``,
    ``poll``, ``wait``, ``send_signal``, ``terminate``, ``kill``). It is not our child, so its exit
    status comes over the socket, from the zygote that reaps it."""

    def __init__(
        self, sock_path: Path, argv: list[str], *, env: dict[str, str], cwd: Path, stdout: int
    ) -> None:
        self.args = argv
        self.returncode: int | None = None
        self._ended = threading.Event()
        self._conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._conn.connect(str(sock_path))
        head = json.dumps({"argv": argv, "env": env, "cwd": str(cwd)}).encode()
        stdin = os.open(os.devnull, os.O_RDONLY)
        try:
            socket.send_fds(self._conn, [struct.pack("!I", len(head))], [stdin, stdout, stdout])
        finally:
            os.close(stdin)
        self._conn.sendall(head)
        self.pid = struct.unpack("!i", _recv_exact(self._conn, 4))[0]
        threading.Thread(target=self._await_status, daemon=True).start()

    def _await_status(self) -> None:
        try:
            self.returncode = struct.unpack("!i", _recv_exact(self._conn, 4))[0]
        except (ConnectionError, OSError):  # the zygote went away (and took its children along)
            self.returncode = -signal.SIGTERM
        self._conn.close()
        self._ended.set()

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._ended.wait(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


# -- the zygote process ---------------------------------------------------------------------------
def _recv_exact(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        part = conn.recv(n - len(data))
        if not part:
            raise ConnectionError("client went away")
        data += part
    return data


def _accept(listener: socket.socket) -> tuple[socket.socket, dict[str, object], list[int]] | None:
    conn, _ = listener.accept()
    try:
        msg, fds, _flags, _addr = socket.recv_fds(conn, 4, 3)
        head = json.loads(_recv_exact(conn, struct.unpack("!I", msg)[0]))
    except (ConnectionError, OSError, ValueError, struct.error):
        conn.close()
        return None
    return conn, head, fds


def _serve(sock_path: str) -> tuple[socket.socket, dict[str, object], list[int]]:
    """Accept and fork until a child comes back out of here (the parent never returns)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(sock_path)
    listener.listen(64)
    waiting: dict[int, tuple[socket.socket, str]] = {}  # child pid -> its client's connection, argv

    def shutdown(*_: object) -> None:  # a command left running (a block that timed out) goes too
        for pid in list(waiting):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        os._exit(0)

    signal.signal(signal.SIGTERM, shutdown)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    while True:
        for _key, _ev in selector.select(timeout=0.05):
            got = _accept(listener)
            if got is None:
                continue
            conn, head, fds = got
            pid = os.fork()
            if pid == 0:
                selector.close()
                listener.close()
                for other, _argv in waiting.values():
                    other.close()
                return conn, head, fds
            for fd in fds:
                os.close(fd)
            conn.sendall(struct.pack("!i", pid))
            waiting[pid] = (conn, " ".join(map(str, head["argv"])))  # type: ignore[call-overload]
        _reap(waiting)


def _reap(waiting: dict[int, tuple[socket.socket, str]]) -> None:
    """Hand each finished child's exit status to its client; log its CPU seconds."""
    while waiting:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn, argv = waiting.pop(pid, (None, ""))
        code = os.waitstatus_to_exitcode(status)
        print(f"zygote: {usage.ru_utime + usage.ru_stime:6.2f} s CPU, exit {code}: zhiwen {argv}", flush=True)
        if conn is not None:
            with contextlib.suppress(OSError):  # the client was killed meanwhile
                conn.sendall(struct.pack("!i", code))
            conn.close()


def _become(conn: socket.socket, head: dict[str, object], fds: list[int]) -> None:
    """In the child: the caller's fds, environment and directory, then the command's argv."""
    conn.close()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    env = head["env"]
    assert isinstance(env, dict)
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in env.items()})
    os.chdir(str(head["cwd"]))
    argv = head["argv"]
    assert isinstance(argv, list)
    sys.argv = ["zhiwen", *map(str, argv)]
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    from zhiwen.config import reset_settings_cache

    reset_settings_cache()


def _warm() -> None:
    """Fill the per-process caches that nearly every command fills first (pure data, no thread,
    no file left open): jieba's IDF table (~0.9 s) and rjieba's dictionary."""
    try:
        import rjieba

        from zhiwen.answer.scoring import preload_idf

        preload_idf()
        rjieba.cut_for_search("预热分词词典")
    except (ImportError, AttributeError):  # renamed or gone: the children load them themselves
        pass


def main(sock_path: str) -> None:
    import gc

    from zhiwen.cli.main import app  # the one import every command shares

    _warm()
    # the imported heap is never collected again: a child's exit would otherwise walk (and so
    # copy) every page of it, ~2 s per command
    gc.freeze()
    conn, head, fds = _serve(sock_path)
    _become(conn, head, fds)
    app(prog_name="zhiwen")  # exits through SystemExit: the interpreter's normal shutdown


if __name__ == "__main__":
    main(sys.argv[1])

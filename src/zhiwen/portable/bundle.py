"""A KB bundle on disk: one uncompressed tar, written and read member by member.

Members (all but the manifest checksummed in it, see :mod:`zhiwen.portable.manifest`):

=======================  ====================================================================
``manifest.json``        first, so a reader learns the format version before anything else
``documents.jsonl.gz``   the parent documents, one JSON object per line
``chunks.jsonl.gz``      every stored row (parsed chunks as curated, question rows, FAQ and
                         hand-added chunks) with ``"v": true`` when it has a vector
``vectors/NNNNNN.npy``   float32 shards of at most :data:`SHARD_ROWS` rows, in the order of the
                         chunks with ``"v": true``
``curation/T.jsonl.gz``  the rows of table ``T`` of the KB's ``curation.sqlite``
``files/NAME``           the KB's small files (``tuning.json``, ``documents.json``, ``sync.json``)
                         and its table catalogue (``tables.sqlite3``, an online-backup copy)
=======================  ====================================================================

Writing never holds the KB in memory: each member is streamed to a file in a temporary folder
next to the target while its SHA-256 is computed; the tar is then assembled (manifest first)
into a temporary file and renamed over the target, so a failed export leaves no bundle at all.
Reading is random access (``tarfile`` mode ``r:``): :meth:`BundleReader.verify` streams every
member once against the manifest before anything is imported.

Example::

    with BundleWriter(Path("manual.zwkb")) as out:
        with out.jsonl("chunks.jsonl.gz") as lines:
            lines.write({"id": "a#0", ...})
        out.finish(manifest)
    with BundleReader(Path("manual.zwkb")) as bundle:
        bundle.verify()
        for row in bundle.jsonl("chunks.jsonl.gz"):
            ...
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import json
import os
import shutil
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import numpy as np

from zhiwen.portable.manifest import MANIFEST, BundleError, Manifest, Member, bundle_error, check_version

SHARD_ROWS = 8192
_READ = 1 << 20
_GZIP_LEVEL = 4  # JSONL compresses ~4x at this level; higher levels cost time for a few %


class _Hashing(io.RawIOBase):
    """A write-only file that hashes and counts what passes through to ``raw``."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self.sha = hashlib.sha256()
        self.size = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        self.raw.write(view)
        self.sha.update(view)
        self.size += len(view)
        return len(view)


class JsonLines:
    """One JSON object per line into a member (see :meth:`BundleWriter.jsonl`)."""

    def __init__(self, out: IO[bytes]) -> None:
        self._out = out
        self.count = 0

    def write(self, obj: Any) -> None:
        self._out.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n")
        self.count += 1


class BundleWriter:
    """Builds a bundle at ``target`` (see the module docstring); a context manager that removes
    its temporary files whatever happens, and the target only appears on :meth:`finish`."""

    def __init__(self, target: Path) -> None:
        self.target = Path(target)
        self.target.parent.mkdir(parents=True, exist_ok=True)
        self._dir = Path(tempfile.mkdtemp(prefix=f".{self.target.name}.", dir=self.target.parent))
        self.members: dict[str, Member] = {}

    def __enter__(self) -> BundleWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        shutil.rmtree(self._dir, ignore_errors=True)

    @contextlib.contextmanager
    def binary(self, name: str) -> Iterator[IO[bytes]]:
        """A member written as bytes (gzip-compressed when ``name`` ends in ``.gz``)."""
        path = self._dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as raw:
            hashing = _Hashing(raw)
            if name.endswith(".gz"):
                with gzip.GzipFile(fileobj=hashing, mode="wb", compresslevel=_GZIP_LEVEL, mtime=0) as gz:
                    yield gz  # type: ignore[misc]
            else:
                yield hashing  # type: ignore[misc]
        self.members[name] = Member(bytes=hashing.size, sha256=hashing.sha.hexdigest())

    @contextlib.contextmanager
    def jsonl(self, name: str) -> Iterator[JsonLines]:
        with self.binary(name) as out:
            yield JsonLines(out)

    def copy_file(self, name: str, source: Path) -> None:
        with self.binary(name) as out, open(source, "rb") as src:
            shutil.copyfileobj(src, out, _READ)

    def vector_shards(self, dim: int) -> VectorShards:
        return VectorShards(self, dim)

    def finish(self, manifest: Manifest) -> None:
        """The tar, manifest first, into a temporary file renamed over the target."""
        manifest.members = dict(self.members)
        text = manifest.model_dump_json(indent=2).encode("utf-8")
        tmp = self.target.with_name(f".{self.target.name}.{os.getpid()}.tmp")
        try:
            with (
                open(tmp, "wb") as raw,
                tarfile.open(fileobj=raw, mode="w:", format=tarfile.PAX_FORMAT) as tar,
            ):
                info = tarfile.TarInfo(MANIFEST)
                info.size = len(text)
                tar.addfile(info, io.BytesIO(text))
                for name in self.members:
                    tar.add(self._dir / name, arcname=name, recursive=False, filter=_plain)
                tar.close()
                raw.flush()
                os.fsync(raw.fileno())
            os.replace(tmp, self.target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise


def _plain(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """No owner, mode or time from the exporting machine in the bundle."""
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mode = 0o644
    info.mtime = 0
    return info


class VectorShards:
    """Rows appended in order, written as ``vectors/NNNNNN.npy`` shards of :data:`SHARD_ROWS`."""

    def __init__(self, writer: BundleWriter, dim: int) -> None:
        self._writer = writer
        self.dim = dim
        self._rows: list[np.ndarray] = []
        self._pending = 0
        self.shards = 0
        self.count = 0

    def append(self, rows: np.ndarray) -> None:
        if not len(rows):
            return
        self._rows.append(np.asarray(rows, dtype="<f4").reshape(-1, self.dim))
        self._pending += len(rows)
        self.count += len(rows)
        while self._pending >= SHARD_ROWS:
            self._flush(SHARD_ROWS)

    def close(self) -> None:
        if self._pending:
            self._flush(self._pending)

    def _flush(self, n: int) -> None:
        block = np.concatenate(self._rows) if len(self._rows) > 1 else self._rows[0]
        head, rest = block[:n], block[n:]
        self._rows = [rest] if len(rest) else []
        self._pending = len(rest)
        with self._writer.binary(f"vectors/{self.shards:06d}.npy") as out:
            np.lib.format.write_array(out, np.ascontiguousarray(head), allow_pickle=False)
        self.shards += 1


class BundleReader:
    """A bundle opened for import: manifest read and version-checked on open (see the module
    docstring); a context manager."""

    def __init__(self, source: Path | IO[bytes]) -> None:
        """``source``: the bundle's path, or a seekable binary file (an upload's spool file)."""
        try:
            # closed by close()
            if isinstance(source, Path):
                self._tar = tarfile.open(source, mode="r:")  # noqa: SIM115
                self._size = source.stat().st_size
            else:
                self._tar = tarfile.open(fileobj=source, mode="r:")  # noqa: SIM115
                self._size = source.seek(0, os.SEEK_END)
        except (OSError, tarfile.TarError, EOFError) as exc:
            raise _damaged(f"{exc}") from exc
        try:
            self.manifest = self._read_manifest()
            check_version(self.manifest)
        except BaseException:
            self._tar.close()
            raise

    def __enter__(self) -> BundleReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._tar.close()

    def _read_manifest(self) -> Manifest:
        first = self._tar.next()
        if first is None or first.name != MANIFEST:
            raise bundle_error(
                "first member is not manifest.json", "这不是知问的知识库导出文件", "not_a_bundle"
            )
        handle = self._tar.extractfile(first)
        assert handle is not None
        try:
            return Manifest.model_validate_json(handle.read())
        except ValueError as exc:
            raise _damaged(f"manifest: {exc}".splitlines()[0]) from exc

    def verify(self, on_bytes: Callable[[int], None] | None = None) -> None:
        """Every member present, of its size and SHA-256, and nothing else: else BundleError."""
        try:
            names = {m.name for m in self._tar.getmembers()} - {MANIFEST}
        except (OSError, tarfile.TarError, EOFError) as exc:
            raise _damaged(str(exc)) from exc
        # the end-of-archive marker and the padding to whole records that the writer adds: a
        # copy cut after the last member is refused too
        size = self._size
        if size < self._tar.offset + 2 * tarfile.BLOCKSIZE or size % tarfile.RECORDSIZE:
            raise _damaged("no end-of-archive marker")
        extra = sorted(names - set(self.manifest.members))
        if extra:
            raise _tampered(f"members not in the manifest: {extra[:3]}", extra[0])
        for name, want in self.manifest.members.items():
            if name not in names:
                raise _damaged(f"member {name} missing")
            got = self._checksum(name, on_bytes)
            if got != (want.bytes, want.sha256):
                raise _tampered(f"{name}: {got} != {(want.bytes, want.sha256)}", name)

    def _checksum(self, name: str, on_bytes: Callable[[int], None] | None) -> tuple[int, str]:
        sha, size = hashlib.sha256(), 0
        try:
            handle = self._tar.extractfile(name)
            assert handle is not None
            while block := handle.read(_READ):
                sha.update(block)
                size += len(block)
                if on_bytes is not None:
                    on_bytes(len(block))
        except (OSError, tarfile.TarError, EOFError) as exc:
            raise _damaged(f"{name}: {exc}") from exc
        return size, sha.hexdigest()

    def has(self, name: str) -> bool:
        return name in self.manifest.members

    @contextlib.contextmanager
    def binary(self, name: str) -> Iterator[IO[bytes]]:
        handle = self._tar.extractfile(name)
        assert handle is not None
        if name.endswith(".gz"):
            with gzip.GzipFile(fileobj=handle, mode="rb") as gz:
                yield gz  # type: ignore[misc]
        else:
            yield handle

    def jsonl(self, name: str) -> Iterator[dict[str, Any]]:
        if not self.has(name):
            return
        with self.binary(name) as raw:
            for line in raw:
                if line.strip():
                    yield json.loads(line)

    def copy_to(self, name: str, target: Path) -> None:
        with self.binary(name) as src, open(target, "wb") as out:
            shutil.copyfileobj(src, out, _READ)

    def vectors(self) -> VectorReader:
        shards = sorted(n for n in self.manifest.members if n.startswith("vectors/"))
        return VectorReader(self, shards)


class VectorReader:
    """The bundle's vectors in order, read ``take(n)`` rows at a time across shards."""

    def __init__(self, bundle: BundleReader, shards: list[str]) -> None:
        self._bundle = bundle
        self._shards = iter(shards)
        self._stack = contextlib.ExitStack()
        self._handle: IO[bytes] | None = None
        self._left = 0
        self._dim = 0

    def _next_shard(self) -> None:
        self._stack.close()
        name = next(self._shards, None)
        if name is None:
            raise _damaged("fewer vectors than chunks marked with one")
        handle = self._stack.enter_context(self._bundle.binary(name))
        version = np.lib.format.read_magic(handle)
        read_header = (
            np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        )
        shape, fortran, dtype = read_header(handle)
        if fortran or dtype != np.dtype("<f4") or len(shape) != 2:
            raise _damaged(f"{name}: not a float32 matrix")
        self._handle, self._left, self._dim = handle, int(shape[0]), int(shape[1])

    def take(self, n: int) -> np.ndarray:
        parts: list[np.ndarray] = []
        while n > 0:
            if self._left == 0:
                self._next_shard()
            k = min(n, self._left)
            assert self._handle is not None
            data = self._handle.read(k * self._dim * 4)
            if len(data) != k * self._dim * 4:
                raise _damaged("vector shard ends early")
            parts.append(np.frombuffer(data, dtype="<f4").reshape(k, self._dim))
            self._left -= k
            n -= k
        return np.concatenate(parts) if len(parts) != 1 else parts[0]

    def close(self) -> None:
        self._stack.close()


def _damaged(detail: str) -> BundleError:
    return bundle_error(detail, "导出文件不完整或已损坏（可能未下载完或被截断），请重新导出", "truncated")


def _tampered(detail: str, member: str) -> BundleError:
    return bundle_error(detail, f"导出文件的校验和不符（{member}），文件已损坏或被改动，拒绝导入", "checksum")

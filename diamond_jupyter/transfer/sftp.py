"""SFTP data movement over a site's pooled SSH connection (or the server's own disk).

Bytes stream in bounded windows (never a whole file in memory) into `DEST.dmd-part`; a
partial file left by an earlier attempt is resumed from its size. When all bytes are there
the destination is hashed where it lives (`sha256sum` over SSH, or locally) and compared with
the source's hash (computed the same way, concurrently with the copy); only a match renames
the partial file into place. Site to site is relayed through the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import posixpath
import queue
import stat as stat_mod
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Protocol

import paramiko

from ..model import BadInput, SiteError

PART = ".dmd-part"
WINDOW = 4 << 20  # bytes requested at once from an SFTP source
REQ = 32768  # one SFTP read request


class Interrupted(SiteError):
    """The copy stopped early (connection lost, byte limit); the partial file is kept."""


class Cancelled(SiteError):
    pass


class Side(Protocol):
    """One end of a copy; methods without `async` block (run them in a thread)."""

    label: str

    def abspath(self, path: str) -> str: ...
    def stat(self, path: str) -> tuple[int, bool] | None: ...  # (size, is_dir)
    def reader(self, path: str, offset: int, size: int) -> Any: ...  # yields byte chunks
    def open_write(self, path: str, offset: int) -> BinaryIO: ...
    def rename(self, src: str, dst: str) -> None: ...
    def remove(self, path: str) -> None: ...
    def walk(self, path: str) -> list[str]: ...  # files under a directory, relative
    async def sha256(self, path: str) -> str: ...
    async def close(self) -> None: ...


class LocalSide:
    """The server's own filesystem (or a site with a local transport)."""

    def __init__(self, root: str | None = None, label: str = "local") -> None:
        self.root = os.path.expanduser(root or os.getcwd())
        self.label = label

    def abspath(self, path: str) -> str:
        return os.path.normpath(os.path.join(self.root, os.path.expanduser(path)))

    def stat(self, path: str) -> tuple[int, bool] | None:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return None
        return st.st_size, stat_mod.S_ISDIR(st.st_mode)

    def reader(self, path: str, offset: int, size: int):
        with open(path, "rb") as f:
            f.seek(offset)
            while chunk := f.read(1 << 20):
                yield chunk

    def open_write(self, path: str, offset: int) -> BinaryIO:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        f = open(path, "r+b" if offset else "wb")  # noqa: SIM115 (closed by the caller)
        f.truncate(offset)
        f.seek(offset)
        return f

    def rename(self, src: str, dst: str) -> None:
        os.replace(src, dst)

    def remove(self, path: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)

    def walk(self, path: str) -> list[str]:
        out = []
        for d, _, files in os.walk(path):
            out += [os.path.relpath(os.path.join(d, f), path) for f in files]
        return sorted(out)

    async def sha256(self, path: str) -> str:
        def digest() -> str:
            h = hashlib.sha256()
            with open(path, "rb") as f:
                while chunk := f.read(1 << 20):
                    h.update(chunk)
            return h.hexdigest()
        return await asyncio.to_thread(digest)

    async def close(self) -> None:
        return None


class SftpSide:
    """A site reached over SSH: its own SFTP channel on the site's pooled connection (so a
    long copy never blocks the transport's SFTP channel that job submission uses)."""

    def __init__(self, transport: Any, sftp: paramiko.SFTPClient, home: str) -> None:
        self.transport, self.sftp, self.home = transport, sftp, home
        self.label = transport.name

    @classmethod
    async def open(cls, transport: Any) -> SftpSide:
        await transport._sem.acquire()  # one sshd session, counted against MaxSessions
        try:
            conn = await transport._ensure()
            sftp = await asyncio.to_thread(paramiko.SFTPClient.from_transport, conn.transport)
            home = await asyncio.to_thread(sftp.normalize, ".")
        except BaseException:
            transport._sem.release()
            raise
        return cls(transport, sftp, home)

    def abspath(self, path: str) -> str:
        if path == "~" or path.startswith("~/"):
            path = self.home + path[1:]
        return posixpath.normpath(posixpath.join(self.home, path))

    def stat(self, path: str) -> tuple[int, bool] | None:
        try:
            a = self.sftp.stat(path)
        except FileNotFoundError:
            return None
        return a.st_size or 0, stat_mod.S_ISDIR(a.st_mode or 0)

    def reader(self, path: str, offset: int, size: int):
        with self.sftp.open(path, "rb") as f:
            pos = offset
            while pos < size:  # a window of pipelined requests, then the next one
                end = min(pos + WINDOW, size)
                reqs = [(o, min(REQ, end - o)) for o in range(pos, end, REQ)]
                yield from f.readv(reqs)
                pos = end

    def _mkdirs(self, d: str) -> None:
        cur = ""
        for part in [p for p in d.split("/") if p]:
            cur += "/" + part
            try:
                self.sftp.stat(cur)
            except FileNotFoundError:
                self.sftp.mkdir(cur, 0o700)

    def open_write(self, path: str, offset: int) -> BinaryIO:
        self._mkdirs(posixpath.dirname(path))
        f = self.sftp.open(path, "r+b" if offset else "wb")
        if offset:
            f.truncate(offset)
            f.seek(offset)
        f.set_pipelined(True)
        return f  # type: ignore[return-value]

    def rename(self, src: str, dst: str) -> None:
        self.sftp.posix_rename(src, dst)

    def remove(self, path: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.sftp.remove(path)

    def walk(self, path: str) -> list[str]:
        out: list[str] = []
        stack = [""]
        while stack:
            rel = stack.pop()
            for a in self.sftp.listdir_attr(posixpath.join(path, rel)):
                r = posixpath.join(rel, a.filename)
                (stack if stat_mod.S_ISDIR(a.st_mode or 0) else out).append(r)
        return sorted(out)

    async def sha256(self, path: str) -> str:
        res = await self.transport.run(["sha256sum", path], check=True, timeout=None)
        return res.stdout.split()[0]

    async def close(self) -> None:
        try:
            await asyncio.to_thread(self.sftp.close)
        finally:
            self.transport._sem.release()


async def open_side(transport: Any | None) -> Side:
    if transport is None:
        return LocalSide()
    if getattr(transport, "kind", "") == "local":
        return LocalSide(transport.workdir, transport.name)
    return await SftpSide.open(transport)


@dataclass
class CopyResult:
    bytes: int  # size of the destination
    moved: int  # bytes moved by this attempt
    resumed_from: int
    checksum: str
    files: list[dict[str, Any]] = field(default_factory=list)


Progress = Callable[[int, int], None]  # (bytes done, bytes total), called from a thread


def _copy(src: Side, sp: str, dst: Side, part: str, offset: int, size: int,
          progress: Progress, cancel: threading.Event, limit: int | None) -> int:
    """Read and write in two threads joined by a small bounded queue (memory stays at a few
    windows), so the source's round trips overlap the destination's."""
    q: queue.Queue[bytes | BaseException | None] = queue.Queue(maxsize=64)

    def read() -> None:
        try:
            for chunk in src.reader(sp, offset, size):
                if cancel.is_set():
                    return
                q.put(chunk)
            q.put(None)
        except BaseException as e:  # handed to the writer, which raises it
            q.put(e)

    reader = threading.Thread(target=read, daemon=True, name="dmd-sftp-read")
    reader.start()
    moved = 0
    out = dst.open_write(part, offset)
    try:
        while (chunk := q.get()) is not None:
            if isinstance(chunk, BaseException):
                raise chunk
            if cancel.is_set():
                raise Cancelled("cancelled")
            if limit is not None and moved + len(chunk) > limit:
                out.write(chunk[: limit - moved])
                moved = limit
                raise Interrupted(f"stopped after {limit} bytes (partial file kept)")
            out.write(chunk)
            moved += len(chunk)
            progress(offset + moved, size)
    finally:
        cancel_reader = not reader.is_alive() or cancel.is_set()
        if not cancel_reader:
            cancel.set()  # stop the reader early (error or limit); drain so it can exit
            while reader.is_alive():
                with contextlib.suppress(queue.Empty):
                    q.get(timeout=0.1)
        out.close()
    return moved


async def copy_file(src: Side, src_path: str, dst: Side, dst_path: str, *,
                    progress: Progress, cancel: threading.Event,
                    limit: int | None = None) -> CopyResult:
    """Copy one file (resuming `DST.dmd-part`) and verify it by sha256 on both ends."""
    st = await asyncio.to_thread(src.stat, src_path)
    if st is None:
        raise BadInput(f"{src.label}: no such file: {src_path}")
    size = st[0]
    part = dst_path + PART
    have = await asyncio.to_thread(dst.stat, part)
    offset = have[0] if have and not have[1] and have[0] <= size else 0
    src_sum = asyncio.ensure_future(src.sha256(src_path))  # overlaps the copy
    try:
        moved = await asyncio.to_thread(_copy, src, src_path, dst, part, offset, size,
                                        progress, cancel, limit)
        dst_sum = await dst.sha256(part)
        want = await src_sum
    except BaseException:
        src_sum.cancel()
        raise
    if dst_sum != want:
        await asyncio.to_thread(dst.remove, part)  # a retry starts from scratch
        raise SiteError(f"checksum mismatch for {dst.label}:{dst_path}: source sha256 "
                        f"{want[:16]}…, destination {dst_sum[:16]}… (partial file removed)")
    await asyncio.to_thread(dst.rename, part, dst_path)
    progress(size, size)
    return CopyResult(size, moved, offset, want)


async def copy_tree(src: Side, src_path: str, dst: Side, dst_path: str, *,
                    progress: Progress, cancel: threading.Event) -> CopyResult:
    """Every file under a directory; the checksum is over the per-file sums."""
    rels = await asyncio.to_thread(src.walk, src_path)
    sizes = [(await asyncio.to_thread(src.stat, posixpath.join(src_path, r)) or (0, False))[0]
             for r in rels]
    total, done = sum(sizes), 0
    files, h, moved = [], hashlib.sha256(), 0
    for rel, size in zip(rels, sizes, strict=True):
        base = done

        def prog(d: int, _t: int, base: int = base) -> None:
            progress(base + d, total)
        r = await copy_file(src, posixpath.join(src_path, rel), dst,
                            posixpath.join(dst_path, rel), progress=prog, cancel=cancel)
        done += size
        moved += r.moved
        h.update(f"{r.checksum}  {rel}\n".encode())
        files.append({"path": rel, "bytes": size, "sha256": r.checksum})
    return CopyResult(total, moved, 0, h.hexdigest(), files)


async def sftp_copy(src_t: Any | None, src_path: str, dst_t: Any | None, dst_path: str, *,
                    recursive: bool, progress: Progress, cancel: threading.Event,
                    limit: int | None = None) -> CopyResult:
    """`src_t`/`dst_t`: a site's transport, or None for the server's own filesystem."""
    src = await open_side(src_t)
    try:
        dst = await open_side(dst_t)
        try:
            sp, dp = src.abspath(src_path), dst.abspath(dst_path)
            st = await asyncio.to_thread(src.stat, sp)
            if st is None:
                raise BadInput(f"{src.label}: no such file or directory: {src_path}")
            if st[1] and not recursive:
                raise BadInput(f"{src.label}:{src_path} is a directory (use recursive)")
            dstat = await asyncio.to_thread(dst.stat, dp)
            if dst_path.endswith("/") or (dstat and dstat[1] and not st[1]):
                dp = posixpath.join(dp, posixpath.basename(sp))
            if st[1]:
                return await copy_tree(src, sp, dst, dp, progress=progress, cancel=cancel)
            return await copy_file(src, sp, dst, dp, progress=progress, cancel=cancel,
                                   limit=limit)
        finally:
            await dst.close()
    finally:
        await src.close()

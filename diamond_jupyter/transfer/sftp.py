"""SFTP data movement over a site's pooled SSH connection (or the server's own disk).

Bytes stream in bounded windows (never a whole file in memory) into `DEST.dmd-part`; a
partial file left by an earlier attempt is resumed from its size, but only when it is a regular
file of the user's own (never through a link someone planted: a new part file is created
exclusively, without following links). When all bytes are there
the destination is hashed where it lives (`sha256sum` over SSH, or locally) and compared with
the source's hash (computed the same way, concurrently with the copy); only a match renames
the partial file into place, with the source's mode less setuid, setgid, sticky and
world-write bits. Site to site is relayed through the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import posixpath
import queue
import re
import stat as stat_mod
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Protocol

import paramiko

from ..model import BadInput, SiteError, one_line
from ..transports.base import open_regular, safe_mode, special_kind

PART = ".dmd-part"
WINDOW = 4 << 20  # bytes requested at once from an SFTP source
REQ = 32768  # one SFTP read request


class Interrupted(SiteError):
    """The copy stopped early (connection lost, byte limit); the partial file is kept."""


class Cancelled(SiteError):
    pass


class ChecksumMismatch(SiteError):
    """The bytes arrived but differ from the source's; the partial file was removed."""


class PartRefused(SiteError):
    """The partial file may not be written (a link, not the user's, changed): no retry."""


class TreeTooLarge(SiteError):
    """A directory to copy recursively is deeper or holds more entries than a copy walks (a
    hostile server's listing that contains itself would never end): no retry."""


# a name's bytes that are not UTF-8, as Python reads them (lone surrogates)
_NOT_UTF8 = re.compile(r"[\ud800-\udfff]")
MAX_WALK_DEPTH = 64  # directory levels a recursive copy descends
MAX_WALK_ENTRIES = 100_000  # directory entries (files, directories, others) it looks at
LIST_AHEAD = 4  # directories a recursive copy's walk lists at once, per SFTP channel
FILES_AT_ONCE = 4  # files a recursive copy over SSH moves at once, each on its own channel
HIDDEN_LEFT = ("a hidden name, left out of a tool call's copy (copy it yourself from the "
               "command line)")


class Side(Protocol):
    """One end of a copy; methods without `async` block (run them in a thread)."""

    label: str

    def abspath(self, path: str) -> str: ...
    def stat(self, path: str) -> tuple[int, bool, int] | None: ...  # (size, is_dir, mode)
    def part_size(self, path: str) -> int | None: ...  # a resumable partial file's size
    def reader(self, path: str, offset: int, size: int) -> Any: ...  # yields byte chunks
    def open_write(self, path: str, offset: int) -> BinaryIO: ...
    def set_mode(self, f: BinaryIO, mode: int) -> None: ...
    def rename(self, src: str, dst: str) -> None: ...
    def remove(self, path: str) -> None: ...
    def walk(self, path: str, skip_hidden: bool = False) -> Walk: ...  # its regular files
    async def sha256(self, path: str, size: int = 0) -> str: ...
    async def close(self) -> None: ...


@dataclass
class Walk:
    """What a recursive copy takes from a directory: its regular files (relative paths) and
    what it leaves out, said in the transfer's record (`skipped`): symbolic links (followed,
    a link in a job's output would copy whatever it points to, outside the directory), other
    special files, and names that are not one plain path component (a hostile server's
    `../x` would be written outside the destination); with `skip_hidden` (a tool call's
    copy), every hidden entry (`.x`) at any depth, a hidden directory not entered."""

    root: str = ""  # what is walked, as errors name it (SITE:PATH)
    skip_hidden: bool = False
    files: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    seen: int = 0  # entries looked at so far
    sizes: dict[str, int] = field(default_factory=dict)  # each file's, as listed

    def entry(self, rel: str, name: str, mode: int, size: int | None = None) -> str | None:
        """Sort one directory entry (`size`: a file's, as the listing gave it); the
        relative path to descend into when it is a directory, else None. TreeTooLarge past
        MAX_WALK_ENTRIES entries or below MAX_WALK_DEPTH levels."""
        self.seen += 1
        if self.seen > MAX_WALK_ENTRIES:
            raise TreeTooLarge(f"{self.root}: more than {MAX_WALK_ENTRIES} entries under it, "
                               "the most a recursive copy lists; copy its subdirectories "
                               "one by one or archive it first")
        sub = posixpath.join(rel, name) if rel else name
        if not name or name in (".", "..") or "/" in name or "\x00" in name:
            self.skipped.append(f"{(rel + '/') if rel else ''}{name!r}: not a plain file name")
        elif _NOT_UTF8.search(name):  # no record, event or listing can carry it
            self.skipped.append(f"{(rel + '/') if rel else ''}{ascii(name)}: the name is not "
                                "UTF-8 text; rename it (e.g. with convmv) and copy it again")
        elif self.skip_hidden and name.startswith("."):
            self.skipped.append(f"{sub}{'/' if stat_mod.S_ISDIR(mode) else ''}: {HIDDEN_LEFT}")
        elif stat_mod.S_ISDIR(mode):
            if sub.count("/") + 1 > MAX_WALK_DEPTH:
                raise TreeTooLarge(f"{self.root}: {sub[:200]!r} is more than {MAX_WALK_DEPTH} "
                                   "directories deep, the deepest a recursive copy goes (a "
                                   "listing that contains itself never ends); copy a "
                                   "shallower directory or archive it first")
            return sub
        elif stat_mod.S_ISREG(mode):
            self.files.append(sub)
            if size is not None:
                self.sizes[sub] = size
        else:
            kind = "a symbolic link" if stat_mod.S_ISLNK(mode) else "not a regular file"
            self.skipped.append(f"{sub}: {kind}")
        return None


def check_part(label: str, path: str, mode: int, uid: int | None, mine: int | None) -> None:
    """A partial file is written to only when it is a regular file the user owns."""
    if stat_mod.S_ISLNK(mode):
        why = "it is a symbolic link"
    elif not stat_mod.S_ISREG(mode):
        why = "it is not a regular file"
    elif mine is not None and uid != mine:
        why = f"it is owned by another user (uid {uid})"
    else:
        return
    raise PartRefused(f"{label}: refusing to write the partial file {path}: {why}; remove it "
                    "and run the transfer again")


class LocalSide:
    """The server's own filesystem (or a site with a local transport)."""

    def __init__(self, root: str | None = None, label: str = "local") -> None:
        self.root = os.path.expanduser(root or os.getcwd())
        self.label = label

    def abspath(self, path: str) -> str:
        return os.path.normpath(os.path.join(self.root, os.path.expanduser(path)))

    def stat(self, path: str) -> tuple[int, bool, int] | None:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return None
        return st.st_size, stat_mod.S_ISDIR(st.st_mode), st.st_mode

    def part_size(self, path: str) -> int | None:
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return None
        check_part(self.label, path, st.st_mode, st.st_uid, os.getuid())
        return st.st_size

    def reader(self, path: str, offset: int, size: int):
        """At most the `size` bytes the copy stat'ed (a file that grows meanwhile, or a
        device, is not read for ever), of a regular file only (`open_regular`)."""
        with open_regular(path) as f:
            f.seek(offset)
            left = size - offset
            while left > 0 and (chunk := f.read(min(1 << 20, left))):
                left -= len(chunk)
                yield chunk

    def open_write(self, path: str, offset: int) -> BinaryIO:
        """Resume (`offset` > 0) an existing part file without following a link, else create
        a new private one exclusively (a link planted meanwhile makes the open fail)."""
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        try:
            if offset:
                fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW)
            else:
                self.remove(path)
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except OSError as e:
            raise PartRefused(f"{self.label}: cannot write the partial file {path}: "
                            f"{e.strerror} (is it a link?)") from None
        try:
            st = os.fstat(fd)
            check_part(self.label, path, st.st_mode, st.st_uid, os.getuid())
            if st.st_nlink != 1:
                raise PartRefused(f"{self.label}: refusing to write the partial file {path}: it "
                                "has other hard links; remove it and run the transfer again")
        except BaseException:
            os.close(fd)
            raise
        f = os.fdopen(fd, "wb")  # wraps the descriptor: nothing is truncated here
        f.truncate(offset)
        f.seek(offset)
        return f

    def set_mode(self, f: BinaryIO, mode: int) -> None:
        os.fchmod(f.fileno(), mode)

    def rename(self, src: str, dst: str) -> None:
        os.replace(src, dst)

    def remove(self, path: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)

    def walk(self, path: str, skip_hidden: bool = False) -> Walk:
        found, todo = Walk(f"{self.label}:{path}", skip_hidden=skip_hidden), [""]
        while todo:
            rel = todo.pop()
            with os.scandir(os.path.join(path, rel) if rel else path) as entries:
                for e in entries:
                    st = e.stat(follow_symlinks=False)
                    sub = found.entry(rel, e.name, st.st_mode, st.st_size)
                    if sub is not None:
                        todo.append(sub)
        found.files.sort()
        return found

    async def sha256(self, path: str, size: int = 0) -> str:
        def digest() -> str:
            h = hashlib.sha256()
            with open_regular(path) as f:
                while chunk := f.read(1 << 20):
                    h.update(chunk)
            return h.hexdigest()
        return await asyncio.to_thread(digest)

    async def close(self) -> None:
        return None


class SftpSide:
    """A site reached over SSH: its own SFTP channel on the site's pooled connection (so a
    long copy never blocks the transport's SFTP channel that job submission uses)."""

    def __init__(self, transport: Any, sftp: paramiko.SFTPClient, home: str,
                 uid: int | None = None) -> None:
        self.transport, self.sftp, self.home = transport, sftp, home
        self.uid = uid  # the login's uid (its home directory's owner)
        self.label = transport.name

    @classmethod
    async def open(cls, transport: Any, *, retry: bool = True) -> SftpSide:
        """The site's side on a channel of its own (a session slot of the connection's);
        an open the server refuses on a live connection is asked again for up to about 3 s
        (`retry`), as a command's is."""
        await transport._take_session()  # one sshd session, counted against MaxSessions
        try:
            conn = await transport._ensure()
            delay = 0.01
            while True:  # sshd frees a closed session's slot a moment after the close
                try:
                    sftp = await asyncio.to_thread(paramiko.SFTPClient.from_transport,
                                                   conn.transport)
                    break
                except (paramiko.SSHException, EOFError, OSError):
                    if not retry or not conn.alive() or delay > 1.5:
                        raise
                    await asyncio.sleep(delay)
                    delay *= 2
            home = await asyncio.to_thread(sftp.normalize, ".")
            uid = (await asyncio.to_thread(sftp.stat, home)).st_uid
        except BaseException:
            transport._sem.release()
            raise
        return cls(transport, sftp, home, uid)

    @classmethod
    async def open_now(cls, transport: Any) -> SftpSide | None:
        """`open`, only when the connection has two session slots free right away (this
        channel's and one for a command beside it); else None, never waiting."""
        sem = getattr(transport, "_sem", None)
        if sem is None or getattr(sem, "_value", 0) < 2:
            return None
        try:
            return await cls.open(transport, retry=False)
        except (SiteError, OSError, EOFError, paramiko.SSHException):
            return None  # the server refused one more channel: the copy goes on without

    def abspath(self, path: str) -> str:
        if path == "~" or path.startswith("~/"):
            path = self.home + path[1:]
        return posixpath.normpath(posixpath.join(self.home, path))

    def stat(self, path: str) -> tuple[int, bool, int] | None:
        try:
            a = self.sftp.stat(path)
        except FileNotFoundError:
            return None
        return a.st_size or 0, stat_mod.S_ISDIR(a.st_mode or 0), a.st_mode or 0

    def part_size(self, path: str) -> int | None:
        try:
            a = self.sftp.lstat(path)  # the link itself, never where it points
        except FileNotFoundError:
            return None
        check_part(self.label, path, a.st_mode or 0, a.st_uid, self.uid)
        return a.st_size or 0

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
                try:
                    self.sftp.mkdir(cur, 0o700)
                except OSError as e:  # made meanwhile (another copy of the tree's files)?
                    try:
                        made = stat_mod.S_ISDIR(self.sftp.stat(cur).st_mode or 0)
                    except OSError:
                        made = False
                    if not made:
                        raise e from None

    def open_write(self, path: str, offset: int) -> BinaryIO:
        """SFTP has no O_NOFOLLOW: a resumed part file is checked by `lstat` before the open
        and by `fstat` of the open handle after it (still a regular file of the user's own,
        the same size and time); a new one is created exclusively (O_EXCL fails on a link)."""
        self._mkdirs(posixpath.dirname(path))
        if offset:
            size = self.part_size(path)
            before = self.sftp.lstat(path)
            f = self.sftp.open(path, "r+b")
            a = f.stat()
            if (not stat_mod.S_ISREG(a.st_mode or 0) or a.st_uid != before.st_uid
                    or a.st_size != size or a.st_mtime != before.st_mtime):
                f.close()
                raise PartRefused(f"{self.label}: refusing to write the partial file {path}: "
                                "it changed while it was being opened")
            f.truncate(offset)
            f.seek(offset)
        else:
            self.remove(path)  # removes a link itself, never its target
            try:
                f = self.sftp.open(path, "wbx")
            except OSError as e:
                raise PartRefused(f"{self.label}: cannot create the partial file {path}: "
                                f"{getattr(e, 'strerror', '') or e} (is it a link?)") from None
            f.chmod(0o600)
        f.set_pipelined(True)
        return f  # type: ignore[return-value]

    def set_mode(self, f: BinaryIO, mode: int) -> None:
        f.chmod(mode)  # type: ignore[attr-defined]  # on the handle (fsetstat)

    def rename(self, src: str, dst: str) -> None:
        self.sftp.posix_rename(src, dst)

    def remove(self, path: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.sftp.remove(path)

    def walk(self, path: str, skip_hidden: bool = False) -> Walk:
        """Directory listings give each entry's own attributes (lstat): a link is a link.
        TreeTooLarge for a tree deeper or larger than a copy walks (see Walk.entry)."""
        found, todo = Walk(f"{self.label}:{path}", skip_hidden=skip_hidden), [""]
        while todo:
            rel = todo.pop()
            for a in self.sftp.listdir_attr(posixpath.join(path, rel)):
                sub = found.entry(rel, a.filename, a.st_mode or 0, a.st_size or 0)
                if sub is not None:
                    todo.append(sub)
        found.files.sort()
        return found

    async def walk_pooled(self, path: str, skip_hidden: bool = False) -> Walk:
        """`walk`'s answer (the same files and sizes, the same skipped entries in the same
        order, the same limits and errors where the walk meets them), the directories it
        takes next listed several at once on the transport's SFTP channels
        (`sftp_channels`): one request at a time on this side's own channel took a round
        trip per directory. When the walk reaches a directory not yet listed, the next
        `LIST_AHEAD` x channels of those it still holds (its own first) are asked
        together; every one of them is one the walk lists unless it stops at a limit
        first, so a hostile listing costs at most that many more. A transport without
        the channels is walked as `walk` does."""
        each = getattr(self.transport, "_sftp_each", None)
        if each is None:
            return await asyncio.to_thread(self.walk, path, skip_hidden)
        what = f"cannot list {path}"
        ahead = LIST_AHEAD * max(1, getattr(self.transport, "sftp_channels", 1))
        listed: dict[str, list[paramiko.SFTPAttributes] | OSError] = {}
        found, todo = Walk(f"{self.label}:{path}", skip_hidden=skip_hidden), [""]
        while todo:
            if todo[-1] not in listed:  # the walk's next directory and those after it
                batch = [rel for rel in reversed(todo) if rel not in listed][:ahead]
                got = await each(what, _listing, [(path, rel) for rel in batch])
                listed.update(zip(batch, got, strict=True))
            rel = todo.pop()
            entries = listed.pop(rel)
            if isinstance(entries, OSError):
                raise entries
            for a in entries:
                sub = found.entry(rel, a.filename, a.st_mode or 0, a.st_size or 0)
                if sub is not None:
                    todo.append(sub)
        found.files.sort()
        return found

    async def sha256(self, path: str, size: int = 0) -> str:
        # hashing reads the whole file: the time allowed grows with it (20 MB/s at worst)
        res = await self.transport.run(["sha256sum", "--", path], check=True,
                                       timeout=300.0 + size / 20e6)
        return sha256_of_line(res.stdout, f"{self.label}:{path}")

    async def close(self) -> None:
        """Close the channel and give its session slot back; a connection found lost is
        dropped (`drop_if_lost`), so that its pooled SFTP channels give theirs back too
        before a failed copy's error reaches the caller."""
        try:
            await asyncio.to_thread(self.sftp.close)
        finally:
            self.transport._sem.release()
            if (drop_if_lost := getattr(self.transport, "drop_if_lost", None)) is not None:
                drop_if_lost()


def _listing(sftp: paramiko.SFTPClient, _home: str, path: str, rel: str
             ) -> list[paramiko.SFTPAttributes] | OSError:
    """The entries of `path`'s subdirectory `rel` in the server's order, each with its own
    attributes (lstat); a missing or unreadable directory's error returned, for the walk
    to raise where `SftpSide.walk` meets it (a lost connection's is raised)."""
    try:
        return sftp.listdir_attr(posixpath.join(path, rel))
    except (FileNotFoundError, PermissionError) as e:
        return e


# GNU sha256sum writes a backslash before the sum of a file whose name holds a backslash or
# a newline (the name itself escaped after it)
_SUM_LINE = re.compile(r"\\?([0-9a-f]{64})[ *]")


def sha256_of_line(out: str, where: str) -> str:
    """The sum in `sha256sum`'s answer about one file. Read as its first word, the sum of a
    file named `a\\b` or with a newline was `\\<sum>`, which matched nothing: the copy
    failed as a "checksum mismatch" and removed what had arrived. SiteError when the answer
    holds no sum (a site's `sha256sum` that is something else)."""
    m = _SUM_LINE.match(out)
    if m is None:
        raise SiteError(f"{one_line(where)}: sha256sum answered no sha256 sum "
                        f"({one_line(repr(out[:80]))})")
    return m.group(1)


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
    skipped: list[str] = field(default_factory=list)  # left out of a directory (`Walk`)


Progress = Callable[[int, int], None]  # (bytes done, bytes total), called from a thread
# called just before the copy's last file is put in place (its bytes all there and checked):
# raises Cancelled when a cancel was accepted first, which leaves the partial file aside
Commit = Callable[[], None]


def _next(q: queue.Queue, cancel: threading.Event) -> Any:
    """The reader's next chunk; Cancelled once `cancel` is set (the reader may have stopped
    without a last item, and a writer blocked for ever would hold its thread)."""
    while True:
        try:
            return q.get(timeout=0.2)
        except queue.Empty:
            if cancel.is_set():
                raise Cancelled("cancelled") from None


def _copy(src: Side, sp: str, dst: Side, part: str, offset: int, size: int, mode: int,
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
    moved, read_all = 0, False
    out = dst.open_write(part, offset)
    try:
        while (chunk := _next(q, cancel)) is not None:
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
        read_all = True  # the reader is ending by itself
        dst.set_mode(out, mode)
    finally:
        # the shared `cancel` is set only to stop a reader still reading (an error, a
        # limit): set after a whole read, it could stop the next file of a tree
        cancel_reader = read_all or not reader.is_alive() or cancel.is_set()
        if not cancel_reader:
            cancel.set()  # stop the reader early (error or limit); drain so it can exit
            while reader.is_alive():
                with contextlib.suppress(queue.Empty):
                    q.get(timeout=0.1)
        out.close()
    return moved


async def copy_file(src: Side, src_path: str, dst: Side, dst_path: str, *,
                    progress: Progress, cancel: threading.Event,
                    limit: int | None = None, commit: Commit | None = None) -> CopyResult:
    """Copy one file (resuming `DST.dmd-part`) and verify it by sha256 on both ends; then,
    unless `commit` refuses (a cancel accepted meanwhile), put it in place."""
    st = await asyncio.to_thread(src.stat, src_path)
    if st is None:
        raise BadInput(f"{src.label}: no such file: {src_path}")
    size, mode = st[0], safe_mode(st[2])
    part = dst_path + PART
    have = await asyncio.to_thread(dst.part_size, part)
    offset = have if have is not None and have <= size else 0
    src_sum = asyncio.ensure_future(src.sha256(src_path, size))  # overlaps the copy
    try:
        moved = await asyncio.to_thread(_copy, src, src_path, dst, part, offset, size, mode,
                                        progress, cancel, limit)
        dst_sum = await dst.sha256(part, size)
        want = await src_sum
    except BaseException:
        src_sum.cancel()  # its command's session slot back before the error goes on
        await asyncio.gather(src_sum, return_exceptions=True)
        raise
    if dst_sum != want:
        await asyncio.to_thread(dst.remove, part)  # a retry starts from scratch
        raise ChecksumMismatch(f"checksum mismatch for {dst.label}:{dst_path}: source sha256 "
                        f"{want[:16]}…, destination {dst_sum[:16]}… (partial file removed)")
    if commit is not None:
        commit()
    await asyncio.to_thread(dst.rename, part, dst_path)
    progress(size, size)
    return CopyResult(size, moved, offset, want)


async def _already_there(src: Side, src_path: str, dst: Side, dst_path: str,
                         size: int) -> CopyResult | None:
    """The file is at the destination already (same size and sha256), or None."""
    have = await asyncio.to_thread(dst.stat, dst_path)
    if not have or have[1] or have[0] != size or special_kind(have[2]):
        return None
    want, got = await asyncio.gather(src.sha256(src_path), dst.sha256(dst_path))
    return CopyResult(size, 0, size, want) if want == got else None


# whether a copy into a directory may replace the file already at RELATIVE-PATH, whose
# sha256 is given (None: replace anything, as asked with overwrite)
Replaceable = Callable[[str, str], bool]
NOT_REPLACED = ("a file is there that no earlier copy to this destination wrote (or it "
                "changed since); not replaced unless asked to overwrite")


async def _kept(dst: Side, dst_path: str, rel: str, replaceable: Replaceable | None
                ) -> str | None:
    """Why the file at `dst_path` (`rel` in the destination directory) stays as it is, or
    None when the copy may write there (nothing there, or replaceable)."""
    have = await asyncio.to_thread(dst.stat, dst_path)
    if have is not None and (kind := special_kind(have[2])):  # whatever `replaceable` says
        return f"{rel}: {kind} is there; not replaced (remove it to copy the file there)"
    if replaceable is None or have is None:
        return None
    if have[1]:
        return f"{rel}: a directory is there"
    return None if replaceable(rel, await dst.sha256(dst_path, have[0])) \
        else f"{rel}: {NOT_REPLACED}"


async def copy_tree(src: Side, src_path: str, dst: Side, dst_path: str, *,
                    progress: Progress, cancel: threading.Event,
                    replaceable: Replaceable | None = None,
                    skip_hidden: bool = False, commit: Commit | None = None,
                    more: Sequence[tuple[Side, Side]] = ()) -> CopyResult:
    """Every file under a directory; the checksum is over the per-file sums. A file already
    at the destination (and different) is replaced only when `replaceable` says so (None:
    always); else it is left as it is and listed in `skipped`; so is each hidden entry with
    `skip_hidden`. `commit` is asked before the last file is put in place. `more`: other
    (source, destination) channels of the same two ends (`more_sides`): the files but the
    last are copied that many more at once, each on its own pair; the last, alone after
    them. The first failure stops the others (a copy that fails sets `cancel` to stop its
    reader, which stops every copy's) and is raised; the answer is in the files' order."""
    walk_pooled = getattr(src, "walk_pooled", None)
    found = await walk_pooled(src_path, skip_hidden) if walk_pooled is not None \
        else await asyncio.to_thread(src.walk, src_path, skip_hidden)
    rels = found.files
    # each file's size as listed (a stat of each had cost a round trip a file)
    sizes = [found.sizes[r] if r in found.sizes else
             (await asyncio.to_thread(src.stat, posixpath.join(src_path, r)) or (0,))[0]
             for r in rels]
    total, done = [sum(sizes)], [0]  # bytes to copy (less those kept), of files done
    moving: dict[int, int] = {}  # bytes so far of each file being copied
    results: dict[int, CopyResult | str] = {}  # each file's copy, or why it was kept
    errors: list[BaseException] = []
    reporting = threading.Lock()  # `progress` is called as by one copy at a time

    async def one(i: int, s: Side, d: Side, last: Commit | None = None) -> None:
        rel, size = rels[i], sizes[i]

        def prog(n: int, _t: int) -> None:  # from the copy's thread, one at a time
            with reporting:
                moving[i] = n
                progress(done[0] + sum(moving.values()), total[0])
        sp, dp = posixpath.join(src_path, rel), posixpath.join(dst_path, rel)
        r = await _already_there(s, sp, d, dp, size)  # a retry: skip what has arrived
        if r is None:
            why = await _kept(d, dp, rel, replaceable)
            if why is not None:
                results[i], total[0] = why, total[0] - size
                return
            r = await copy_file(s, sp, d, dp, progress=prog, cancel=cancel, commit=last)
        with reporting:
            moving.pop(i, None)
            done[0] += size
        results[i] = r

    head = iter(range(len(rels) - 1))

    async def worker(s: Side, d: Side) -> None:
        for i in head:
            if errors:
                return
            try:
                await one(i, s, d)
            except Exception as e:
                errors.append(e)
                raise

    workers = [asyncio.ensure_future(worker(s, d))
               for s, d in [(src, dst), *more][:max(1, len(rels) - 1)]]
    try:
        await asyncio.gather(*workers, return_exceptions=True)
    finally:
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
    if errors:  # the first that is not another copy stopped by it
        raise next((e for e in errors if not isinstance(e, Cancelled)), errors[0])
    if rels:
        await one(len(rels) - 1, src, dst, commit)
    files, h, moved = [], hashlib.sha256(), 0
    skipped = list(found.skipped)
    for i, (rel, size) in enumerate(zip(rels, sizes, strict=True)):
        r = results[i]
        if isinstance(r, str):
            skipped.append(r)
            continue
        moved += r.moved
        h.update(f"{r.checksum}  {rel}\n".encode())
        files.append({"path": rel, "bytes": size, "sha256": r.checksum})
    return CopyResult(total[0], moved, 0, h.hexdigest(), files, skipped)


def files_at_once(src: Side, src_t: Any | None, dst: Side, dst_t: Any | None) -> int:
    """How many of a tree's files are copied at once: one between two local ends (no round
    trip to overlap), else FILES_AT_ONCE, at most the SFTP channels the SSH site(s) allow
    (`transport.sftp_channels`; 1: one file after another, as before)."""
    ends = [t for side, t in ((src, src_t), (dst, dst_t)) if isinstance(side, SftpSide)]
    if not ends:
        return 1
    return max(1, min(FILES_AT_ONCE, *(getattr(t, "sftp_channels", 1) for t in ends)))


async def more_sides(side: Side, transport: Any | None, n: int) -> list[Side]:
    """Up to `n` more channels to the end `side` is, for a tree's files copied at once: the
    same LocalSide (it keeps no state between calls); for an SFTP side, each its own
    channel (`SftpSide.open_now`), only as many as the connection has session slots free
    right away, two each (the channel and its files' sha256 commands): none is waited
    for. Close what comes back (`close_sides`)."""
    if not isinstance(side, SftpSide):
        return [side] * n
    out: list[Side] = []
    while len(out) < n and (extra := await SftpSide.open_now(transport)) is not None:
        out.append(extra)
    return out


async def close_sides(sides: Sequence[Side]) -> None:
    for side in {id(s): s for s in sides}.values():
        with contextlib.suppress(Exception):  # a channel gone with its connection
            await side.close()


def _stat_here(side: Side, path: str) -> tuple[int, bool, int] | None:
    """`side.stat`, None too for a path under a file (ENOTDIR: nothing can be there)."""
    try:
        return side.stat(path)
    except NotADirectoryError:
        return None


def destination_refused(side: Side, dst_path: str, src_is_dir: bool | None) -> str | None:
    """Why no copy can be put at `dst_path` on `side` (known before any byte moves), or
    None: it is a FIFO, a socket or a device (a copy would replace it); it is a file where
    a directory is needed (a path ending in '/', or a directory's copy: `src_is_dir`, None
    when not known); or it lies under a file. Blocking (stats on `side`)."""
    dp = side.abspath(dst_path)
    where = f"dst: {side.label}:{dst_path}"
    st = _stat_here(side, dp)
    if st is not None and (kind := special_kind(st[2])):
        return (f"{where} is {kind}, not a file or a directory: a copy would replace it "
                "(give a file or directory path)")
    if st is not None and not st[1] and (dst_path.endswith("/") or src_is_dir):
        if src_is_dir:
            return (f"{where} is a file, not a directory: a directory's copy cannot be put "
                    "in it (give a directory path)")
        return (f"{where} is a file, not a directory: a copy into a directory cannot be put "
                "in it (give a directory path, or name the file without a trailing '/' to "
                "replace it)")
    if st is not None:
        return None
    parent, below = posixpath.dirname(dp), dp
    while parent != below:  # up to the first ancestor that exists
        pst = _stat_here(side, parent)
        if pst is not None:
            if pst[1]:
                return None
            kind = special_kind(pst[2]) or "a file"
            return (f"{where} is under {side.label}:{parent}, which is {kind}, not a "
                    "directory: a copy cannot be put there (give a path in a directory)")
        parent, below = posixpath.dirname(parent), parent
    return None


async def sftp_copy(src_t: Any | None, src_path: str, dst_t: Any | None, dst_path: str, *,
                    recursive: bool, progress: Progress, cancel: threading.Event,
                    limit: int | None = None, replaceable: Replaceable | None = None,
                    skip_hidden: bool = False, commit: Commit | None = None) -> CopyResult:
    """`src_t`/`dst_t`: a site's transport, or None for the server's own filesystem. Copied
    into a directory (a tree, or a file into an existing directory or a path ending in
    '/'), a file already there is replaced only as `replaceable` says (see `copy_tree`); a
    destination file named in full is replaced. `skip_hidden` (a tool call's copy): no
    hidden entry is copied, at any depth (each is listed in `skipped`), and a hidden name
    the copy would create in the destination directory is BadInput."""
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
            refused = await asyncio.to_thread(destination_refused, dst, dst_path, st[1])
            if refused is not None:
                raise BadInput(refused)
            dstat = await asyncio.to_thread(dst.stat, dp)
            into = dst_path.endswith("/") or (not st[1] and dstat and dstat[1])
            if skip_hidden and into and posixpath.basename(sp).startswith("."):
                raise BadInput(f"src: {src_path} has a hidden name, which a tool call's copy "
                               "does not create in a directory; name the destination in "
                               "full, or copy it yourself from the command line")
            if st[1]:
                if dst_path.endswith("/"):
                    dp = posixpath.join(dp, posixpath.basename(sp))
                n = files_at_once(src, src_t, dst, dst_t) - 1
                srcs = await more_sides(src, src_t, n) if n else []
                try:
                    dsts = await more_sides(dst, dst_t, len(srcs)) if srcs else []
                    return await copy_tree(src, sp, dst, dp, progress=progress,
                                           cancel=cancel, replaceable=replaceable,
                                           skip_hidden=skip_hidden, commit=commit,
                                           more=list(zip(srcs, dsts, strict=False)))
                finally:
                    await close_sides([x for x in (*srcs, *dsts) if x not in (src, dst)])
            if dst_path.endswith("/") or (dstat and dstat[1]):  # into a directory
                name = posixpath.basename(sp)
                dp = posixpath.join(dp, name)
                if await _already_there(src, sp, dst, dp, st[0]) is None:
                    why = await _kept(dst, dp, name, replaceable)
                    if why is not None:
                        return CopyResult(0, 0, 0, "", [], [why])
                res = await copy_file(src, sp, dst, dp, progress=progress, cancel=cancel,
                                      limit=limit, commit=commit)
                res.files = [{"path": name, "bytes": res.bytes, "sha256": res.checksum}]
                return res
            return await copy_file(src, sp, dst, dp, progress=progress, cancel=cancel,
                                   limit=limit, commit=commit)
        finally:
            await dst.close()
    finally:
        await src.close()

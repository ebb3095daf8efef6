"""Blocking SFTP operations for `SSHTransport` (each run in a thread on one SFTP channel),
and the order a directory walk gives its files (`FileWalk`)."""

from __future__ import annotations

import contextlib
import errno
import os
import posixpath
import secrets
import stat as stat_mod
import tempfile

import paramiko

from ..model import BadInput
from .base import FileStat, LeftItsDirectory, inside, listed


def absolute(home: str, path: str) -> str:
    """`~`, `~/x` and relative paths are taken from the login directory, as in a shell."""
    if path == "~" or path.startswith("~/"):
        path = home + path[1:]
    elif path.startswith("~"):
        raise BadInput(f"~user paths are not supported: {path}")
    return posixpath.normpath(posixpath.join(home, path))


def mkdirs(sftp: paramiko.SFTPClient, d: str) -> None:
    cur = ""
    for part in [p for p in d.split("/") if p]:
        cur += "/" + part
        try:
            sftp.stat(cur)
        except FileNotFoundError:
            sftp.mkdir(cur, 0o700)  # private unless the site says otherwise


def put(sftp: paramiko.SFTPClient, home: str, data: bytes, path: str, mode: int) -> None:
    """Write a temp file next to `path`, set its mode before any byte, then rename over."""
    path = absolute(home, path)
    d, base = posixpath.split(path)
    tmp = f"{d}/.{base}.{secrets.token_hex(4)}.tmp"
    try:
        f = sftp.open(tmp, "wb")
    except FileNotFoundError:
        mkdirs(sftp, d)
        f = sftp.open(tmp, "wb")
    try:
        with f:
            sftp.chmod(tmp, mode)
            f.set_pipelined(True)
            f.write(data)
        sftp.posix_rename(tmp, path)
    except BaseException:
        with contextlib.suppress(Exception):
            sftp.remove(tmp)
        raise


class FileTooLarge(Exception):
    """A file read whole (`get`) holds more than the bytes allowed."""


def get(sftp: paramiko.SFTPClient, home: str, path: str, max_bytes: int) -> bytes:
    """The whole file, at most `max_bytes` of it: a larger one (or one that never ends, a
    device) raises FileTooLarge after `max_bytes + 1` bytes at most."""
    with sftp.open(absolute(home, path), "rb") as f:
        size = f.stat().st_size or 0
        if size > max_bytes:
            raise FileTooLarge(path)
        f.prefetch(size)
        data = f.read(max_bytes + 1)
        if len(data) > max_bytes:  # grew since, or not a regular file
            raise FileTooLarge(path)
        return data


WINDOW = 2 << 20  # bytes requested at once while downloading (paramiko holds ~3x this)
REQ = 32768  # one SFTP read request


def opened_in(sftp: paramiko.SFTPClient, f: paramiko.SFTPFile, path: str, within: str
              ) -> None:
    """LeftItsDirectory unless the file `f`, opened at `path`, is still a regular file there
    (not a link), its directory (links resolved) is in `within`, and the path still names
    the file opened: SFTP opens follow links, so this is checked just after the open, before
    a byte is read. The file is stat'ed before its path, so a file still being written (a
    running job's log) may have grown in between; only a path now naming something smaller
    or older than what was opened counts as swapped."""
    opened = f.stat()
    now = sftp.lstat(path)
    if now.st_mode is None or not stat_mod.S_ISREG(now.st_mode):
        raise LeftItsDirectory(f"{path} is a symbolic link or no longer a file")
    if not inside(sftp.normalize(posixpath.dirname(path)), sftp.normalize(within)):
        raise LeftItsDirectory(f"{path} is reached through a link out of {within}")
    grew = [(now_v or 0) >= (opened_v or 0) for now_v, opened_v in
            ((now.st_size, opened.st_size), (now.st_mtime, opened.st_mtime))]
    if not all(grew):
        raise LeftItsDirectory(f"{path} was swapped for another file as it was opened")


def download(sftp: paramiko.SFTPClient, home: str, path: str, local_path: str,
             mode: int, max_bytes: int | None = None, within: str | None = None) -> None:
    """Stream a remote file to `local_path` in bounded windows (never whole in memory):
    into a new private temp file beside it, given `mode`, then renamed over. Only the size
    it had when opened is read; above `max_bytes`, FileTooLarge(size) before any byte.
    `within` (a directory): `opened_in` is checked first."""
    d, base = os.path.split(local_path)
    fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=".tmp", dir=d or ".")
    try:
        with os.fdopen(fd, "wb") as out, sftp.open(absolute(home, path), "rb") as f:
            if within is not None:
                opened_in(sftp, f, absolute(home, path), absolute(home, within))
            size, pos = f.stat().st_size or 0, 0
            if max_bytes is not None and size > max_bytes:  # a sparse file's holes count
                raise FileTooLarge(size)
            while pos < size:
                end = min(pos + WINDOW, size)
                for chunk in f.readv([(o, min(REQ, end - o)) for o in range(pos, end, REQ)]):
                    out.write(chunk)
                pos = end
            os.fchmod(out.fileno(), mode)
        os.replace(tmp, local_path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read_end(sftp: paramiko.SFTPClient, home: str, path: str, max_bytes: int) -> bytes | None:
    """The last `max_bytes` bytes of a file (all of a smaller one); None when it does not
    exist. Read with SFTP requests alone: no command runs."""
    try:
        f = sftp.open(absolute(home, path), "rb")
    except FileNotFoundError:
        return None
    with f:
        size = f.stat().st_size or 0
        start = max(0, size - max_bytes)
        return b"".join(f.readv([(o, min(REQ, size - o)) for o in range(start, size, REQ)]))


def stat(sftp: paramiko.SFTPClient, home: str, path: str, follow_links: bool = True
         ) -> FileStat | None:
    p = absolute(home, path)
    try:
        a = sftp.stat(p) if follow_links else sftp.lstat(p)
    except FileNotFoundError:
        return None
    mode = a.st_mode or 0
    return FileStat(p, a.st_size or 0, mode, float(a.st_mtime or 0), stat_mod.S_ISDIR(mode))


def link_target(sftp: paramiko.SFTPClient, home: str, path: str) -> tuple[str, str | None]:
    """What the link `path` holds (SFTP READLINK) and where it leads (`real_path`)."""
    p = absolute(home, path)
    return sftp.readlink(p) or "", real_path(sftp, home, p)


def real_path(sftp: paramiko.SFTPClient, home: str, path: str) -> str | None:
    """`path` with every link resolved by the server (SFTP REALPATH, as realpath(3)), when
    what it names exists; None when it leads nowhere (a missing target, a loop, no right to
    look)."""
    try:
        resolved = sftp.normalize(absolute(home, path))
        sftp.lstat(resolved)  # OpenSSH resolves a missing last component to itself
        return resolved
    except OSError as e:  # the server's "no such file", "permission denied" or "failure"
        if e.errno not in (None, errno.ENOENT, errno.EACCES):
            raise  # the connection's own error (a socket's errno)
        return None


def list_dir(sftp: paramiko.SFTPClient, home: str, root: str,
             rel: str) -> list[paramiko.SFTPAttributes] | None:
    """The entries of `root`'s subdirectory `rel` ("": `root` itself) sorted by name, each
    with its own attributes (lstat: a link is a link); None when it is gone or not ours to
    read."""
    base = absolute(home, root)
    try:
        entries = sftp.listdir_attr(posixpath.join(base, rel) if rel else base)
    except (FileNotFoundError, PermissionError):
        return None
    return sorted(entries, key=lambda e: e.filename)


class FileWalk:
    """Regular files under `root` (at most `max_depth` levels, `limit` entries; with
    `special` the FIFOs, devices, sockets and links too), from SFTP directory listings: no
    remote command, symbolic links never followed (listed only with `special`). Paths are
    `root` joined with the relative name, as the caller spelled `root`.

    The listings come in a level at a time (`add`; a level's directories can be asked at
    once), and `step` walks what is listed as the walk one directory after another did
    (each directory's files by name, then its subdirectories last name first), so the
    files, their order and where `limit` cuts them are that walk's."""

    def __init__(self, root: str, max_depth: int, limit: int, special: bool = False):
        self.root, self.max_depth, self.limit, self.special = root, max_depth, limit, special
        self.listings: dict[str, list[paramiko.SFTPAttributes] | None] = {}
        self.files: list[FileStat] = []

    def add(self, rel: str, entries: list[paramiko.SFTPAttributes] | None) -> None:
        self.listings[rel] = entries

    def step(self) -> list[str]:
        """Walk what is listed into `files`; the directories the walk reached unlisted,
        to list next (none: `files` is the answer)."""
        out: list[FileStat] = []
        unlisted: list[str] = []
        todo = [("", 1)]
        while todo and len(out) < self.limit:
            rel, depth = todo.pop()
            if rel not in self.listings:
                unlisted.append(rel)
                continue
            for a in self.listings[rel] or ():
                mode = a.st_mode or 0
                sub = posixpath.join(rel, a.filename) if rel else a.filename
                if stat_mod.S_ISDIR(mode) and depth < self.max_depth:
                    todo.append((sub, depth + 1))
                elif listed(mode, self.special) and len(out) < self.limit:
                    out.append(FileStat(f"{self.root.rstrip('/')}/{sub}", a.st_size or 0,
                                        mode, float(a.st_mtime or 0), False))
        self.files = out
        return unlisted


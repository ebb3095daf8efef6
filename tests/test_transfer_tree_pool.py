"""`diamond transfer -r` from an SSH site lists the tree a level at a time, each level's
directories at once on the connection's SFTP channels (`sftp_channels`), and takes each
file's size from the listing (it asked a stat of each file, one after another). Against a
real private sshd (no test bed): the files, sizes, skipped entries and their order, the
limits and the errors are those of the walk one directory after another; the channels
come back; a dropped connection fails the try as a lost one (retried), and the next copy
reconnects."""

from __future__ import annotations

import asyncio
import secrets
import threading

import paramiko
import pytest
from sshd_helper import remove_tree, tree_in_home
from test_transport_ssh import ssh
from test_walk_bounds import DIR, REG, LoopingListing

from diamond_jupyter.model import SiteError
from diamond_jupyter.transfer import retryable
from diamond_jupyter.transfer.sftp import (
    LIST_AHEAD,
    MAX_WALK_DEPTH,
    SftpSide,
    TreeTooLarge,
    sftp_copy,
)

# nested directories, files of several sizes, an empty directory, a hidden file and a
# hidden directory, a link to a file, a link to a directory, a dangling link, a FIFO, and
# names with blanks and non-ASCII text
TREE = r"""set -e
cd "$1"
for a in d0 d1 d2; do for b in e0 e1; do
  mkdir -p "$a/$b/f"; printf "$a$b" > "$a/$b/leaf.txt"; head -c 3000 /dev/zero > "$a/$b/f/z"
done; printf "$a" > "$a/top.txt"; done
mkdir empty d1/e1/empty_too .hid; printf h > .hid/h; printf dot > .dotfile
printf r > 'root file ✓.txt'; ln -s top.txt d0/to_file; ln -s d0 to_dir
ln -s missing nowhere; mkfifo d2/pipe
"""


async def _tree(t) -> str:
    return await tree_in_home(t, "dj-tree", TREE)


def _shown(w) -> tuple:
    return w.files, w.sizes, w.skipped, w.seen


def _settled(t) -> None:
    """No SFTP channel in use and every session slot back (nothing leaked)."""
    pool = t._conn.sftp
    assert pool.open_channels == len(pool._idle) <= t.sftp_channels
    assert t._sem._value == t.max_sessions - 1 - sum(c.holds_slot for c in pool._idle)


@pytest.mark.asyncio
async def test_a_tree_listed_by_levels_is_the_one_directory_after_another_walk(sshd):
    t = ssh(sshd)
    root = ""
    try:
        root = await _tree(t)
        side = await SftpSide.open(t)
        try:
            for hidden in (False, True):
                serial = await asyncio.to_thread(side.walk, root, hidden)
                pooled = await side.walk_pooled(root, hidden)
                assert _shown(pooled) == _shown(serial), hidden
            assert "d0/e1/f/z" in pooled.files and pooled.sizes["d0/e1/f/z"] == 3000
            assert pooled.sizes["root file ✓.txt"] == 1
            assert sorted(pooled.skipped) == sorted([
                ".dotfile: " + HIDDEN, ".hid/: " + HIDDEN, "d0/to_file: a symbolic link",
                "to_dir: a symbolic link", "nowhere: a symbolic link",
                "d2/pipe: not a regular file"])
            # a subdirectory the user may not read: the walk's own error, where it meets it
            await t.run(["chmod", "000", f"{root}/d1/e0"], check=True)
            errors = []
            for walk in (lambda: asyncio.to_thread(side.walk, root),
                         lambda: side.walk_pooled(root)):
                with pytest.raises(PermissionError) as e:
                    await walk()
                errors.append(str(e.value))
            assert errors[0] == errors[1]
            await t.run(["chmod", "700", f"{root}/d1/e0"], check=True)
            # a path that is not there
            for walk in (lambda: asyncio.to_thread(side.walk, root + "/gone"),
                         lambda: side.walk_pooled(root + "/gone")):
                with pytest.raises(FileNotFoundError):
                    await walk()
        finally:
            await side.close()
        assert t._conn.sftp.opened == t.sftp_channels == 4  # a level's directories at once
        _settled(t)
    finally:
        if root:
            await remove_tree(t, root)
        await t.close()


HIDDEN = ("a hidden name, left out of a tool call's copy (copy it yourself from the "
          "command line)")


@pytest.mark.asyncio
async def test_a_recursive_copy_is_the_same_with_the_pool_and_without(sshd, tmp_path,
                                                                      monkeypatch):
    t = ssh(sshd)
    root = ""
    try:
        root = await _tree(t)
        cancel = threading.Event()
        pooled = await sftp_copy(t, root, None, str(tmp_path / "pooled"), recursive=True,
                                 progress=lambda *_: None, cancel=cancel)
        _settled(t)
        with monkeypatch.context() as m:  # the engine before: one directory at a time
            m.delattr(SftpSide, "walk_pooled")
            serial = await sftp_copy(t, root, None, str(tmp_path / "serial"),
                                     recursive=True, progress=lambda *_: None, cancel=cancel)
        assert (pooled.files, pooled.skipped, pooled.checksum, pooled.bytes) == \
            (serial.files, serial.skipped, serial.checksum, serial.bytes)
        got = sorted(str(p.relative_to(tmp_path / "pooled"))
                     for p in (tmp_path / "pooled").rglob("*") if p.is_file())
        assert got == sorted(f["path"] for f in pooled.files)
        assert (tmp_path / "pooled/d2/e1/f/z").read_bytes() == b"\0" * 3000
        assert not (tmp_path / "pooled/empty").exists()  # no file in it: nothing to copy
        # the connection dropped under an open copy: the listing's channels reconnect (the
        # same answer), and the copy's own channel, gone with it, fails the try as a lost
        # connection (the transfer retries it; the next try opens its channel anew)
        side = await SftpSide.open(t)
        try:
            t._conn.transport.close()
            assert _shown(await side.walk_pooled(root)) == \
                _shown(await SftpSide.walk_pooled(side, root))
            with pytest.raises((SiteError, OSError, EOFError, paramiko.SSHException)) as e:
                await asyncio.to_thread(side.stat, f"{root}/top.txt")
            assert retryable(e.value)
        finally:
            await side.close()
        again = await sftp_copy(t, root, None, str(tmp_path / "again"), recursive=True,
                                progress=lambda *_: None, cancel=cancel)
        assert (again.files, again.skipped, again.checksum) == \
            (pooled.files, pooled.skipped, pooled.checksum)
        _settled(t)
    finally:
        if root:
            await remove_tree(t, root)
        await t.close()


class _PooledLooping:
    """A transport whose SFTP channels all answer with a listing that contains itself."""

    name = "alpha"

    def __init__(self, listing: LoopingListing) -> None:
        self.listing = listing

    async def _sftp_each(self, what, fn, calls):
        return [fn(self.listing, "/home/me", *c) for c in calls]


@pytest.mark.asyncio
@pytest.mark.parametrize("entries", [[("again", DIR), ("f.txt", REG)],
                                     [(f"d{i}", DIR) for i in range(3)]])
async def test_a_listing_that_contains_itself_stops_where_the_walk_stops(entries):
    """A hostile server: the walk stops at the depth limit with its own error, having
    listed at most LIST_AHEAD (x channels) times the directories the walk one after
    another lists."""
    serial_listing, pooled_listing = LoopingListing(entries), LoopingListing(entries)
    serial = SftpSide(_PooledLooping(serial_listing), serial_listing, "/home/me")
    pooled = SftpSide(_PooledLooping(pooled_listing), pooled_listing, "/home/me")
    with pytest.raises(TreeTooLarge) as want:
        serial.walk("/r")
    with pytest.raises(TreeTooLarge) as got:
        await pooled.walk_pooled("/r")
    assert str(got.value) == str(want.value)
    assert serial_listing.listed == MAX_WALK_DEPTH + 1  # the root and 64 levels
    assert serial_listing.listed <= pooled_listing.listed <= \
        LIST_AHEAD * serial_listing.listed



@pytest.mark.asyncio
async def test_a_trees_files_are_copied_several_at_once_each_way(sshd, tmp_path, monkeypatch):
    """Download and upload of the tree with 4 channels: more than one file's channel open
    at once, the same answer as `sftp_channels: 1` (one file after another, as before);
    an unreadable file fails both alike, and every channel comes back."""
    t, one = ssh(sshd), ssh(sshd, sftp_channels=1)
    opened: list[int] = []
    real = SftpSide.open_now.__func__

    async def counted(cls, transport):
        side = await real(cls, transport)
        opened.append(side is not None)
        return side
    monkeypatch.setattr(SftpSide, "open_now", classmethod(counted))
    root = ""
    copy = {"progress": lambda *_: None, "cancel": threading.Event(), "recursive": True}
    try:
        root = await _tree(t)
        down = await sftp_copy(t, root, None, str(tmp_path / "down"), **copy)
        assert sum(opened) == 3  # three more channels: four files at once
        opened.clear()
        serial = await sftp_copy(one, root, None, str(tmp_path / "serial"), **copy)
        assert not opened  # one channel: no other opened
        assert (down.files, down.skipped, down.checksum) == \
            (serial.files, serial.skipped, serial.checksum)
        # up again into a new directory on the site: its directories made by several
        # copies at once
        up = await sftp_copy(None, str(tmp_path / "down"), t, f"{root}-up", **copy)
        assert (up.files, up.checksum) == (down.files, down.checksum)
        _settled(t)
        # a file the user may not read: the same error either way
        await t.run(["chmod", "000", f"{root}/d1/e0/leaf.txt"], check=True)
        failed = []
        for tr, dest in ((t, "bad"), (one, "bad-serial")):
            with pytest.raises(PermissionError) as e:
                await sftp_copy(tr, root, None, str(tmp_path / dest), **copy)
            failed.append(str(e.value))
            copy["cancel"].clear()  # set by the failed copy to stop its readers
        assert failed[0] == failed[1]
        _settled(t)
    finally:
        if root:
            await t.run(["rm", "-rf", "--", f"{root}-up"])
            await remove_tree(t, root)
        await t.close()
        await one.close()


@pytest.mark.asyncio
async def test_a_connection_dropped_mid_copy_is_a_lost_try_and_the_next_one_resumes(
        sshd, tmp_path):
    """Eight files of 2 MB copied 4 at once; the connection is closed under them once
    bytes have arrived: the try fails as a lost connection (retryable), no channel or
    session slot is left taken, and the next try (what the transfer's retry runs)
    completes with the same files, moving less than the whole tree again."""
    t = ssh(sshd)
    home = (await t.run(["sh", "-c", 'printf %s "$HOME"'], check=True)).stdout
    root = f"{home}/dj-drop-{secrets.token_hex(4)}"
    cancel = threading.Event()
    try:
        await t.run(["sh", "-c", 'mkdir -p "$1/a" "$1/b"; for i in 1 2 3 4; do '
                     'head -c 2000000 /dev/urandom > "$1/a/f$i"; '
                     'head -c 2000000 /dev/urandom > "$1/b/g$i"; done', "mk", root],
                    check=True)
        dropped = threading.Event()

        def drop_once(done: int, _total: int) -> None:  # from a copy's thread
            if done > 3_000_000 and not dropped.is_set():
                dropped.set()
                t._conn.transport.close()
        with pytest.raises(Exception) as e:
            await sftp_copy(t, root, None, str(tmp_path / "d"), recursive=True,
                            progress=drop_once, cancel=cancel)
        assert dropped.is_set() and retryable(e.value), repr(e.value)
        # every slot back as the error arrives: the sides' and their checksums', and the
        # listing's pooled channels' (the lost connection is dropped, not left to the next
        # call or to their linger)
        assert t._sem._value == t.max_sessions - 1
        cancel.clear()  # as the transfer's retry does
        res = await sftp_copy(t, root, None, str(tmp_path / "d"), recursive=True,
                              progress=lambda *_: None, cancel=cancel)
        assert [f["path"] for f in res.files] == [f"a/f{i}" for i in range(1, 5)] + \
            [f"b/g{i}" for i in range(1, 5)]
        assert res.bytes == 16_000_000 and 0 < res.moved < 16_000_000
        for f in res.files:
            assert (tmp_path / "d" / f["path"]).stat().st_size == 2_000_000
        _settled(t)
    finally:
        await t.run(["rm", "-rf", "--", root])
        await t.close()


@pytest.mark.asyncio
async def test_a_lost_connection_gives_the_pools_slots_back_when_a_side_closes(sshd):
    """(fault) The listing's extra SFTP channel, idle, kept its session slot on a connection
    that was gone until a later call noticed the loss or LINGER_S (30 s) passed: a copy
    failed by the loss raised its error with a slot still taken (the dropped-copy test above
    saw it under load). A side that closes on a lost connection drops it, so the pool's
    slots come back with the side's."""
    t = ssh(sshd)
    root = ""
    try:
        root = await _tree(t)
        side = await SftpSide.open(t)
        await side.walk_pooled(root)  # d0, d1, d2 listed at once: extra channels, now idle
        assert t._conn.sftp.open_channels > 1
        assert t._sem._value < t.max_sessions - 2  # the side's slot and an extra channel's
        t._conn.transport.close()
        with pytest.raises((OSError, EOFError, paramiko.SSHException)):
            await asyncio.to_thread(side.stat, f"{root}/top.txt")
        await side.close()
        assert t._sem._value == t.max_sessions - 1  # every slot back, at once
        assert t._conn is None  # the next call reconnects
    finally:
        if root:
            await remove_tree(t, root)
        await t.close()

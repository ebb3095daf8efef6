"""A recursive copy walked a directory without any bound: a hostile SFTP server whose
listing contains itself (every directory holds a directory of the same name) made the walk
loop for ever, and a huge tree was listed whole before a byte moved. The walk now stops at
MAX_WALK_DEPTH levels and MAX_WALK_ENTRIES entries, with an error naming the limit that no
retry repeats."""

from __future__ import annotations

import asyncio
import stat
import threading
from pathlib import Path

import paramiko
import pytest

from diamond_jupyter.model import SiteError
from diamond_jupyter.transfer import retryable
from diamond_jupyter.transfer.sftp import (
    MAX_WALK_DEPTH,
    MAX_WALK_ENTRIES,
    LocalSide,
    SftpSide,
    TreeTooLarge,
    copy_tree,
)

REG, DIR = stat.S_IFREG | 0o644, stat.S_IFDIR | 0o755


class LoopingListing:
    """An SFTP server answering every directory listing with the same entries, whatever the
    path: a directory that contains itself, to any depth."""

    def __init__(self, entries: list[tuple[str, int]]) -> None:
        self.entries, self.listed = entries, 0

    def listdir_attr(self, path: str) -> list[paramiko.SFTPAttributes]:
        self.listed += 1
        if self.listed > 10_000:  # the walk has no bound: fail instead of hanging
            raise AssertionError(f"walked on for ever (at {path[:80]})")
        out = []
        for name, mode in self.entries:
            a = paramiko.SFTPAttributes()
            a.filename, a.st_mode, a.st_size = name, mode, 1
            out.append(a)
        return out


def _side(listing: LoopingListing) -> SftpSide:
    class T:
        name = "alpha"

    return SftpSide(T(), listing, "/home/me")


def test_a_listing_that_contains_itself_stops_at_the_depth_limit():
    listing = LoopingListing([("again", DIR), ("f.txt", REG)])
    with pytest.raises(TreeTooLarge) as e:
        _side(listing).walk("/r")
    msg = str(e.value)
    assert msg.startswith("alpha:/r: ") and f"more than {MAX_WALK_DEPTH} directories deep" in msg
    assert "\n" not in msg and listing.listed == 1 + MAX_WALK_DEPTH  # the root, then each level
    assert not retryable(e.value)  # a transfer fails at once instead of walking again


def test_a_listing_that_branches_for_ever_stops_at_the_depth_limit():
    listing = LoopingListing([("a", DIR), ("b", DIR)])
    with pytest.raises(TreeTooLarge, match=f"more than {MAX_WALK_DEPTH} directories deep"):
        _side(listing).walk("/r")


def test_a_listing_with_too_many_entries_stops_at_the_entry_limit():
    listing = LoopingListing([(f"f{i}", REG) for i in range(MAX_WALK_ENTRIES + 1)])
    with pytest.raises(TreeTooLarge) as e:
        _side(listing).walk("/r")
    assert f"more than {MAX_WALK_ENTRIES} entries" in str(e.value)
    assert isinstance(e.value, SiteError)


def test_a_tree_within_the_limits_is_walked_whole():
    listing = LoopingListing([(f"f{i}", REG) for i in range(MAX_WALK_ENTRIES)])
    assert len(_side(listing).walk("/r").files) == MAX_WALK_ENTRIES


def test_a_local_tree_deeper_than_the_limit_is_refused_before_any_copy(tmp_path: Path):
    src = tmp_path / "out"
    deep = src.joinpath(*["d"] * (MAX_WALK_DEPTH + 1))
    deep.mkdir(parents=True)
    (src / "top.txt").write_text("t")
    dst = tmp_path / "back"
    with pytest.raises(TreeTooLarge, match=f"local:{src}: .*more than {MAX_WALK_DEPTH}"):
        asyncio.run(copy_tree(LocalSide(), str(src), LocalSide(), str(dst),
                              progress=lambda d, t: None, cancel=threading.Event()))
    assert not dst.exists()
    deep.rmdir()  # MAX_WALK_DEPTH levels are walked
    (deep.parent / "deep.txt").write_text("x")
    res = asyncio.run(copy_tree(LocalSide(), str(src), LocalSide(), str(dst),
                                progress=lambda d, t: None, cancel=threading.Event()))
    assert sorted(f["path"] for f in res.files) == ["/".join(["d"] * MAX_WALK_DEPTH)
                                                     + "/deep.txt", "top.txt"]

"""The store was checked for its owner (another user's, or a file others can write, is not
used), but not its engines' heartbeat directory (`STORE.engines`) nor its migration copies
(`STORE.vN.bak`). In a shared data directory (/tmp, a group space) another user could make
the heartbeat directory first: fresh heartbeats there for engines long gone keep their work
from ever being taken over. The heartbeats are now rows of the store itself (its owner
checks cover them); a directory beside it is only read, once, when it is the user's own and
private (an older version's files), and otherwise left alone. A migration copy planted
before an upgrade was kept as the user's copy of the old store: it is checked as the store
is, refused with a StoreError naming the path, the owner or the mode, and what to do."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from sweep_helpers import as_another_user
from test_store import V1_SQL

from diamond_jupyter.store import Store, StoreError


def _shared(tmp_path: Path) -> Path:
    d = tmp_path / "shared"
    d.mkdir()
    d.chmod(0o1777)  # /tmp-like: anyone creates, the sticky bit keeps each one's own
    return d


def test_heartbeats_are_rows_of_the_store_and_travel_with_it(tmp_path):
    """The engines' heartbeats were files in a directory beside the store (`STORE.engines`):
    a store copied or moved left them behind. Now they are rows of the store itself, and no
    directory is made beside it."""
    from diamond_jupyter import leases

    path = _shared(tmp_path) / "s.sqlite3"
    store = Store(path)
    other = "elsewhere:1:2:abcd"
    leases.beat(store.beats, other)
    assert leases.alive(other, store.beats)
    store.close()
    assert not Path(f"{path}.engines").exists()
    moved = tmp_path / "moved.sqlite3"
    os.rename(path, moved)
    assert leases.alive(other, Store(moved).beats)  # its heartbeat came along


@pytest.mark.parametrize("planted", ["directory", "link", "file"])
def test_a_heartbeat_directory_another_user_planted_is_not_used(tmp_path, monkeypatch,
                                                               planted):
    """An `STORE.engines` another user made (in a shared directory) with fresh files named
    after a gone engine of the user's: not read, not emptied, and the engine is not alive."""
    from diamond_jupyter import leases

    path = _shared(tmp_path) / "s.sqlite3"
    beats = Path(f"{path}.engines")
    gone = "elsewhere:1:2:abcd"
    if planted == "directory":
        beats.mkdir(mode=0o700)
        (beats / gone).touch()
    elif planted == "link":
        (tmp_path / "theirs").mkdir()
        (tmp_path / "theirs" / gone).touch()
        beats.symlink_to(tmp_path / "theirs")
    else:
        beats.write_text("")
    as_another_user(monkeypatch)
    store = Store(path)
    assert not leases.alive(gone, store.beats)
    assert os.path.lexists(beats)  # left as it was
    if planted != "file":
        assert (beats / gone).exists()


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o1777])
def test_a_heartbeat_directory_others_can_write_is_not_imported(tmp_path, mode):
    from diamond_jupyter import leases

    path = tmp_path / "data" / "s.sqlite3"
    Store(path).close()
    beats = Path(f"{path}.engines")
    beats.mkdir()
    (beats / "elsewhere:1:2:abcd").touch()
    beats.chmod(mode)
    assert not leases.alive("elsewhere:1:2:abcd", Store(path).beats)
    assert (beats / "elsewhere:1:2:abcd").exists()


def test_an_older_versions_heartbeat_files_are_moved_into_the_store(tmp_path):
    """A store an older version used has `STORE.engines/` with one file an engine (its mtime
    the beat): a fresh one becomes that engine's row (an engine of that version still
    running keeps its claims), a stale one is dropped, and the directory goes."""
    import time

    from diamond_jupyter import leases

    path = tmp_path / "data" / "s.sqlite3"
    Store(path).close()
    beats = Path(f"{path}.engines")
    beats.mkdir(mode=0o700)
    fresh, stale = "elsewhere:1:2:aaaa", "elsewhere:3:4:bbbb"
    (beats / fresh).touch()
    (beats / stale).touch()
    old = time.time() - leases.STALE_S - 5
    os.utime(beats / stale, (old, old))
    store = Store(path)
    assert leases.alive(fresh, store.beats)
    assert not leases.alive(stale, store.beats)
    assert store.beats.age_s(stale) is None
    assert not beats.exists()


def _v1_store(path: Path) -> None:
    db = sqlite3.connect(path)
    db.executescript(V1_SQL)
    db.close()


def test_a_migration_copy_another_user_planted_stops_the_migration(tmp_path, monkeypatch):
    d = tmp_path / "data"
    d.mkdir(mode=0o700)
    path = d / "old.sqlite3"
    bak = Path(f"{path}.v1.bak")
    bak.write_bytes(b"their copy")
    as_another_user(monkeypatch)
    real = os.getuid() - 1
    # the store and its directory are the user's (the moved uid), the copy is not
    monkeypatch.setattr(os, "lstat", _owned_by(os.lstat, {path, d, Path(f"{path}.engines")},
                                                real + 1))
    monkeypatch.setattr(os, "stat", _owned_by(os.stat, {path, d, Path(f"{path}.engines")},
                                               real + 1))
    _v1_store(path)
    with pytest.raises(StoreError, match=rf"the store's migration copy {bak} belongs to another "
                       rf"user \(uid {real}\): not used.*\(the store at {path} was not migrated\)"):
        Store(path)
    assert bak.read_bytes() == b"their copy"


def test_a_migration_copy_others_can_write_stops_the_migration(tmp_path):
    path = tmp_path / "old.sqlite3"
    _v1_store(path)
    bak = Path(f"{path}.v1.bak")
    bak.write_bytes(b"x")
    bak.chmod(0o666)
    with pytest.raises(StoreError, match=rf"migration copy {bak} can be written by others "
                       r"\(mode 0666\)"):
        Store(path)
    bak.unlink()
    with Store(path) as s:  # without it: migrated, the copy made, private
        assert s.count_jobs() == 2
    assert (bak.stat().st_mode & 0o777) == 0o600


def _owned_by(real_fn, paths: set[Path], uid: int):
    """`os.stat`/`os.lstat` that report `uid` as the owner of `paths`."""
    names = {str(p) for p in paths}

    def fn(p, *a, **kw):
        st = real_fn(p, *a, **kw)
        if str(p) in names:
            fields = list(st)
            fields[4] = uid  # st_uid
            return os.stat_result(fields)
        return st
    return fn

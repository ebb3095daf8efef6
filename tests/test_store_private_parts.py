"""The store was checked for its owner (another user's, or a file others can write, is not
used), but not its engines' heartbeat directory (`STORE.engines`) nor its migration copies
(`STORE.vN.bak`). In a shared data directory (/tmp, a group space) another user could make
the heartbeat directory first: fresh heartbeats there for engines long gone keep their work
from ever being taken over, deleting this engine's has its work run twice, and a link in it
has the engine create files where the link leads. A migration copy planted before an
upgrade was kept as the user's copy of the old store. Both are now checked as the store is:
refused with a StoreError naming the path, the owner or the mode, and what to do."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from test_store import V1_SQL

from diamond_jupyter.store import Store, StoreError


def _as_another_user(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on, files made so far belong to 'another user' (the process's uid moves)."""
    real = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: real + 1)


def _shared(tmp_path: Path) -> Path:
    d = tmp_path / "shared"
    d.mkdir()
    d.chmod(0o1777)  # /tmp-like: anyone creates, the sticky bit keeps each one's own
    return d


def test_the_store_makes_its_heartbeat_directory_private(tmp_path):
    path = _shared(tmp_path) / "s.sqlite3"
    Store(path).close()
    beats = Path(f"{path}.engines")
    assert beats.is_dir() and (beats.stat().st_mode & 0o777) == 0o700
    Store(path).close()  # the user's own, as it is: opens again


@pytest.mark.parametrize("planted", ["directory", "link", "file"])
def test_a_heartbeat_directory_another_user_planted_is_not_used(tmp_path, monkeypatch,
                                                               planted):
    path = _shared(tmp_path) / "s.sqlite3"
    beats = Path(f"{path}.engines")
    if planted == "directory":
        beats.mkdir(mode=0o700)
    elif planted == "link":
        (tmp_path / "theirs").mkdir()
        beats.symlink_to(tmp_path / "theirs")
    else:
        beats.write_text("")
    _as_another_user(monkeypatch)
    why = {"directory": r"belongs to another user \(uid \d+\): not used",
           "link": r"is a link made by another user \(uid \d+\) to .*theirs: not used",
           "file": r"belongs to another user|is not a directory"}[planted]
    with pytest.raises(StoreError, match=f"the store's heartbeat directory {beats} {why}"
                       if planted != "file" else why):
        Store(path)


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o1777])
def test_a_heartbeat_directory_others_can_write_is_not_used(tmp_path, mode):
    path = tmp_path / "data" / "s.sqlite3"
    Store(path).close()
    beats = Path(f"{path}.engines")
    beats.chmod(mode)
    with pytest.raises(StoreError, match=rf"heartbeat directory {beats} can be written by "
                       rf"others \(mode {mode:04o}\): not used; chmod 700 it"):
        Store(path)
    beats.chmod(0o700)
    Store(path).close()


def test_the_users_own_link_to_a_private_directory_still_works(tmp_path):
    path = tmp_path / "data" / "s.sqlite3"
    (tmp_path / "beats").mkdir(mode=0o700)
    path.parent.mkdir()
    Path(f"{path}.engines").symlink_to(tmp_path / "beats")
    Store(path).close()
    os.rmdir(tmp_path / "beats")  # now the link leads nowhere
    with pytest.raises(StoreError, match="is a link to .*beats, which does not exist"):
        Store(path)


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
    _as_another_user(monkeypatch)
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

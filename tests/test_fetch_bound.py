"""A fetch had no size bound: a job's huge result file (a sparse one holds 1 TiB in a few
blocks at its site, and is written out whole here) filled the destination until the copy
failed. Now each result file's size, from the one listing of the job's directory, is
checked before the copy against the fetch's bound (the sites file's
`fetch_max_file_bytes`, 16 GiB unless set; `diamond fetch --max-size`) and against the room
at the destination; a file above either is skipped and named with its size and the bound.
The copy itself stops at the bound (a file grown since the listing), over SFTP and locally,
leaving nothing behind."""

from __future__ import annotations

import argparse
import os
import secrets
from pathlib import Path

import pytest
from test_fetch_safe import _job, _local_fed
from test_transport_ssh import ssh

from diamond_jupyter import fetch_guard
from diamond_jupyter.cli.common import byte_size
from diamond_jupyter.config import FederationConfig
from diamond_jupyter.transports import OutputTooLarge
from diamond_jupyter.transports.local import LocalTransport

TIB = 1 << 40


@pytest.fixture
def wd(tmp_path: Path) -> Path:
    """A job's directory: a 1 TiB sparse result beside two small ones."""
    d = tmp_path / "site-home" / "run"
    (d / "out").mkdir(parents=True)
    with open(d / "out" / "huge.bin", "wb") as f:
        f.truncate(TIB)  # `truncate -s 1T`: no block written
    (d / "result.txt").write_text("job result\n")
    (d / "out" / "data.csv").write_text("a,b\n" * 10)
    return d


def _leftovers(dest: Path) -> list[str]:
    return sorted(p.name for p in dest.rglob("*") if p.name.endswith(".tmp"))


async def test_a_sparse_terabyte_is_skipped_and_named_the_rest_fetched(wd, tmp_path):
    fed = _local_fed(tmp_path)
    job = _job(fed.store, wd)
    dest = tmp_path / "dest"
    got = await fed.fetch(job, dest)
    assert sorted(p.relative_to(dest).as_posix() for p in got.paths) == [
        "out/data.csv", "result.txt"]
    (line,) = got.skipped
    assert line.startswith("out/huge.bin: 1.0 TiB (1099511627776 bytes)")
    assert "16.0 GiB" in line and "fetch_max_file_bytes in the sites file" in line
    assert not (dest / "out" / "huge.bin").exists() and not _leftovers(dest)
    # the plan (what a fetch would do) says so before anything is copied
    _, chosen, skipped = await fed.fetch_choice(job, tmp_path / "other")
    assert [r for r, _ in chosen if r.endswith("huge.bin")] == [] and skipped == [line]


async def test_the_sites_file_and_the_fetch_each_set_the_bound(wd, tmp_path):
    fed = _local_fed(tmp_path)
    fed.config = fed.config.model_copy(update={"fetch_max_file_bytes": 20})
    job = _job(fed.store, wd)
    got = await fed.fetch(job, tmp_path / "a")
    assert [p.name for p in got.paths] == ["result.txt"]  # 11 bytes; data.csv holds 40
    assert any(s.startswith("out/data.csv: 40 B (40 bytes), above the fetch's bound of 20 B "
                            "(fetch_max_file_bytes in the sites file)") for s in got.skipped)
    got = await fed.fetch(job, tmp_path / "b", max_file_bytes=100)
    assert sorted(p.name for p in got.paths) == ["data.csv", "result.txt"]
    assert got.skipped[0].endswith("above the fetch's bound of 100 B (the bound this fetch "
                                   "was given); not fetched")
    from diamond_jupyter.model import BadInput
    with pytest.raises(BadInput, match="max_file_bytes: expected a whole number"):
        await fed.fetch(job, tmp_path / "c", max_file_bytes=0)


async def test_files_beyond_the_room_at_the_destination_are_skipped(wd, tmp_path,
                                                                    monkeypatch):
    fed = _local_fed(tmp_path)
    job = _job(fed.store, wd)
    monkeypatch.setattr(fetch_guard, "free_bytes", lambda path: 45)
    got = await fed.fetch(job, tmp_path / "dest", files=["out/data.csv", "result.txt"])
    assert [p.name for p in got.paths] == ["data.csv"]  # 40 of the 45 free bytes
    assert got.skipped == [f"result.txt: 11 B (11 bytes), more than the 5 B free at "
                           f"{tmp_path / 'dest'} after the files before it; not fetched"]


def test_the_bound_in_the_sites_file_is_checked():
    assert FederationConfig().fetch_max_file_bytes == 16 << 30
    with pytest.raises(ValueError, match="fetch_max_file_bytes"):
        FederationConfig(fetch_max_file_bytes=0)


@pytest.mark.parametrize("text,value", [("1048576", 1 << 20), ("500M", 500 << 20),
                                        ("2G", 2 << 30), ("2GiB", 2 << 30), ("1t", TIB)])
def test_max_size_reads_sizes(text, value):
    assert byte_size(text) == value


@pytest.mark.parametrize("text", ["0", "-1G", "2X", "G", "1.5G", ""])
def test_max_size_refuses_what_is_no_size(text):
    with pytest.raises(argparse.ArgumentTypeError, match="expected a size above 0"):
        byte_size(text)


async def test_the_local_copy_stops_at_its_bound(wd, tmp_path):
    t = LocalTransport("here", workdir=str(wd))
    with pytest.raises(OutputTooLarge, match=r"out/huge.bin holds 1099511627776 bytes, more "
                       r"than the 1048576 bytes this copy allows"):
        await t.get_file("out/huge.bin", str(tmp_path / "got.bin"), max_bytes=1 << 20)
    assert not (tmp_path / "got.bin").exists() and not _leftovers(tmp_path)
    await t.get_file("result.txt", str(tmp_path / "r.txt"), max_bytes=11)  # at the bound
    assert (tmp_path / "r.txt").read_text() == "job result\n"


async def test_the_sftp_copy_stops_at_its_bound(sshd, tmp_path):
    t = ssh(sshd)
    d = f"dj-{secrets.token_hex(4)}"
    try:
        await t.run(["mkdir", d])
        await t.run(["truncate", "-s", "1T", f"{d}/huge.bin"])
        with pytest.raises(OutputTooLarge, match=r"huge.bin holds 1099511627776 bytes, more "
                           r"than the 1048576 bytes"):
            await t.get_file(f"~/{d}/huge.bin", str(tmp_path / "got.bin"), max_bytes=1 << 20)
        assert not os.listdir(tmp_path)
        await t.put_bytes(b"x" * 10, f"~/{d}/small.bin")
        await t.get_file(f"~/{d}/small.bin", str(tmp_path / "small.bin"), max_bytes=10)
        assert (tmp_path / "small.bin").read_bytes() == b"x" * 10
    finally:
        await t.run(["rm", "-rf", d])
        await t.close()


async def test_the_agents_fetch_and_its_plan_keep_the_bound(wd, tmp_path):
    from diamond_jupyter.skills import SkillContext, run_skill

    fed = _local_fed(tmp_path)
    job = _job(fed.store, wd)
    try:
        out = await run_skill(SkillContext(fed), "fetch_results",
                              {"job_id": job, "dest": str(tmp_path / "a"),
                               "max_file_bytes": 20})
        assert out.paths == [str(tmp_path / "a" / "result.txt")]
        assert any(s.startswith("out/data.csv: 40 B") for s in out.skipped)
        plan = await fed.plan_fetch(job, tmp_path / "b", max_file_bytes=20)
        assert plan["max_file_bytes"] == 20
        assert [m["destination"] for m in plan["data_movements"]] == [
            str(tmp_path / "b" / "result.txt")]
        got = await fed.fetch_approved(job, plan)  # copied with the plan's bound
        assert [p.name for p in got.paths] == ["result.txt"]
        assert any(s.startswith("out/huge.bin: 1.0 TiB") for s in plan["skipped"])
    finally:
        await fed.close()

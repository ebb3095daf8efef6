"""A fetch asks where its result links lead several at a time, not one after another.

Each link is a round trip to the site (over SFTP a READLINK and a REALPATH); a job with
200 links waited for 200 in a row. `Federation._link_lines` now asks LINKS_AT_ONCE at a
time, and its lines keep the listing's order whatever order the answers come in. The site
here is a local one whose `real_path` holds each link's answer until as many are asked at
once as the bound allows: asked one at a time, the first would wait for ever (the guard
below ends it)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from test_fetch_links import _inside, _outside
from test_fetch_safe import _job, _local_fed

import diamond_jupyter.federation as federation

GUARD_S = 30  # a hang guard: every answer here is local


class HeldAnswers:
    """A transport's `real_path` that holds the links' answers until `at_once` are waiting,
    then lets them go last asked first; later ones are answered at once."""

    def __init__(self, links_dir: Path, at_once: int) -> None:
        self.links_dir, self.at_once = str(links_dir), at_once
        self.waiting: list[asyncio.Event] = []
        self.released = False
        self.in_flight = self.most_in_flight = 0

    async def real_path(self, path: str) -> str | None:
        if os.path.dirname(path) == self.links_dir and not self.released:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            gate = asyncio.Event()
            self.waiting.append(gate)
            if len(self.waiting) == self.at_once:
                self.released = True
                for g in reversed(self.waiting):  # the last asked is answered first
                    g.set()
            await gate.wait()
            self.in_flight -= 1
        try:
            return os.path.realpath(path, strict=True)
        except OSError:
            return None


def _links(wd: Path, count: int) -> list[str]:
    """`count` links in the job's directory, every other one leading out of it."""
    (wd / "data.txt").write_text("x\n")
    names = [f"l{i:03d}" for i in range(count)]
    for i, name in enumerate(names):
        os.symlink("/etc/passwd" if i % 2 else "data.txt", wd / name)
    return names


def _line(i: int) -> str:
    return _outside("/etc/passwd", "/etc/passwd") if i % 2 else _inside("data.txt")


@pytest.mark.parametrize("count", [5, 3 * federation.LINKS_AT_ONCE + 1])
async def test_links_are_asked_together_up_to_the_bound_and_said_in_order(tmp_path, count):
    wd = tmp_path / "wd"
    wd.mkdir()
    names = _links(wd, count)
    fed = _local_fed(tmp_path)
    job = _job(fed.store, wd)
    held = HeldAnswers(wd, min(count, federation.LINKS_AT_ONCE))
    fed.sites["here"].transport.real_path = held.real_path  # type: ignore[method-assign]
    try:
        got = await asyncio.wait_for(fed.fetch(job, tmp_path / "dest"), GUARD_S)
        assert got.paths == [tmp_path / "dest" / "data.txt"]
        assert got.skipped == [f"{n}: {_line(i)}" for i, n in enumerate(names)]
        assert held.most_in_flight == min(count, federation.LINKS_AT_ONCE)
        plan = await asyncio.wait_for(fed.plan_fetch(job, tmp_path / "other"), GUARD_S)
        assert [x for x in plan["skipped"] if x.startswith("l")] == got.skipped
    finally:
        await fed.close()


async def test_a_link_that_cannot_be_read_fails_the_fetch_after_the_others_end(tmp_path):
    """One link's error (a site's) is raised, the first in the listing's order, once no
    other question is still running."""
    from diamond_jupyter.model import SiteError

    wd = tmp_path / "wd"
    wd.mkdir()
    names = _links(wd, 6)
    fed = _local_fed(tmp_path)
    job = _job(fed.store, wd)
    transport = fed.sites["here"].transport
    real = transport.link_target
    ended: list[str] = []

    async def link_target(path: str):  # type: ignore[no-untyped-def]
        name = os.path.basename(path)
        try:
            if name in (names[4], names[2]):
                raise SiteError(f"here: cannot read the link {name}")
            return await real(path)
        finally:
            ended.append(name)
    transport.link_target = link_target  # type: ignore[method-assign]
    try:
        with pytest.raises(SiteError, match=f"cannot read the link {names[2]}$"):
            await asyncio.wait_for(fed.fetch(job, tmp_path / "dest"), GUARD_S)
        assert sorted(ended) == names
        assert not (tmp_path / "dest" / "data.txt").exists()
    finally:
        await fed.close()

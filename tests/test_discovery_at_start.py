"""A long-lived engine discovers every site in the background as it starts (issue 17).

A workflow's first run waited up to DISCOVERY_WAIT_S before its first submit: no site had
been discovered yet. Now `start(discover_sites=True)` (the server's engine, a kernel's,
`diamond resume`, MCP) begins each site's discovery without waiting for it; a workflow's
check shares the discovery in flight, waiting no longer than its cap; a site that cannot be
reached stays unknown and is asked again at its next use.

Two Slurm sites on the local transport with their scheduler commands written here (no test
bed): `alpha` answers (each discovery held on a FIFO while tmp_path/hold exists), `down`
fails every command as a site that cannot be reached does."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import yaml
from local_slurm import held_discovery_site

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.federation import Federation
from diamond_jupyter.store import Store

NODE = ("NodeName=c1 CPUTot=8 CPUAlloc=0 RealMemory=16000 State=IDLE Partitions=batch "
        "AvailableFeatures=avx2 ActiveFeatures=avx2")
WAIT_S = 30.0  # a guard: each answer awaited here comes within a second


def _down(tmp_path: Path) -> SiteConfig:
    """A site every command of which fails before it runs (its login refused, say)."""
    return SiteConfig(name="down", workdir=str(tmp_path / "down"),
                      preamble="echo 'connection refused' >&2; exit 255",
                      transport={"kind": "local"})


def _engine(tmp_path: Path) -> Federation:
    sites = tmp_path / "sites.yaml"
    alpha = held_discovery_site(tmp_path, NODE, workdir="alpha")
    sites.write_text(yaml.safe_dump({"sites": [
        s.model_dump(mode="json") for s in (alpha, _down(tmp_path))]}))
    return Federation(sites, store=Store(tmp_path / "store.sqlite"))


async def test_start_discovers_every_site_behind_and_a_workflow_check_shares_it(tmp_path):
    fed = _engine(tmp_path)
    alpha, down = fed.sites["alpha"].discovery, fed.sites["down"].discovery
    (tmp_path / "hold").touch()  # alpha's discovery waits for the test's word
    go = os.open(tmp_path / "go", os.O_RDWR)  # never blocks; `scontrol`'s read does
    try:
        # the start does not wait for a discovery (alpha's is held)
        await asyncio.wait_for(fed.start(recover=False, discover_sites=True), 5.0)
        assert (alpha.runs, down.runs) == (1, 1)
        # a check while it is held waits its cap, no longer, and asks nothing again
        began = time.monotonic()
        caps = await asyncio.wait_for(fed.capabilities(only=["alpha"], max_wait_s=0.5), 5.0)
        assert "alpha" not in caps and time.monotonic() - began < 3.0
        assert alpha.runs == 1
        (tmp_path / "hold").unlink()
        os.write(go, b"go\n" * 8)  # a line for each held `scontrol` of the discovery
        found = await asyncio.wait_for(fed.describe("alpha"), WAIT_S)
        assert alpha.runs == 1  # the start's discovery, shared
        assert {f for t in found.capabilities.node_types or [] for f in t.features} == {"avx2"}
        caps = await asyncio.wait_for(fed.capabilities(only=["alpha"]), WAIT_S)
        assert "alpha" in caps and alpha.runs == 1
    finally:
        os.close(go)
        await fed.close()


async def test_a_site_not_reached_at_start_stays_unknown_and_is_asked_again(tmp_path):
    fed = _engine(tmp_path)
    down = fed.sites["down"].discovery
    try:
        started = fed.discover_behind()
        await asyncio.wait_for(asyncio.wait(started), WAIT_S)
        assert down.runs == 1 and down.cached() is None
        assert fed.sites["alpha"].discovery.cached() is not None
        caps = await asyncio.wait_for(fed.capabilities(), WAIT_S)
        assert "down" not in caps and "alpha" in caps  # placed on its sites file alone
        assert down.runs == 2  # asked again at its next use, as before
        again = fed.discover_behind()  # only the unknown one again
        assert len(again) == 1
        await asyncio.wait_for(asyncio.wait(again), WAIT_S)
        assert down.runs == 3
        assert fed.sites["alpha"].discovery.runs == 1
    finally:
        await fed.close()


async def test_a_short_lived_engine_discovers_nothing_at_start(tmp_path):
    fed = _engine(tmp_path)
    try:
        await asyncio.wait_for(fed.start(recover=False), WAIT_S)
        assert all(s.discovery.runs == 0 for s in fed.sites.values())
    finally:
        await fed.close()

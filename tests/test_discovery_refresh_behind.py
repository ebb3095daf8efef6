"""A site's discovery past its TTL is asked again behind the caller's back (issue 17).

Placement, a workflow's check before its first submit and every submit read the sites'
capabilities; once a site's last discovery outlived its TTL, each of them waited for the new
one (up to DISCOVERY_WAIT_S). The recorded workflow runs show it: the first submit of a
queue-ahead run began 4.6-12.3 s after the run was asked where a warm run began in 0.1 s.
Now the last discovery is used at once and the new one runs in the background; the next
call after it ends has it. A site never discovered is still waited for, as before.

A Slurm site on the local transport with `scontrol` written here (no test bed); a second
discovery is held on a FIFO until the test lets it go."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from local_slurm import held_discovery_site
from one_site_engine import one_site_federation

from diamond_jupyter.config import SiteConfig

WAIT_S = 30.0  # a guard: each answer awaited here comes within a second


def _site(tmp_path: Path, ttl_s: float = 600.0) -> SiteConfig:
    """A site whose node's features are read from tmp_path/features at each discovery;
    while tmp_path/hold exists, `scontrol` waits for a line on the FIFO tmp_path/go."""
    (tmp_path / "features").write_text("old\n")
    node = ("NodeName=c1 CPUTot=8 CPUAlloc=0 RealMemory=16000 State=IDLE Partitions=batch "
            "AvailableFeatures=$(cat \"$D/features\") ActiveFeatures=$(cat \"$D/features\")")
    return held_discovery_site(tmp_path, node, workdir="work", discovery={"ttl_s": ttl_s})


def _features(caps) -> list[str]:
    return sorted({f for t in caps.node_types or [] for f in t.features})


async def test_an_expired_discovery_is_used_at_once_and_asked_again_behind(tmp_path):
    fed = one_site_federation(tmp_path, _site(tmp_path))
    discovery = fed.sites["alpha"].discovery
    go = -1
    try:
        first = await asyncio.wait_for(fed.capabilities(), WAIT_S)
        assert _features(first["alpha"]) == ["old"] and discovery.runs == 1
        (tmp_path / "features").write_text("new\n")
        (tmp_path / "hold").touch()  # the next discovery waits for the test's word
        # opened both ways: neither this open nor `scontrol`'s ever blocks, its read does
        go = os.open(tmp_path / "go", os.O_RDWR)
        discovery._at -= discovery.ttl_s  # the TTL passed
        assert discovery.expired()
        # with the refresh held, the call answers from the last discovery at once
        stale = await asyncio.wait_for(fed.capabilities(max_wait_s=WAIT_S), 5.0)
        assert _features(stale["alpha"]) == ["old"]
        assert discovery.runs == 2  # the new discovery began (and is held)
        again = await asyncio.wait_for(fed.capabilities(max_wait_s=WAIT_S), 5.0)
        assert _features(again["alpha"]) == ["old"] and discovery.runs == 2  # shared, not re-run
        (tmp_path / "hold").unlink()
        os.write(go, b"go\n" * 8)  # a line for each held `scontrol` of the discovery
        fresh = await asyncio.wait_for(fed.describe("alpha"), WAIT_S)  # the same, awaited
        assert _features(fresh.capabilities) == ["new"]
        assert not discovery.expired()
        after = await asyncio.wait_for(fed.capabilities(), WAIT_S)
        assert _features(after["alpha"]) == ["new"] and discovery.runs == 2
    finally:
        if go >= 0:
            os.close(go)
        await fed.close()


async def test_a_site_never_discovered_is_still_waited_for(tmp_path):
    fed = one_site_federation(tmp_path, _site(tmp_path))
    try:
        caps = await asyncio.wait_for(fed.capabilities(), WAIT_S)
        assert _features(caps["alpha"]) == ["old"]  # the first discovery's answer, not none
    finally:
        await fed.close()


async def test_a_site_whose_ttl_is_0_is_asked_and_waited_for_at_each_use(tmp_path):
    fed = one_site_federation(tmp_path, _site(tmp_path, ttl_s=0))
    discovery = fed.sites["alpha"].discovery
    try:
        first = await asyncio.wait_for(fed.capabilities(), WAIT_S)
        (tmp_path / "features").write_text("new\n")
        second = await asyncio.wait_for(fed.capabilities(), WAIT_S)
        assert (_features(first["alpha"]), _features(second["alpha"])) == (["old"], ["new"])
        assert discovery.runs == 2
    finally:
        await fed.close()

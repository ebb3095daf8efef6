"""sprio is read with every poll only where the site's priority plugin is multifactor.

The plugin is `scontrol show config`'s PriorityType, read with the capabilities and cached:
once it says priority/basic (or any plugin but multifactor), a poll asks the queue, the
jobs' QOS and the licenses alone, and a capabilities refresh leaves sprio out too. Until
the config is read (the first snapshot) or where it names no plugin, sprio is asked.

Sites on the local transport with Slurm's commands written here (no test bed); each
command of a batch is counted by the site, and sprio also leaves a line in a log."""

from __future__ import annotations

from pathlib import Path

import pytest
from local_slurm import ONE_PARTITION, write_commands

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.sites import Site
from diamond_jupyter.transports import make_transport

NODE = "NodeName=c1 CPUTot=8 CPUAlloc=0 RealMemory=16000 State=IDLE Partitions=batch"


def _scontrol(plugin: str | None) -> str:
    config = "ClusterName = alpha\nSlurmdTimeout = 60 sec\n" + (
        f"PriorityType = {plugin}\n" if plugin else "")
    return f"""case "$*" in
  *partition*) echo '{ONE_PARTITION}' ;;
  *node*) echo '{NODE}' ;;
  *config*) printf '{config}' ;;
esac"""


def _site(tmp_path: Path, plugin: str | None) -> tuple[Site, Path]:
    """A Slurm site whose `scontrol show config` names `plugin` (None: no PriorityType
    line), and the log sprio writes a line to each time it runs."""
    log = tmp_path / "sprio.log"
    preamble = write_commands(tmp_path / "bin", {
        "scontrol": _scontrol(plugin), "squeue": "exit 0", "sacctmgr": "exit 0",
        "sshare": "exit 0", "sprio": f"echo ran >> '{log}'"})
    cfg = SiteConfig(name="alpha", workdir=str(tmp_path), preamble=preamble,
                     transport={"kind": "local"})
    return Site(cfg, transport=make_transport(cfg.transport, "alpha",
                                              workdir=str(tmp_path))), log


def _runs(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


@pytest.mark.parametrize("plugin", ["priority/basic", "priority/multifactor", None])
async def test_a_poll_asks_sprio_only_where_the_cached_config_says_multifactor(
        tmp_path, plugin):
    site, log = _site(tmp_path, plugin)
    try:
        await site.snapshot(max_age_s=0)
        assert _runs(log) == 1  # the plugin not known yet: asked
        before = site.scheduler_commands
        snap = await site.snapshot(max_age_s=0)  # the capabilities still cached
        asks_sprio = plugin != "priority/basic"
        # the queue, the jobs' QOS and TRES, the licenses (and sprio where it answers)
        assert site.scheduler_commands - before == 3 + asks_sprio
        assert _runs(log) == 1 + asks_sprio
        assert snap.reachable and [p.name for p in snap.partitions] == ["batch"]
        assert snap.priority is not None if plugin else snap.priority is None
    finally:
        await site.close()


async def test_a_capabilities_refresh_on_a_basic_site_leaves_sprio_out(tmp_path):
    site, log = _site(tmp_path, "priority/basic")
    try:
        await site.snapshot(max_age_s=0)
        site.capability_ttl_s = 0  # every poll re-reads the capabilities
        before = site.scheduler_commands
        snap = await site.snapshot(max_age_s=0)
        assert site.scheduler_commands - before == len(SlurmCommands().snapshot_argvs()) - 1
        assert _runs(log) == 1
        assert snap.priority is not None and snap.priority.plugin == "priority/basic"
        assert snap.job_priorities is None
    finally:
        await site.close()


def test_the_dialect_names_sprio_unasked_from_the_cached_config_alone():
    unasked = SlurmCommands.unasked_outputs
    assert unasked({"config": "PriorityType = priority/basic\n"}) == {"job_priorities"}
    assert unasked({"config": "PriorityType            = priority/multifactor\n"}) == set()
    assert unasked({"config": "ClusterName = alpha\n"}) == set()  # plugin not said
    assert unasked({}) == set()  # config not read yet

"""A sites file's `default_partition` the site no longer has (renamed or retired since the
file was written): placement said so and named the scheduler's default (since the seventh
sweep, `tests/test_config_unseen7.py`), but a job sent to the site by name with no
partition of its own still went to the stale one, and sbatch refused it ("invalid partition
specified"). Now the job goes where placement said: with no partition, the scheduler's
default. A default the site has, and one no snapshot has yet checked, are used as before;
`allowed_partitions` still bounds the choice. A real Slurm site on the local transport
whose `scontrol` prints recorded partitions and nodes; no test bed. The test marked `fault`
and the last case of the other (a stale default among the allowed ones) failed before the
fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from diamond_jupyter.config import SiteConfig, TransportConfig
from diamond_jupyter.federation import Federation
from diamond_jupyter.sites import Site

OUTPUTS = Path(__file__).parent / "fixtures" / "outputs" / "slurm"
SCRIPT = "#!/bin/bash\n#SBATCH -N 1 -n 2 -t 10:00\nsrun ./run\n"


def _site(tmp_path: Path, **settings: object) -> Site:
    """Partitions debug (the default), long and gpu, as the recorded `scontrol` shows."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    scontrol = (f'case "$*" in *partition*) cat {OUTPUTS / "scontrol_partition.txt"};; '
                f'*node*) cat {OUTPUTS / "scontrol_node.txt"};; esac')
    for name, body in {"scontrol": scontrol, "squeue": "exit 0"}.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    return Site(SiteConfig(name="hera", scheduler="slurm", transport=TransportConfig(
        kind="local"), preamble=f'PATH={bin_dir}:"$PATH"; export PATH', **settings))


async def _partition_lines(site: Site) -> list[str]:
    await site.know_home()
    prepared = site.prepare(Federation.parse(SCRIPT), "tokstale0001")
    script = site.render(site.scheduler_spec(prepared, "tokstale0001")).script
    return [x for x in script.splitlines() if x.startswith("#SBATCH") and "partition" in x]


async def test_fault_a_default_partition_the_site_lacks_is_not_sent(tmp_path):
    site = _site(tmp_path, default_partition="gpu-old")
    assert await _partition_lines(site) == ["#SBATCH --partition=gpu-old"]  # nothing known yet
    snap = await site.snapshot()
    assert {p.name for p in snap.partitions} == {"debug", "long", "gpu"}
    assert await _partition_lines(site) == []  # the scheduler's default (debug), as placed


@pytest.mark.parametrize("settings,want", [
    ({"default_partition": "long"}, ["#SBATCH --partition=long"]),
    ({}, []),
    ({"default_partition": "gpu-old", "allowed_partitions": ["gpu-old", "gpu"]},
     ["#SBATCH --partition=gpu"]),
])
async def test_a_default_the_site_has_and_the_allowed_ones_are_used_as_before(tmp_path,
                                                                            settings, want):
    """(guard) A default the site has is sent; none is none; where partitions are
    restricted, a stale default gives way to the first allowed one the site has."""
    site = _site(tmp_path, **settings)
    await site.snapshot()
    assert await _partition_lines(site) == want

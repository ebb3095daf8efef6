"""LSF shared resources (licenses and the like) a job reserves with `-R rusage[name=N]`:
the site's resources are read (`lsinfo -r` names those it defines, `bhosts -s` each
numeric shared one's instances and their TOTAL), cached with the hosts, and a job asking a
resource the site does not define, or more than any instance has, is INCOMPATIBLE naming
it, as a Slurm job asking a license the site lacks is. Worked on wren, the eighth sweep's
LSF site.

Before: the rusage[] of such resources was kept for bsub unread, and the job was READY."""

from __future__ import annotations

import pytest
from test_placement_cases import run
from test_placement_cases8 import wren

from diamond_jupyter.dialects.lsf_commands import (
    LsfCommands,
    parse_resource_names,
    parse_shared_resources,
)

# lsinfo -r: the resources configured in lsf.shared (name, type, order, description)
LSINFO = """RESOURCE_NAME   TYPE   ORDER  DESCRIPTION
matlab        Numeric   Dec   MATLAB licenses (elim)
abaqus_tok    Numeric   Dec   Abaqus tokens
scratch_gb    Numeric   Dec   Shared scratch space (GB)
bigmem         Boolean   N/A   Host with large memory
"""
# bhosts -s: matlab one instance for every host; scratch_gb one per rack, the second's
# hosts over two lines
BHOSTS_S = """RESOURCE                 TOTAL       RESERVED       LOCATION
matlab                    10.0            2.0       w1 w2 w3 w4
abaqus_tok                  40            0.0       w1 w2 w3 w4
scratch_gb               500.0          100.0       w1 w2
scratch_gb               800.0            0.0       w3
                                                    w4
"""


def site(lsinfo: str = LSINFO, bhosts_s: str = BHOSTS_S):
    cfg, snap = wren()
    outputs = {"resource_names": lsinfo, "shared_resources": bhosts_s}
    return cfg, snap.model_copy(update={
        "lsf_resource_names": parse_resource_names(outputs["resource_names"]),
        "lsf_shared": parse_shared_resources(outputs["shared_resources"])})


def verdict(rusage: str, at=None):
    return run(f'#BSUB -n 4\n#BSUB -W 1:00\n#BSUB -R "{rusage}"', at or site()).verdict("wren")


def test_the_site_resources_are_read_and_cached_with_the_hosts():
    assert parse_resource_names(LSINFO) == ["matlab", "abaqus_tok", "scratch_gb", "bigmem"]
    assert parse_shared_resources(BHOSTS_S) == {"matlab": 10.0, "abaqus_tok": 40.0,
                                                "scratch_gb": 800.0}
    assert parse_resource_names("") is None and parse_shared_resources("") is None
    assert parse_shared_resources("No resource defined\n") == {}
    argvs = LsfCommands().snapshot_argvs()
    assert {"resource_names", "shared_resources"} <= set(argvs)
    # lsinfo cached with the hosts; bhosts -s read with every queue since the follow-ups
    # of sweep 19 (what jobs reserve of them now)
    assert "resource_names" not in LsfCommands.live_outputs
    assert "shared_resources" in LsfCommands.live_outputs
    _, snap = site()
    assert snap.lsf_shared == {"matlab": 10.0, "abaqus_tok": 40.0, "scratch_gb": 800.0}


REFUSED = [
    ("rusage[matlab=1:duration=10, fluent=2]",
     "resource 'fluent' is not defined here (lsinfo): LSF does not take the job"),
    ("rusage[matlab=12]",
     "12 of shared resource 'matlab' asked, the site has at most 10 (bhosts -s TOTAL): LSF "
     "keeps it pending, it never starts"),
    # per task: 4 tasks of 15 each
    ("rusage[abaqus_tok=15/task]", "60 of shared resource 'abaqus_tok' asked"),
    ("select[bigmem] rusage[mem=2000:lic_x=1]", "resource 'lic_x' is not defined here"),
    # alternatives: refused when every one is
    ("rusage[lic_x=1 || matlab=11]", "resource 'lic_x' is not defined here (lsinfo): LSF "
     "does not take the job or 11 of shared resource 'matlab' asked"),
]


@pytest.mark.parametrize("rusage, said", REFUSED, ids=[r[0] for r in REFUSED])
def test_a_resource_the_site_lacks_or_too_much_of_one_is_incompatible(rusage, said):
    v = verdict(rusage)
    assert v.verdict == "INCOMPATIBLE", v.notes
    assert any(said in r for r in v.reasons), v.reasons
    assert any("shared resources here: abaqus_tok (40), matlab (10), scratch_gb (800)" in r
               for r in v.reasons)


@pytest.mark.parametrize("rusage", [
    "rusage[matlab=2:duration=10]", "rusage[mem=2000, scratch_gb=700]",
    "rusage[lic_x=1 || matlab=1]", "rusage[mem=4000]", "rusage[swp=100:tmp=50]",
    "rusage[matlab=1:decay=1:duration=5]"])
def test_what_the_site_has_is_placed(rusage):
    v = verdict(rusage)
    assert v.feasible, v.reasons


def test_where_the_resources_are_not_read_it_is_said_and_placed():
    v = verdict("rusage[lic_x=1]", site(lsinfo="", bhosts_s=""))
    assert v.feasible
    assert "-R rusage[lic_x=1]: the site's shared resources are not known (LSF runs no job " \
        "asking a resource it does not define)" in v.not_checked, v.not_checked
    # bhosts -s alone: a name outside it may be a host-based resource: not refused
    v = verdict("rusage[lic_x=1]", site(lsinfo=""))
    assert v.feasible, v.reasons
    assert verdict("rusage[matlab=11]", site(lsinfo="")).verdict == "INCOMPATIBLE"

"""Software environments, third sweep: bodies written the way users write them on what the
earlier sweeps left out (Lmod `--terse spider` and `avail` marks, Spack-generated names with
`@` and `+`, loads inside `if`/`case`, `module purge` then loads, `ml av`, conda by path,
micromamba, pixi, uv, an image pulled at run time, `spack env activate`), and the two known
gaps closed here: a branch on `$SLURM_CLUSTER_NAME` is checked where discovery read the
cluster's own name (Slurm's ClusterName), its `*` arm and `else` included; an `mpirun` after
the job brings its own MPI (a sourced oneAPI `setvars.sh`, a PATH entry) is checked where
discovery found that MPI (or looked for it where the script says and found none). Each case's
answer (available or not at each site, with the reason) is worked out by hand."""

from __future__ import annotations

from pathlib import Path

from diamond_jupyter.capabilities import SiteCapabilities
from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.discovery import discovery_script, split_sections
from diamond_jupyter.discovery_site import describe_from_outputs
from diamond_jupyter.federation import Federation
from diamond_jupyter.needs import Needs, needs_of
from diamond_jupyter.software import needs_reasons

OUT = Path(__file__).parent / "fixtures" / "outputs"
CONFIG = (OUT / "slurm" / "scontrol_config_head.txt").read_text()
NODES = (OUT / "slurm" / "scontrol_node.txt").read_text()
PARTS = (OUT / "slurm" / "scontrol_partition.txt").read_text()


def needs(body: str) -> Needs:
    return needs_of(Federation.parse("#!/bin/bash\n" + body))


def discovered(site: str, config: str | None, code: int = 0, *,
               clusters: tuple[str, ...] = ("c",)) -> SiteCapabilities:
    """A site's capabilities as discovery reads its sections: the scheduler's nodes and
    partitions, `scontrol show config` (None: not asked), a listing with gcc/12."""
    text = "@@dmd-discover@@arch\nx86_64\n@@dmd-discover@@end:0\n" \
        "@@dmd-discover@@modules\nsystem lmod 8.7.30\n/apps:\ngcc/12\n@@dmd-discover@@end:0\n"
    for c in clusters:
        text += f"@@dmd-discover@@sched:{c}:nodes\n{NODES}\n@@dmd-discover@@end:0\n"
        text += f"@@dmd-discover@@sched:{c}:partitions\n{PARTS}\n@@dmd-discover@@end:0\n"
        if config is not None:
            text += (f"@@dmd-discover@@sched:{c}:cluster_name\n{config}\n"
                     f"@@dmd-discover@@end:{code}\n")
    parts, codes = split_sections(text)
    keys = ["nodes", "partitions"] + (["cluster_name"] if config is not None else [])
    return describe_from_outputs(site, SlurmCommands(), parts, codes, list(clusters),
                                 keys).capabilities


# ---------------------------------------------------------------- (a) the cluster's name

def test_discovery_asks_slurm_for_the_clusters_own_name_and_reads_it() -> None:
    argv = SlurmCommands().discovery_argvs()["cluster_name"]
    assert argv[-3:] == ["scontrol", "show", "config"]
    assert SlurmCommands.parse_cluster_name(CONFIG) == "hpc-north"
    assert SlurmCommands.parse_cluster_name("ClusterName=x y\n") is None  # not a name
    assert SlurmCommands.parse_cluster_name("scontrol: error: Unable to contact\n") is None
    # the command reaches the discovery script for each cluster behind the login
    script = discovery_script({"c": {"cluster_name": argv}})
    assert "@@dmd-discover@@sched:c:cluster_name" in script and "scontrol show config" in script
    caps = discovered("north", CONFIG)
    assert caps.cluster_names == ["hpc-north"] and caps.sources["cluster_names"] == "discovered"


def test_a_failed_or_missing_name_leaves_it_unknown_and_the_nodes_read() -> None:
    caps = discovered("north", "scontrol: error: slurm_load_ctl_conf error", code=1)
    assert caps.cluster_names is None and caps.node_types and not caps.errors
    assert discovered("north", None).cluster_names is None
    # two clusters behind one login, one name unread: the set is not whole, so not kept
    two = "@@dmd-discover@@arch\nx86_64\n@@dmd-discover@@end:0\n"
    for c, conf in (("a", CONFIG), ("b", "error\n")):
        two += (f"@@dmd-discover@@sched:{c}:nodes\n{NODES}\n@@dmd-discover@@end:0\n"
                f"@@dmd-discover@@sched:{c}:partitions\n{PARTS}\n@@dmd-discover@@end:0\n"
                f"@@dmd-discover@@sched:{c}:cluster_name\n{conf}\n@@dmd-discover@@end:0\n")
    parts, codes = split_sections(two)
    d = describe_from_outputs("center", SlurmCommands(), parts, codes, ["a", "b"],
                              ["nodes", "partitions", "cluster_name"])
    assert d.capabilities.cluster_names is None
    assert [c.cluster_name for c in d.clusters] == ["hpc-north", None]


CASE = ("case $SLURM_CLUSTER_NAME in\n  hpc-north) module load gcc/12 ;;\n"
        "  hpc-south) module load gcc/13 ;;\n  *) module load gcc/99 ;;\nesac\nmake\n")


def test_fault_a_site_named_otherwise_in_the_sites_file_is_checked_by_its_clusters_name() -> None:
    """The sites file calls the site `north`; Slurm calls it `hpc-north`. Before, no arm
    named `north`, so nothing was checked (and the `*` arm was never assumed); now the arm
    `hpc-north)` is the one checked there (gcc/12: present), and the others are not."""
    n = needs(CASE)
    assert needs_reasons(n, discovered("north", CONFIG)) == []
    south = discovered("south", CONFIG.replace("hpc-north", "hpc-south"))
    assert needs_reasons(n, south) == ["software 'gcc/13' not installed (only gcc/12)"]


def test_fault_the_default_arm_is_checked_where_the_clusters_name_is_known() -> None:
    """A `*)` arm runs on every cluster no arm above names: at a site whose ClusterName is
    `hpc-east` it is the arm that runs, and gcc/99 is missing there. Without the name (the
    sites file's only) it stays unchecked, as before."""
    n = needs(CASE)
    assert [s.clusters for s in n.software][2] == ["*", "!hpc-north", "!hpc-south"]
    assert "software gcc/99 (loaded only on a cluster not named by hpc-north, hpc-south " \
        "(line 4): checked where discovery read the cluster's name)" in n.summary()
    east = discovered("east", CONFIG.replace("hpc-north", "hpc-east"))
    assert needs_reasons(n, east) == ["software 'gcc/99' not installed (only gcc/12)"]
    unnamed = discovered("hpc-east", None)
    assert needs_reasons(n, unnamed) == []


def test_fault_an_else_after_cluster_tests_runs_on_the_other_clusters() -> None:
    body = ("if [[ $SLURM_CLUSTER_NAME == hpc-north ]]; then\n  module load gcc/12\n"
            "elif [[ $SLURM_CLUSTER_NAME == hpc-south ]]; then\n  module load gcc/13\n"
            "else\n  module load gcc/11\nfi\n")
    n = needs(body)
    assert [s.clusters for s in n.software] == [
        ["hpc-north"], ["hpc-south", "!hpc-north"], ["*", "!hpc-north", "!hpc-south"]]
    east = discovered("east", CONFIG.replace("hpc-north", "hpc-east"))
    assert needs_reasons(n, east) == ["software 'gcc/11' not installed (only gcc/12)"]
    assert needs_reasons(n, discovered("north", CONFIG)) == []


def test_an_else_after_a_test_of_something_else_is_not_assumed() -> None:
    """`elif [ -d /scratch ]` between: the else runs only when that test fails too, so
    where it runs is not known; never checked."""
    body = ("if [[ $SLURM_CLUSTER_NAME == hpc-north ]]; then\n  module load gcc/12\n"
            "elif [ -d /scratch ]; then\n  module load gcc/13\nelse\n  module load gcc/11\nfi\n")
    n = needs(body)
    assert [s.clusters for s in n.software][2] == []
    east = discovered("east", CONFIG.replace("hpc-north", "hpc-east"))
    assert needs_reasons(n, east) == []


# ---------------------------------------------------------------- (b) the job's own MPI

def mpi_site(section: str, site: str = "s") -> SiteCapabilities:
    """A site whose discovery's `mpi` section is `section` (what the login's PATH, srun and
    the oneAPI roots gave)."""
    text = ("@@dmd-discover@@arch\nx86_64\n@@dmd-discover@@end:0\n"
            f"@@dmd-discover@@mpi\n{section}@@dmd-discover@@end:0\n")
    parts, codes = split_sections(text)
    return describe_from_outputs(site, SlurmCommands(), parts, codes, [], []).capabilities


ONEAPI = "cmd mpirun /opt/intel/oneapi/mpi/2021.11/bin/mpirun\noneapi /opt/intel/oneapi\n" \
    "home /home/ana\n"
OPENMPI = "cmd mpirun /usr/bin/mpirun\ncmd ompi_info /usr/bin/ompi_info\nhome /home/ana\n"
NO_MPI = "home /home/ana\n"
USER_ONEAPI = "oneapi /home/ana/intel/oneapi\nhome /home/ana\n"
OLD = "cmd mpirun /usr/bin/mpirun\n"  # an older discovery: no `home` line, did not look

SETVARS = "source /opt/intel/oneapi/setvars.sh\nmpirun -n 64 ./wrf.exe\n"


def test_discovery_looks_for_oneapi_where_its_installer_puts_it() -> None:
    script = discovery_script({})
    assert '/opt/intel/oneapi "$HOME"/intel/oneapi' in script and '"$r/setvars.sh"' in script
    caps = mpi_site(ONEAPI)
    assert caps.mpi == ["intel-mpi"]
    assert caps.mpi_paths == ["/opt/intel/oneapi/mpi/2021.11/bin", "/opt/intel/oneapi"]
    assert mpi_site(USER_ONEAPI).mpi_paths == ["~/intel/oneapi"]
    assert mpi_site(OLD).mpi_paths is None and mpi_site(OLD).mpi == []


def test_fault_a_sourced_setvars_is_checked_where_discovery_looked_for_oneapi() -> None:
    """Before: the job's own MPI was never checked (mpi_own). Now the site that has
    oneAPI there runs it, the site where discovery looked under /opt/intel/oneapi and found
    none is refused naming what it has, and a site that did not look is not checked."""
    n = needs(SETVARS)
    assert (n.mpi, n.mpi_from) == ("mpirun", "/opt/intel/oneapi/setvars.sh")
    assert needs_reasons(n, mpi_site(ONEAPI)) == []
    assert needs_reasons(n, mpi_site(OPENMPI)) == [
        "the script runs mpirun with the MPI it brings (sources "
        "/opt/intel/oneapi/setvars.sh (line 1)), but the site has no oneAPI MPI under "
        "/opt/intel/oneapi (its MPI: openmpi, at /usr/bin)"]
    assert needs_reasons(n, mpi_site(NO_MPI)) == [
        "the script runs mpirun with the MPI it brings (sources "
        "/opt/intel/oneapi/setvars.sh (line 1)), but the site has no oneAPI MPI under "
        "/opt/intel/oneapi (its MPI: none)"]
    assert needs_reasons(n, mpi_site(OLD)) == []


def test_fault_the_mpi_components_own_vars_and_a_home_install() -> None:
    """`. $HOME/intel/oneapi/mpi/latest/env/vars.sh`: the home install, found at the
    site whose discovery saw ~/intel/oneapi (the home spelt alike on both sides)."""
    n = needs(". $HOME/intel/oneapi/mpi/latest/env/vars.sh\nmpiexec -n 8 ./a.out\n")
    assert n.mpi_from == "~/intel/oneapi/mpi/latest/env/vars.sh"
    assert needs_reasons(n, mpi_site(USER_ONEAPI)) == []
    assert needs_reasons(n, mpi_site(ONEAPI))[0].endswith(
        "no oneAPI MPI under ~/intel/oneapi (its MPI: intel-mpi, at "
        "/opt/intel/oneapi/mpi/2021.11/bin, /opt/intel/oneapi)")


def test_an_mpi_brought_from_elsewhere_stays_unchecked_and_says_so() -> None:
    """A path discovery never looks at (/sw/...), a PATH entry to the job's own build, a
    conda environment, a spack load: kept as before, the summary saying why."""
    for body, own in (
            ("source /sw/intel/oneapi/2024.1/setvars.sh\nmpirun ./a\n",
             "sources /sw/intel/oneapi/2024.1/setvars.sh (line 1)"),
            ("export PATH=$HOME/opt/mpich/bin:$PATH\nmpirun ./a\n",
             "PATH adds $HOME/opt/mpich/bin (line 1)"),
            ("conda activate mpi4py-env\nmpirun python run.py\n",
             "conda environment 'mpi4py-env' (line 1)"),
            ("spack load mpich@4.1\nmpiexec ./a\n", "spack load mpich@4.1 (line 1)")):
        n = needs(body)
        assert n.mpi_own == own
        for listing in (NO_MPI, OPENMPI, ONEAPI):
            assert needs_reasons(n, mpi_site(listing)) == [], body
        assert any(f"not checked: may be the job's own, {own})" in s for s in n.summary())


def test_a_path_entry_to_the_sites_own_mpi_is_found() -> None:
    n = needs("export PATH=/opt/intel/oneapi/mpi/2021.11/bin:$PATH\nmpirun ./a\n")
    assert n.mpi_from == "/opt/intel/oneapi/mpi/2021.11/bin"
    assert needs_reasons(n, mpi_site(ONEAPI)) == []
    assert "no oneAPI MPI under /opt/intel/oneapi" in needs_reasons(n, mpi_site(OPENMPI))[0]


def test_a_setvars_sourced_only_in_a_branch_is_not_the_launchers() -> None:
    n = needs("if [ -d /opt/intel ]; then source /opt/intel/oneapi/setvars.sh; fi\n"
              "mpirun ./a\n")
    assert n.mpi_from is None
    assert needs_reasons(n, mpi_site(OPENMPI)) == []

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

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from local_slurm import LocalSlurmQueue
from sweep_helpers import SoftwareCase, assert_site_verdicts
from test_software_unseen4 import needs as body_needs

from diamond_jupyter.capabilities import SiteCapabilities, SoftwareModule, from_metadata
from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.discovery import discovery_script, parse_module_list, split_sections
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


def discovered(site: str, config: str | None, *,
               clusters: tuple[str, ...] = ("c",)) -> SiteCapabilities:
    """A site's capabilities as discovery reads its sections: the scheduler's nodes and
    partitions, `scontrol show config` (None: not asked), a listing with gcc/12."""
    text = "x86_64\n\n@@dmd-discover@@arch:0\n" \
        "system lmod 8.7.30\n/apps:\ngcc/12\n\n@@dmd-discover@@modules:0\n"
    for c in clusters:
        text += f"{NODES}\n\n@@dmd-discover@@sched:{c}:nodes:0\n"
        text += f"{PARTS}\n\n@@dmd-discover@@sched:{c}:partitions:0\n"
        if config is not None:
            text += f"{config}\n\n@@dmd-discover@@sched:{c}:config:0\n"
    parts, codes = split_sections(text)
    keys = ["nodes", "partitions"] + (["config"] if config is not None else [])
    return describe_from_outputs(site, SlurmCommands(), parts, codes, list(clusters),
                                 keys).capabilities


# ---------------------------------------------------------------- (a) the cluster's name

def test_discovery_asks_slurm_for_the_clusters_own_name_and_reads_it() -> None:
    argv = SlurmCommands().snapshot_argvs()["config"]
    assert "scontrol show config" in argv[-1]
    assert SlurmCommands.parse_cluster_name(CONFIG) == "hpc-north"
    assert SlurmCommands.parse_cluster_name("ClusterName=x y\n") is None  # not a name
    assert SlurmCommands.parse_cluster_name("scontrol: error: Unable to contact\n") is None
    # the command reaches the discovery script for each cluster behind the login
    script = discovery_script({"c": {"config": argv}})
    assert "sched:c:config" in script and "scontrol show config" in script
    caps = discovered("north", CONFIG)
    assert caps.cluster_names == ["hpc-north"] and caps.sources["cluster_names"] == "discovered"


def test_a_failed_or_missing_name_leaves_it_unknown_and_the_nodes_read() -> None:
    # the query's failure, as its command reports it (stderr dropped, exit 0): no name
    for failed in ("", "scontrol: error: slurm_load_ctl_conf error"):
        caps = discovered("north", failed)
        assert caps.cluster_names is None and caps.node_types and not caps.errors
    assert discovered("north", None).cluster_names is None
    # two clusters behind one login, one name unread: the set is not whole, so not kept
    two = "x86_64\n\n@@dmd-discover@@arch:0\n"
    for c, conf in (("a", CONFIG), ("b", "error\n")):
        two += (f"{NODES}\n\n@@dmd-discover@@sched:{c}:nodes:0\n"
                f"{PARTS}\n\n@@dmd-discover@@sched:{c}:partitions:0\n"
                f"{conf}\n\n@@dmd-discover@@sched:{c}:config:0\n")
    parts, codes = split_sections(two)
    d = describe_from_outputs("center", SlurmCommands(), parts, codes, ["a", "b"],
                              ["nodes", "partitions", "config"])
    assert d.capabilities.cluster_names is None
    assert [c.cluster_name for c in d.clusters] == ["hpc-north", None]


async def test_discovery_asks_scontrol_show_config_once_for_the_name_and_the_timeouts(
        tmp_path: Path) -> None:
    """One `scontrol show config` per discovery serves both the cluster's own name and the
    config values the snapshot reads (SlurmdTimeout, ResumeTimeout): a local Slurm site whose
    `scontrol` notes each call."""
    queue = LocalSlurmQueue(tmp_path)
    calls = tmp_path / "scontrol-calls.txt"
    config = tmp_path / "config.txt"
    config.write_text(CONFIG + "SlurmdTimeout           = 120 sec\n")
    scontrol = queue.bin_dir / "scontrol"
    scontrol.write_text(
        f'#!/bin/sh\necho "$*" >> {calls}\ncase "$*" in\n'
        f'  *"show node"*) cat {OUT}/slurm/scontrol_node.txt;;\n'
        f'  *"show partition"*) cat {OUT}/slurm/scontrol_partition.txt;;\n'
        f'  "show config") cat {config};;\nesac\n')
    scontrol.chmod(0o755)
    site = queue.site
    before = site.scheduler_commands
    found = await site.discovery.describe()
    asked = calls.read_text().splitlines()
    assert asked.count("show config") == 1, asked
    assert found.capabilities.cluster_names == ["hpc-north"]
    assert found.capabilities.node_types and not found.capabilities.errors
    # each output the snapshot caches, once (the name has no command of its own)
    cached = set(SlurmCommands().snapshot_argvs()) - SlurmCommands.live_outputs
    assert site.scheduler_commands - before == len(cached)
    snap = await site.snapshot(max_age_s=0)
    assert snap.node_timeouts == {"SlurmdTimeout": 120.0}


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
    text = ("x86_64\n\n@@dmd-discover@@arch:0\n"
            f"{section}\n@@dmd-discover@@mpi:0\n")
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


# ---------------------------------------------------------------- twenty environments

# Lmod on an EasyBuild center: the 2023a generation, a default CUDA, apptainer loaded
EB = """system lmod 8.7.37
/apps/easybuild/modules/all:
CUDA/11.8.0
CUDA/12.2.0 (D)
GCC/12.3.0
GROMACS/2023.3-foss-2023a
OpenMPI/4.1.5-GCC-12.3.0
Python/3.11.3-GCCcore-12.3.0
R/4.3.2-gfbf-2023a
apptainer/1.3.0 (L)
foss/2023a
"""

# Lmod over Spack's module tree: versions with the compiler, variants with `+`, a name
# spelt `name@version`, and what the hierarchy hides (`--terse spider` after @@spider)
SPK = """system lmod 8.7.20
/opt/spack/share/spack/lmod/linux-rocky9-x86_64/Core:
cmake@3.27.9
gcc/12.2.0-gcc-11
gcc/13.2.0 (D)
@@spider
boost/1.83.0+python
hdf5/1.14.3+mpi
openmpi/4.1.6-gcc-12
"""

# Environment Modules 5: tags `<L>`, `<aL>`, a symbolic default
EM = """system environment-modules 5.3.1
/opt/modulefiles:
R/4.3.2 <L>
gromacs/2023.3(default)
miniconda3/24.1.2
openmpi/4.1.6 <aL>
"""


def _site(name: str, listing: str, runtimes: list[str], mpi: list[str]) -> SiteCapabilities:
    system, _, mods = parse_module_list(listing)
    return SiteCapabilities(site=name, module_system=system, software=mods,
                            container_runtimes=runtimes, mpi=mpi)


SITES = {c.site: c for c in (
    _site("eb", EB, ["apptainer"], ["openmpi"]),
    _site("spk", SPK, [], ["openmpi"]),
    _site("em", EM, ["podman"], ["openmpi"]),
    # a sites file whose software a center pasted from `module avail`, marks and all
    from_metadata("listed", {"software": ["GCC/12.3.0 (D)",
                                          "Python/3.11.3-GCCcore-12.3.0 (L)",
                                          "CUDA/12.2.0 <aL>"]}),
    SiteCapabilities(site="unknown"),
)}
ALL = {"eb", "spk", "em", "listed"}


@dataclass
class Case(SoftwareCase):
    notes: list[str] = field(default_factory=list)
    container: tuple[str, str | None] | None = None
    mpi: str | None = None


CASES = [
    Case("a_default_marked_d_by_its_name", "module load CUDA\nnvcc -V\n",
         checked=["CUDA"], can={"eb", "listed"},
         why={"spk": "software 'CUDA' not installed (site has: boost/1.83.0+python, "
                      "cmake@3.27.9"}),
    Case("a_2023a_toolchain", "module load foss/2023a\nmpirun -n 32 ./a.out\n",
         checked=["foss/2023a"], can={"eb"}, mpi="mpirun",
         why={"em": "software 'foss/2023a' not installed"}),
    Case("a_version_with_its_compiler", "module load gcc/12.2.0-gcc-11\ngcc -v\n",
         checked=["gcc/12.2.0-gcc-11"], can={"spk"},
         why={"eb": "software 'gcc/12.2.0-gcc-11' not installed (only GCC/12.3.0)"}),
    Case("variants_with_a_plus_in_the_version",
         "module load hdf5/1.14.3+mpi boost/1.83.0+python\nh5dump -H out.h5\n",
         checked=["hdf5/1.14.3+mpi", "boost/1.83.0+python"], can={"spk"},
         why={"eb": "software 'hdf5/1.14.3+mpi' not installed"}),
    Case("a_spack_name_with_an_at", "module load cmake@3.27.9\ncmake -S . -B b\n",
         checked=["cmake@3.27.9"], can={"spk"},
         why={"em": "software 'cmake@3.27.9' not installed"}),
    Case("purge_then_a_toolchain",
         "module purge\nmodule load GCC/12.3.0 OpenMPI/4.1.5-GCC-12.3.0\nmpirun ./ring\n",
         checked=["GCC/12.3.0", "OpenMPI/4.1.5-GCC-12.3.0"], can={"eb"}, mpi="mpirun",
         why={"listed": "software 'OpenMPI/4.1.5-GCC-12.3.0' not installed"}),
    Case("purge_and_load_on_one_line", "ml purge; ml GCC/12.3.0\nmake\n",
         checked=["GCC/12.3.0"], can={"eb", "listed"},
         why={"spk": "only gcc/12.2.0-gcc-11, gcc/13.2.0"}),
    Case("ml_av_lists_then_ml_loads", "ml av\nml av GROMACS\nml GROMACS\ngmx mdrun\n",
         checked=["GROMACS"], can={"eb", "em"}),
    Case("ml_spider_then_ml_load", "ml spider R\nml load R/4.3.2\nRscript fit.R\n",
         checked=["R/4.3.2"], can={"eb", "em"},
         why={"spk": "software 'R/4.3.2' not installed"}),
    Case("tags_of_environment_modules_5", "module load openmpi/4.1.6 R\nmpirun Rscript a.R\n",
         checked=["openmpi/4.1.6", "R"], can={"em"}, mpi="mpirun",
         why={"spk": "software 'R' not installed", "eb": "only OpenMPI/4.1.5-GCC-12.3.0"}),
    Case("a_load_inside_an_if_on_the_gpu",
         "if command -v nvidia-smi >/dev/null; then\n  module load CUDA/12.2.0\nfi\n./a\n",
         unchecked=["CUDA/12.2.0"], can=ALL),
    Case("a_case_on_the_partition",
         'case "$SLURM_JOB_PARTITION" in\n  gpu*) module load CUDA/11.8.0 ;;\n'
         "  *) module load gcc/13.2.0 ;;\nesac\n./a\n",
         unchecked=["CUDA/11.8.0", "gcc/13.2.0"], can=ALL),
    Case("loads_in_a_file_next_to_the_script", "source ./env.sh\nmpirun -n 4 ./a\n",
         can=ALL, mpi="mpirun", notes=["sources ./env.sh (line 1): a helper read at run time"]),
    Case("conda_activate_of_a_path",
         "source /opt/miniconda3/etc/profile.d/conda.sh\nconda activate /proj/envs/sim\n"
         "python sim.py\n",
         can=ALL, notes=["conda environment '/proj/envs/sim' (line 2) must exist at the site"]),
    Case("micromamba_with_its_shell_hook",
         'eval "$(micromamba shell hook -s bash)"\nmicromamba activate sim\npython a.py\n',
         can=ALL, notes=["micromamba environment 'sim' (line 2) must exist at the site"]),
    Case("pixi_run", "cd $SLURM_SUBMIT_DIR\npixi run --frozen python train.py\n",
         can=ALL, notes=["pixi run (line 2): pixi must be on the site's PATH"]),
    Case("uv_run", "uv run --with numpy python a.py\n",
         can=ALL, notes=["uv run (line 1): uv must be on the site's PATH",
                         "installs packages at run time"]),
    Case("apptainer_runs_an_image_pulled_at_run_time",
         "apptainer run docker://ghcr.io/acme/solver:2.1 --steps 100\n",
         container=("docker://ghcr.io/acme/solver:2.1", "apptainer"), can={"eb", "listed"},
         notes=["the compute nodes need network access"],
         why={"spk": "needs a container runtime, site has none",
              "em": "container runtime 'apptainer' not available (site has: podman)"}),
    Case("a_spack_environment_by_its_path",
         "spack env activate -p /proj/spack-envs/cfd\nsrun ./cfd\n",
         can=ALL, mpi="srun",
         notes=["spack environment '/proj/spack-envs/cfd' (line 1) must exist at the site"]),
    Case("names_a_sites_file_pasted_from_module_avail",
         "module load GCC/12.3.0 Python/3.11.3-GCCcore-12.3.0\npython a.py\n",
         checked=["GCC/12.3.0", "Python/3.11.3-GCCcore-12.3.0"], can={"eb", "listed"}),
    Case("a_default_version_named_by_a_sites_file_mark",
         "module load CUDA/12.2.0\nnvcc -V\n", checked=["CUDA/12.2.0"], can={"eb", "listed"}),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_software_environments_against_sites(case: Case) -> None:
    n = body_needs(case.body)
    assert [s.full for s in n.software if not s.unchecked] == case.checked
    assert [s.full for s in n.software if s.unchecked] == case.unchecked
    c = n.container
    assert (None if c is None else (c.image, c.runtime)) == case.container
    assert n.mpi == case.mpi
    for words in case.notes:
        assert any(words in x for x in n.notes), (words, n.notes)
    assert_site_verdicts(n, SITES, case.can, case.why)


def test_count() -> None:
    assert len(CASES) >= 20 and len({c.name for c in CASES}) == len(CASES)


# ---------------------------------------------------------------- one test per fault fixed

def test_fault_a_listed_name_with_an_at_is_loaded_by_that_name() -> None:
    """Lmod over Spack lists `cmake@3.27.9`: it was stored as cmake/3.27.9, and a job's
    correct `module load cmake@3.27.9` was respelled to `cmake/3.27.9`, which the site does
    not have (the job failed there). The name is kept as listed, so the job's stays, and a
    job's `cmake/3.27` is respelled to the site's `cmake@3.27.9`."""
    from diamond_jupyter.software import rewrite_modules
    spk = SITES["spk"]
    assert "cmake@3.27.9" in spk.module_names()
    assert rewrite_modules("module load cmake@3.27.9\n", spk) == (
        "module load cmake@3.27.9\n", [])
    assert rewrite_modules("module load cmake/3.27\n", spk)[0] == "module load cmake@3.27.9\n"
    # a sites file's `gromacs@2023` is still gromacs, version 2023
    assert SoftwareModule.parse("gromacs@2023").full == "gromacs/2023"


def test_fault_marks_pasted_from_module_avail_into_a_sites_file_are_read() -> None:
    """`software: ["GCC/12.3.0 (D)", ...]` was read as version "12.3.0 (D)", and a job's
    `module load GCC/12.3` was respelled to `'GCC/12.3.0 (D)'`, a module no site has. The
    marks are read as `module avail` means them: (D) is the default version."""
    from diamond_jupyter.software import rewrite_modules
    listed = SITES["listed"]
    assert [(m.full, m.default) for m in listed.software] == [
        ("GCC/12.3.0", True), ("Python/3.11.3-GCCcore-12.3.0", False), ("CUDA/12.2.0", False)]
    assert rewrite_modules("module load GCC/12.3 Python\n", listed)[0] == \
        "module load GCC/12.3.0 Python\n"  # a bare name loads the site's default
    marked = from_metadata("m", {"software": "gcc/13.2.0(default:latest) <L:sticky>, R/4.3"})
    assert [(m.full, m.default) for m in marked.software] == [
        ("gcc/13.2.0", True), ("R/4.3", False)]


def test_fault_pixi_and_uv_environments_are_noted_and_bring_their_own_tools() -> None:
    """`pixi run` and `uv run` build (or check) the project's environment when the job
    runs; nothing was said: the tool must be on the site's PATH and the compute nodes may
    need the network. An mpirun after them may be the environment's own."""
    n = needs("pixi run mpirun -n 4 python sim.py\n")
    assert n.notes[0].startswith("pixi run (line 1): pixi must be on the site's PATH; it "
                                 "installs the project's environment (pixi.toml) at run time")
    n = needs("uvx --from 'snakemake==8.*' snakemake -j 4\n")
    assert n.notes == [
        "uvx (line 1): uv must be on the site's PATH; it syncs the project's environment (or "
        "the tool's) at run time, so the compute nodes need network access unless it is "
        "there already; not checked",
        "uvx installs packages at run time (line 1): the compute nodes need network access"]
    offline = needs("uv run --offline --with numpy python a.py\nmpirun ./a\n")
    assert not any("installs packages" in x for x in offline.notes)
    assert offline.mpi_own == "uv environment (line 1)"

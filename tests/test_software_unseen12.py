"""Software environments, twelfth sweep: bodies as users at module, Spack, conda, oneAPI and
Apptainer sites write them, each placed against three sites (an Lmod site whose Apptainer
is a module only, an Environment Modules 5 site of symbolic versions, a Spack site), the
answer at each worked out by hand; and the real Lmod of this machine discovered through a
non-interactive bash where `module` is no function yet (only the init file defines it).

Faults found and fixed, each with its test marked `fault` that failed before:
- A site that offers Apptainer only as a module (`apptainer/1.2.5`, nothing on the login's
  PATH) refused `module load apptainer` + `apptainer exec --nv img.sif` as "needs a
  container runtime, site has none". The job's own load of a runtime module the site has
  now brings that runtime; without the load the reason names the module to load.
- Environment Modules' symbolic versions in its terse listing, `gcc/13.2.0(13:testing)`:
  `module load gcc/testing` was refused as not installed. Each symbol is now a name the
  site loads (a floating one, `stable`, matched any version already).
- Environment Modules 4.8's variants after a module, `module load hdf5@1.14.3 +mpi`,
  `fabric=ofi`: `+mpi` and `fabric=ofi` were read as modules and refused everywhere.
"""

from __future__ import annotations

import subprocess

import pytest
from test_software_unseen4 import envs_section, needs, site
from test_software_unseen9 import LMOD_PKG, _tree, needs_lmod

from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.discovery import (
    discovery_script,
    parse_module_list,
    parse_spider_requires,
    split_sections,
)
from diamond_jupyter.discovery_site import describe_from_outputs
from diamond_jupyter.software import needs_reasons

# Lmod 8.7 `module -t avail`: an EasyBuild tree, Spack-named modules, Apptainer as a module
LMOD = """system lmod 8.7.32
/appl/easybuild/modules/all:
apptainer/1.2.5
foss/2023a
GCC/12.3.0
GROMACS/2023.3-foss-2023a
intel-oneapi-compilers/2023.2.1
py-numpy+mpi/1.26.4
hdf5/1.14.3-gcc-12.3.0-mpi
"""
# Environment Modules 5.3 `module -t avail`: symbolic versions and an alias in parentheses
EM = """system environment-modules 5.3.1
/usr/share/modulefiles:
gcc/12.3.0(default:stable)
gcc/13.2.0(13:testing)
hdf5/1.14.3
netcdf-c/4.9.2(default)
cuda/12.4(@)
"""
SPACK_FIND = "==> 2 installed packages\n-- linux-rhel9-zen4 / gcc@13.2.0 ---\nhdf5@1.14.3\n" \
    "openmpi@5.0.3\n"
SITES = {
    "lmodsite": site("lmodsite", modules=LMOD, runtimes=""),  # no runtime on the PATH
    "emsite": site("emsite", modules=EM, runtimes="apptainer /usr/bin/apptainer\n"),
    "spacksite": site("spacksite", envs=envs_section(
        ("spack", SPACK_FIND, 0), ("spack-envs", "==> 1 environments\n    climate\n", 0))),
}
LMOD_HAS = "site has: apptainer/1.2.5, foss/2023a, GCC/12.3.0, GROMACS/2023.3-foss-2023a, " \
    "hdf5/1.14.3-gcc-12.3.0-mpi, intel-oneapi-compilers/2023.2.1, py-numpy+mpi/1.26.4"
EM_HAS = "site has: cuda/12.4, gcc/12.3.0, gcc/13.2.0, gcc/testing, hdf5/1.14.3, " \
    "netcdf-c/4.9.2"


def nowhere(*names: str) -> list[str]:
    """The Spack site's reasons: it has no module system at all."""
    return [f"software '{n}' not installed (site has: none)" for n in names]


NO_RUNTIME = "container img.sif needs a container runtime, site has none"


def placed(body: str) -> dict[str, list[str]]:
    """Each site's reasons the job cannot run there ([]: it runs)."""
    return {name: needs_reasons(needs(body), caps) for name, caps in SITES.items()}


CASES = {
    "fault-apptainer-module-nv": (
        "module load apptainer\napptainer exec --nv img.sif python train.py\n",
        {"emsite": [], "lmodsite": [], "spacksite": [*nowhere("apptainer"), NO_RUNTIME]}),
    "apptainer-not-loaded": (
        "singularity exec --nv img.sif python train.py\n",
        {"emsite": [], "spacksite": [NO_RUNTIME],
         "lmodsite": ["container img.sif needs a container runtime, site has none on its "
                      "PATH (its modules apptainer/1.2.5 have one: module load it first)"]}),
    "fault-em-symbolic-version": (
        "module load gcc/testing\n./a.out\n",
        {"emsite": [], "spacksite": nowhere("gcc/testing"),
         "lmodsite": ["software 'gcc/testing' not installed (only GCC/12.3.0)"]}),
    "em-floating-symbol": ("module load gcc/stable netcdf-c\n", {
        "emsite": [], "spacksite": nowhere("gcc/stable", "netcdf-c"),
        "lmodsite": ["software 'netcdf-c' not installed (" + LMOD_HAS + ")"]}),
    "em-unknown-symbol": ("module load gcc/unstable\n", {
        "emsite": ["software 'gcc/unstable' not installed (only gcc/12.3.0, gcc/13.2.0, "
                   "gcc/testing)"],
        "spacksite": nowhere("gcc/unstable"),
        "lmodsite": ["software 'gcc/unstable' not installed (only GCC/12.3.0)"]}),
    "fault-em-variants": ("module load hdf5@1.14.3 +mpi ~debug fabric=ofi\n", {
        "emsite": [], "lmodsite": [], "spacksite": nowhere("hdf5@1.14.3")}),
    "em-at-version-missing": ("module load netcdf-c@4.9.3\n", {
        "emsite": ["software 'netcdf-c@4.9.3' not installed (only netcdf-c/4.9.2)"],
        "spacksite": nowhere("netcdf-c@4.9.3"),
        "lmodsite": ["software 'netcdf-c@4.9.3' not installed (" + LMOD_HAS + ")"]}),
    "easybuild-toolchain": ("module load foss/2023a GROMACS/2023.3-foss-2023a\n", {
        "lmodsite": [], "spacksite": nowhere("foss/2023a", "GROMACS/2023.3-foss-2023a"),
        "emsite": ["software 'foss/2023a' not installed (" + EM_HAS + ")",
                   "software 'GROMACS/2023.3-foss-2023a' not installed (" + EM_HAS + ")"]}),
    "plus-in-a-module-name": ("ml py-numpy+mpi/1.26.4\npython a.py\n", {
        "lmodsite": [], "spacksite": nowhere("py-numpy+mpi/1.26.4"),
        "emsite": ["software 'py-numpy+mpi/1.26.4' not installed (" + EM_HAS + ")"]}),
    "spack-env": ("spack env activate -p climate\nspack env activate wrf\n", {
        "lmodsite": [], "emsite": [],
        "spacksite": ["spack environment 'wrf' (line 2) does not exist at the site (spack "
                      "env list: climate)"]}),
    "spack-load-at": ("spack load openmpi@4.1\n", {
        "lmodsite": [], "emsite": [],
        "spacksite": ["spack load openmpi@4.1 (line 1): not installed by Spack at the site "
                      "(only openmpi@5.0.3)"]}),
}


@pytest.mark.parametrize("body, where", CASES.values(), ids=CASES.keys())
def test_each_site_says_whether_it_has_what_the_job_loads(body, where):
    assert placed(body) == where


@pytest.mark.parametrize("body, note", [
    ("module restore mycoll\n./run\n",
     "module restore mycoll (line 1): a saved collection; its modules are not known here"),
    ("source /opt/intel/oneapi/setvars.sh intel64 --force\nmpirun ./a\n",
     "sources /opt/intel/oneapi/setvars.sh (line 1): a helper read at run time; the modules "
     "and environments it loads are not known here"),
    ("conda activate /scratch/proj/envs/md\npython md.py\n",
     "conda environment '/scratch/proj/envs/md' (line 1) must exist at the site (a path: "
     "not checked)"),
])
def test_what_is_known_only_at_run_time_runs_everywhere_and_is_said(body, note):
    assert placed(body) == {name: [] for name in SITES}
    assert note in needs(body).notes


def test_symbolic_versions_of_a_terse_listing_are_names_and_marks_are_not():
    _, _, mods = parse_module_list(EM)
    assert [(m.full, m.default) for m in mods] == [
        ("cuda/12.4", False), ("gcc/12.3.0", True), ("gcc/13.2.0", False),
        ("gcc/testing", False), ("hdf5/1.14.3", False), ("netcdf-c/4.9.2", True)]
    # Lmod's marks are no symbols: `(L,D)`, `(S)`
    lmod = parse_module_list("system lmod 8.7.32\n/sw:\ngcc/13.2.0(L,D)\nmpi/5(S)\n")[2]
    assert [m.full for m in lmod] == ["gcc/13.2.0", "mpi/5"]


# `module spider hdf5/1.14.3` of Lmod 8.7 (after the discovery's line naming it): two
# lines to choose from, then its help; and a module that loads directly with variants
SPIDER = """@@requires hdf5/1.14.3
----------------------------------------------------------------------------
  hdf5: hdf5/1.14.3
----------------------------------------------------------------------------
    Description:
      HDF5 library

    You will need to load all module(s) on any one of the lines below before the
    "hdf5/1.14.3" module is available to load.

      GCC/12.3.0  OpenMPI/4.1.5
      intel-compilers/2023.1.0  impi/2021.9.0

    Help:
      HDF5 is a data model, library, and file format.
@@requires fftw/3.3.10
    This module can be loaded directly: module load fftw/3.3.10

    Additional variants of this module can also be loaded after loading the following
    modules:

      GCC/12.3.0
"""


def test_spider_detail_is_read_as_the_lines_to_choose_from():
    assert parse_spider_requires(SPIDER) == {
        "hdf5/1.14.3": [["GCC/12.3.0", "OpenMPI/4.1.5"],
                        ["intel-compilers/2023.1.0", "impi/2021.9.0"]],
        "fftw/3.3.10": []}


@needs_lmod
def test_module_no_function_in_a_non_interactive_shell_is_found_from_lmods_init(tmp_path):
    """ssh runs the discovery in a bash where `module` is not defined (no profile read):
    the real Lmod is found from its init file and the site's apptainer module listed; a job
    loading it runs there, one that does not is told which module to load."""
    lua = 'whatis("a module written for the test")\n'
    tree = _tree(tmp_path, {"apptainer/1.2.5.lua": lua, "foss/2023a.lua": lua})
    shell = "type module >/dev/null 2>&1 && echo 'module is defined' >&2\n"
    r = subprocess.run(["bash", "-c", shell + discovery_script({})], capture_output=True,
                       text=True, timeout=60,
                       env={"PATH": "/usr/bin:/bin", "MODULEPATH": str(tree),
                            "LMOD_PKG": str(LMOD_PKG)})
    assert "module is defined" not in r.stderr
    parts, codes = split_sections(r.stdout)
    caps = describe_from_outputs("s", SlurmCommands(), parts, codes, [], []).capabilities
    assert caps.module_system == "lmod"
    assert [m.full for m in caps.software or []] == ["apptainer/1.2.5", "foss/2023a"]
    body = "apptainer exec --nv img.sif nvidia-smi\n"
    assert caps.container_runtimes == []  # none on this machine's PATH either
    assert needs_reasons(needs("module load apptainer/1.2.5 foss/2023a\n" + body), caps) == []
    assert needs_reasons(needs(body), caps) == [
        "container img.sif needs a container runtime, site has none on its PATH (its "
        "modules apptainer/1.2.5 have one: module load it first)"]

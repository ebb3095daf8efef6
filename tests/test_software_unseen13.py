"""Software environments, thirteenth sweep: bodies as users write them, placed against three
sites (an Lmod 8.7 compiler/MPI hierarchy with a hidden module and defaults marked `(D)`, an
Environment Modules 5.4 site whose `module -t avail` the admin set to more columns
(`MODULES_AVAIL_TERSE_OUTPUT`), a site of Spack and conda only), each answer worked out by
hand; a login whose `module` writes its listing to stderr, discovered by a real bash; and
the real Lmod of this machine whose `.modulerc.lua` makes the older compiler the default.

Faults found and fixed, each with its test marked `fault` that failed before:
- Environment Modules 5 with `variant` in the site's MODULES_AVAIL_TERSE_OUTPUT lists
  `openmpi/5.0.3{fabric=ofi,ucx}`: the module was left out (a discovery error) and every
  `module load openmpi/5.0.3` refused there; the key's legend line was an error too, and a
  directory's symbol (`gcc/(stable)`) listed a bare `gcc`. Variants and the key are no
  part of a name now; a directory's symbol naming a release is one `module load` takes.
- A hidden module named by a job (`python/.3.13.0-rc1`) at a site discovered to have no
  module system at all passed, where any visible one was refused "site has: none": no
  module loads there, hidden or not.
"""

from __future__ import annotations

import shlex

import pytest
from test_software_unseen4 import envs_section, needs, site
from test_software_unseen6 import discover
from test_software_unseen9 import _real_lmod, _tree, needs_lmod

from diamond_jupyter.discovery import parse_module_list
from diamond_jupyter.software import needs_reasons, rewrite_modules

# Lmod 8.7 as the discovery asks it: `--show_hidden -t avail` (Core only: the compilers),
# `-t --default avail`, `-t spider` (what the hierarchy holds) and `spider NAME/VERSION`
# for each module avail does not list
LMOD = """system lmod 8.7.37
/apps/modulefiles/Core:
GCC/12.3.0
GCC/13.2.0
cmake/3.27.9-gcc_13.2.0
python/.3.13.0-rc1
@@hidden
@@defaults
GCC/13.2.0(D)
cmake/3.27.9-gcc_13.2.0(D)
@@sticky
@@spider
GCC/12.3.0
GCC/13.2.0
OpenMPI/4.1.6
OpenMPI/5.0.3
netCDF/4.9.2-mpi_ofi
cmake/3.27.9-gcc_13.2.0
@@requires OpenMPI/4.1.6
----------------------------------------------------------------------------
  OpenMPI: OpenMPI/4.1.6
----------------------------------------------------------------------------
    You will need to load all module(s) on any one of the lines below before the
    "OpenMPI/4.1.6" module is available to load.

      GCC/12.3.0
@@requires OpenMPI/5.0.3
    You will need to load all module(s) on any one of the lines below before the
    "OpenMPI/5.0.3" module is available to load.

      GCC/13.2.0
@@requires netCDF/4.9.2-mpi_ofi
    You will need to load all module(s) on any one of the lines below before the
    "netCDF/4.9.2-mpi_ofi" module is available to load.

      GCC/13.2.0  OpenMPI/5.0.3
"""
# Environment Modules 5.4 `module -t avail --all` where the site's profile set
# MODULES_AVAIL_TERSE_OUTPUT=modulepath:alias:dirwsym:sym:tag:variant:key: a directory's
# symbolic version (`gcc/(stable)`), tags in angle brackets, variants in braces, the key
EM = """system environment-modules 5.4.0
/etc/modulefiles:
gcc/(stable)
gcc/12.3.0(default:stable)
gcc/13.2.0 <sticky>
openmpi/5.0.3{fabric=ofi,ucx}
fftw/3.3.10-gcc_12.3.0-openmpi_5.0.3
.intel-mpi/2021.11

Key:
(symbolic-version)  <module-tag>  {variant=value}  modulepath
@@hidden
"""
SPACK_FIND = "==> 2 installed packages\n-- linux-rocky9-zen4 / gcc@13.2.0 ---\nhdf5@1.14.3\n" \
    "hdf5@1.12.2\nopenmpi@5.0.3\n"
CONDA = "# conda environments:\n#\nbase  /opt/miniforge3\nmd    /home/u/.conda/envs/md\n"
SITES = {
    "lmodsite": site("lmodsite", modules=LMOD),
    "emsite": site("emsite", modules=EM),
    "envsite": site("envsite", envs=envs_section(
        ("spack /opt/spack", SPACK_FIND, 0), ("spack-envs", "==> 0 environments\n", 0),
        ("conda mamba", CONDA, 0))),
}


def placed(body: str) -> dict[str, list[str]]:
    """Each site's reasons the job cannot run there ([]: it runs)."""
    return {name: needs_reasons(needs(body), caps) for name, caps in SITES.items()}


def nowhere(*names: str) -> list[str]:
    """The Spack/conda site's reasons: it has no module system at all."""
    return [f"software '{n}' not installed (site has: none)" for n in names]


LMOD_HAS = "site has: cmake/3.27.9-gcc_13.2.0, GCC/12.3.0, GCC/13.2.0, " \
    "netCDF/4.9.2-mpi_ofi, OpenMPI/4.1.6, OpenMPI/5.0.3"
EM_HAS = "site has: fftw/3.3.10-gcc_12.3.0-openmpi_5.0.3, gcc/12.3.0, gcc/13.2.0, " \
    "openmpi/5.0.3"
NETCDF_FIRST = "software 'netCDF/4.9.2-mpi_ofi' (netCDF/4.9.2-mpi_ofi) needs GCC/13.2.0 + " \
    "OpenMPI/5.0.3 loaded first (Lmod's hierarchy shows it only then); the script loads " \
    "before it: "

CASES = {
    "hierarchy-loaded-first": (
        "module load GCC/13.2.0 OpenMPI/5.0.3 netCDF/4.9.2-mpi_ofi\n",
        {"lmodsite": [], "envsite": nowhere("GCC/13.2.0", "OpenMPI/5.0.3",
                                           "netCDF/4.9.2-mpi_ofi"),
         "emsite": [f"software 'netCDF/4.9.2-mpi_ofi' not installed ({EM_HAS})"]}),
    "hierarchy-not-loaded": ("module load netCDF/4.9.2-mpi_ofi\n", {
        "lmodsite": [NETCDF_FIRST + "none"], "envsite": nowhere("netCDF/4.9.2-mpi_ofi"),
        "emsite": [f"software 'netCDF/4.9.2-mpi_ofi' not installed ({EM_HAS})"]}),
    "hierarchy-half-loaded": ("module load GCC/13.2.0\nmodule load netCDF/4.9.2-mpi_ofi\n", {
        "lmodsite": [NETCDF_FIRST + "GCC/13.2.0"],
        "envsite": nowhere("GCC/13.2.0", "netCDF/4.9.2-mpi_ofi"),
        "emsite": [f"software 'netCDF/4.9.2-mpi_ofi' not installed ({EM_HAS})"]}),
    # `module load GCC` takes the version marked (D), 13.2.0, whose tree holds OpenMPI 5
    "default-version-opens-its-tree": ("module load GCC OpenMPI/5.0.3\n", {
        "lmodsite": [], "emsite": [], "envsite": nowhere("GCC", "OpenMPI/5.0.3")}),
    "default-version-is-not-the-one-needed": ("module load GCC OpenMPI/4.1.6\n", {
        "lmodsite": ["software 'OpenMPI/4.1.6' (OpenMPI/4.1.6) needs GCC/12.3.0 loaded first "
                     "(Lmod's hierarchy shows it only then); the script loads before it: "
                     "GCC/13.2.0"],
        "emsite": ["software 'OpenMPI/4.1.6' not installed (only openmpi/5.0.3)"],
        "envsite": nowhere("GCC", "OpenMPI/4.1.6")}),
    "fault-hidden-where-no-module-system": ("module load python/.3.13.0-rc1\n", {
        "lmodsite": [], "envsite": nowhere("python/.3.13.0-rc1"),  # fault: was []
        "emsite": ["software 'python/.3.13.0-rc1' not installed (a hidden module: the site "
                   "lists 1 hidden module, none of python)"]}),
    "ml-shorthand": ("ml GCC/13.2.0 OpenMPI/5.0.3 -cmake\nml av\nml spider netCDF\n", {
        "lmodsite": [], "emsite": [], "envsite": nowhere("GCC/13.2.0", "OpenMPI/5.0.3")}),
    # Lmod's `ml` unloads first, then loads: OpenMPI is there when netCDF loads
    "ml-unload-among-loads": ("ml GCC/13.2.0 OpenMPI/5.0.3 -OpenMPI netCDF/4.9.2-mpi_ofi\n", {
        "lmodsite": [], "emsite": [f"software 'netCDF/4.9.2-mpi_ofi' not installed ({EM_HAS})"],
        "envsite": nowhere("GCC/13.2.0", "OpenMPI/5.0.3", "netCDF/4.9.2-mpi_ofi")}),
    "ml-swap-into-the-tree": ("ml swap GCC/12.3.0 GCC/13.2.0\nml OpenMPI/5.0.3\n", {
        "lmodsite": [], "emsite": [], "envsite": nowhere("GCC/13.2.0", "OpenMPI/5.0.3")}),
    "ml-unload-only": ("ml -GCC\nml purge\n./a.out\n", {
        "lmodsite": [], "emsite": [], "envsite": []}),
    # fault: `openmpi/5.0.3{fabric=ofi,ucx}` was left out of the listing as an error
    "fault-em-variants-column": ("module load gcc/stable openmpi/5.0.3 fabric=ofi\n", {
        "emsite": [], "envsite": nowhere("gcc/stable", "openmpi/5.0.3"),
        "lmodsite": []}),  # `stable` names no release: any GCC matches it
    "dash-and-underscore-in-a-version": (
        "module load fftw/3.3.10-gcc_12.3.0-openmpi_5.0.3 cmake/3.27.9-gcc_13.2.0\n", {
            "emsite": [f"software 'cmake/3.27.9-gcc_13.2.0' not installed ({EM_HAS})"],
            "lmodsite": [f"software 'fftw/3.3.10-gcc_12.3.0-openmpi_5.0.3' not installed "
                         f"({LMOD_HAS})"],
            "envsite": nowhere("fftw/3.3.10-gcc_12.3.0-openmpi_5.0.3",
                               "cmake/3.27.9-gcc_13.2.0")}),
    "em-hidden": ("module load .intel-mpi/2021.11\n", {
        "emsite": [], "envsite": nowhere(".intel-mpi/2021.11"),
        "lmodsite": ["software '.intel-mpi/2021.11' not installed (a hidden module: the site "
                     "lists 1 hidden module, none of .intel-mpi)"]}),
    "spack-load-first": ("spack load --first hdf5@1.14\nspack load --first netcdf-c\n", {
        "lmodsite": [], "emsite": [],
        "envsite": ["spack load netcdf-c (line 2): not installed by Spack at the site (spack "
                    "find lists 3 packages, none named netcdf-c)"]}),
    "mamba-activate": ("mamba activate md\nmamba activate torch\n", {
        "lmodsite": [], "emsite": [],
        "envsite": ["mamba environment 'torch' (line 2) does not exist at the site (conda "
                    "env list: base, md)"]}),
    "pip-install-user": ("pip install --user numpy==1.26.4\npython -m pip install --user "
                         "-r requirements.txt\npython a.py\n", {
        "lmodsite": [], "emsite": [], "envsite": []}),
}


@pytest.mark.parametrize("body, where", CASES.values(), ids=CASES.keys())
def test_each_site_says_whether_it_has_what_the_job_loads(body, where):
    assert placed(body) == where


def test_the_em5_listing_with_more_columns_gives_each_module_once_and_no_error():
    """Before: `openmpi/5.0.3{fabric=ofi,ucx}` and the key's line were "left out, holding
    characters no module name has" (discovery errors), and `gcc/(stable)` listed a bare
    `gcc` beside its versions."""
    refused: list[str] = []
    hidden: list[str] = []
    system, version, mods = parse_module_list(EM, refused, hidden)
    assert (system, version, refused, hidden) == \
        ("environment-modules", "5.4.0", [], [".intel-mpi/2021.11"])
    assert [(m.full, m.default, m.sticky) for m in mods] == [
        ("fftw/3.3.10-gcc_12.3.0-openmpi_5.0.3", False, False), ("gcc/12.3.0", True, False),
        ("gcc/13.2.0", False, True), ("openmpi/5.0.3", False, False)]
    # a directory's own symbol naming a release is a name `module load` takes
    mods = parse_module_list("system environment-modules 5.4.0\n/m:\ncuda/(prod)\n"
                             "cuda/12.4(prod)\n")[2]
    assert [m.full for m in mods] == ["cuda/12.4", "cuda/prod"]


def test_a_listing_written_to_stderr_with_the_sites_columns_is_read_by_the_real_discovery():
    """Environment Modules writes `avail` to stderr; this login's profile also set
    MODULES_AVAIL_TERSE_OUTPUT, so its listing carries variants and the key: bash runs the
    real discovery command against a `module` that answers as such a login's does."""
    listing = EM.split("\n", 1)[1].replace("@@hidden\n", "")
    shell = ('module() { case "$*" in\n'
             '  --version) echo "Modules Release 5.4.0 (2024-02-20)" >&2 ;;\n'
             f'  "-t avail --all") printf %s {shlex.quote(listing)} >&2 ;;\n'
             '  *) ;;\nesac; }\n')
    caps = discover(shell)
    assert caps.module_system == "environment-modules"
    assert [m.full for m in caps.software or []] == [
        "fftw/3.3.10-gcc_12.3.0-openmpi_5.0.3", "gcc/12.3.0", "gcc/13.2.0", "openmpi/5.0.3"]
    assert caps.hidden_modules == [".intel-mpi/2021.11"]
    assert needs_reasons(needs("module load openmpi/5.0.3 .intel-mpi/2021.11\n"), caps) == []


@needs_lmod
def test_the_real_lmods_default_picks_the_tree_a_bare_compiler_load_opens(tmp_path):
    """The real Lmod of this machine, a compiler hierarchy whose `.modulerc.lua` makes the
    older gcc the default: `module load gcc openmpi/5.0.3` loads gcc/12.3.0, whose tree has
    no OpenMPI 5; the reason says which gcc to load, and naming it runs."""
    root = tmp_path / "mods"
    lua = 'whatis("a module written for the test")\n'
    _tree(root, {
        "Core/gcc/12.3.0.lua": f'prepend_path("MODULEPATH", "{root}/Compiler/gcc/12")\n',
        "Core/gcc/13.2.0.lua": f'prepend_path("MODULEPATH", "{root}/Compiler/gcc/13")\n',
        "Core/gcc/.modulerc.lua": 'module_version("gcc/12.3.0", "default")\n',
        "Compiler/gcc/12/openmpi/4.1.6.lua": lua,
        "Compiler/gcc/13/openmpi/5.0.3.lua": lua})
    caps = _real_lmod(root / "Core")
    assert [(m.full, m.default) for m in caps.software or [] if m.name == "gcc"] == \
        [("gcc/12.3.0", True), ("gcc/13.2.0", False)]
    assert rewrite_modules("module load gcc\n", caps)[0] == "module load gcc\n"
    assert needs_reasons(needs("module load gcc openmpi/5.0.3\n"), caps) == [
        "software 'openmpi/5.0.3' (openmpi/5.0.3) needs gcc/13.2.0 loaded first (Lmod's "
        "hierarchy shows it only then); the script loads before it: gcc/12.3.0"]
    assert needs_reasons(needs("module load gcc/13.2.0 openmpi/5.0.3\n"), caps) == []
    assert needs_reasons(needs("ml gcc openmpi/4.1.6\n"), caps) == []

"""Software environments, fourth sweep: bodies written the way users write them, each case's
answer (runs at each site, or not, with the reason) worked out by hand, and the four known
gaps closed on recorded outputs:

(a) `spack load PKG[@VERSION]` and `spack env activate NAME`: discovery lists Spack's
    installed packages (`spack find --format '{name}@{version}'`) and environments (`spack
    env list`) where `spack` is on the login's PATH, each listing bounded in time (15 s)
    and lines (20,000: one cut short is not known); a load is checked against them there
    and kept unchecked elsewhere.
(b) `conda|mamba|micromamba activate NAME`: discovery lists each tool's named environments
    (`conda env list`); a named environment is checked where its tool listed them, a path
    environment is kept (said), and so is one whose conda the job sets up itself (a
    distribution's module, its conda.sh).
(c) a load after `module use DIR` of a tree the discovered listing does not name: the tree
    is listed alone where the job is placed or its site checked (`MODULEPATH=DIR module -t
    avail`, bounded, cached for the TTL), run here by bash with a stand-in `module`; a tree
    given at run time, or a site without a shell, keeps its loads unchecked.
(d) EasyBuild's toolchains of the 2019b, 2020a, 2020b and 2025a generations (foss up to
    2020b loads OpenBLAS itself and holds no gfbf; intel loads iccifort); there is no 2024b.

And faults found on the way, each with its test: pyxis's `#SBATCH --container-image` and
NERSC's `#SBATCH --image` were not read as container needs (a site whose sbatch refuses
them was chosen); `eval `modulecmd bash load X`` and Lmod's `module sw` were not read as
loads; Environment Modules' version ranges and lists (`gcc@11:12.9`) were read as one
version; Spack options with values (`--only package`, `-e ENV`, `env activate -d DIR`)."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from diamond_jupyter.capabilities import SiteCapabilities
from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.discovery import (
    ENV_LIST_BUDGET_S,
    ENV_LIST_LINES,
    discovery_script,
    parse_conda_envs,
    parse_module_list,
    parse_module_trees,
    parse_spack,
    split_sections,
)
from diamond_jupyter.discovery_site import describe_from_outputs
from diamond_jupyter.federation import Federation
from diamond_jupyter.needs import Needs, needs_of
from diamond_jupyter.software import find_module, needs_reasons


def needs(body: str) -> Needs:
    return needs_of(Federation.parse("#!/bin/bash\n#SBATCH -t 10\n" + body))


# -- the sites --------------------------------------------------------------------------------

# `spack find --format '{name}@{version}'` as Spack 0.21 prints it to a terminal-less shell:
# the count and the architecture/compiler group headers stay, one package a line
SPACK_FIND = """==> 6 installed packages
-- linux-rocky8-zen3 / gcc@12.3.0 -------------------------------
hdf5@1.12.2
hdf5@1.14.3
netcdf-c@4.9.2
openmpi@4.1.6
py-numpy@1.26.4
-- linux-rocky8-zen3 / gcc@13.2.0 -------------------------------
gromacs@2023.3
"""
SPACK_ENVS = "==> 2 environments\n    climate  cfd\n"
# conda 23: the named environments, the active one starred, an environment outside its
# directories listed by its path only
CONDA_LIST = """# conda environments:
#
base                  *  /opt/miniforge3
sim                      /home/ana/.conda/envs/sim
torch-2.3                /home/ana/.conda/envs/torch-2.3
                         /scratch/ana/envs/unnamed
"""
# micromamba 1.5's table
MICROMAMBA_LIST = """  Name   Active  Path
──────────────────────────────────────────
  base           /home/ana/micromamba
  md             /home/ana/micromamba/envs/md
"""


def envs_section(*listings: tuple[str, str, int]) -> str:
    """The discovery's `envs` section as the login's bash prints it: each listing's tag, its
    lines and the tool's exit status."""
    return "".join(f"@@{tag}\n{text}@@rc {rc}\n" for tag, text, rc in listings)


def site(name: str, envs: str = "", modules: str = "system none\n",
         runtimes: str = "") -> SiteCapabilities:
    text = ("x86_64\n\n@@dmd-discover@@arch:0\n"
            f"{modules}\n@@dmd-discover@@modules:0\n"
            f"{envs}\n@@dmd-discover@@envs:0\n"
            f"{runtimes}\n@@dmd-discover@@runtimes:0\n")
    parts, codes = split_sections(text)
    return describe_from_outputs(name, SlurmCommands(), parts, codes, [], []).capabilities


SPACKY = site("spacky", envs_section(("spack", SPACK_FIND, 0), ("spack-envs", SPACK_ENVS, 0),
                                     ("conda conda", CONDA_LIST, 0),
                                     ("conda micromamba", MICROMAMBA_LIST, 0)))
BARE = site("bare")  # neither spack nor a conda on the login's PATH: nothing known

LMOD = """system lmod 8.7.32
/sw/Core:
foss/2019b
foss/2020b
foss/2025a
gcc/12.3.0
gcc/13.2.0 (D)
intel/2020b
intel/2023.2.0
openmpi/4.1.6 (D)
python/.3.13.0-beta
python/3.11.6 (D)
"""
EASY = site("easy", modules=LMOD, runtimes="apptainer /usr/bin/apptainer\n")


# -- (a) Spack --------------------------------------------------------------------------------

def test_spack_find_and_env_list_are_read_past_their_headers() -> None:
    listing = envs_section(("spack", SPACK_FIND, 0), ("spack-envs", SPACK_ENVS, 0))
    pkgs, envs = parse_spack(listing)
    assert pkgs == ["gromacs@2023.3", "hdf5@1.12.2", "hdf5@1.14.3", "netcdf-c@4.9.2",
                    "openmpi@4.1.6", "py-numpy@1.26.4"]
    assert envs == ["cfd", "climate"]
    assert SPACKY.sources["spack_packages"] == "discovered"
    assert (BARE.spack_packages, BARE.spack_envs, BARE.conda_envs) == (None, None, None)


def test_a_listing_cut_short_or_failed_is_not_known() -> None:
    """No `@@rc` line (cut at ENV_LIST_LINES by head), or a tool that failed (timeout's
    124): nothing is checked against a part of the list."""
    cut = "@@spack\n" + "x@1\n" * 10 + "@@spack-envs\n" + SPACK_ENVS + "@@rc 0\n"
    assert parse_spack(cut) == (None, ["cfd", "climate"])
    assert parse_spack(envs_section(("spack", SPACK_FIND, 124))) == (None, None)
    assert parse_conda_envs(envs_section(("conda conda", CONDA_LIST, 1))) is None


@dataclass
class Case:
    body: str
    reasons: dict[str, list[str]] = field(default_factory=dict)  # site -> reasons
    note: str | None = None  # words one of the job's notes holds


SITES = {"spacky": SPACKY, "bare": BARE}

CASES = {
    # a version given at the precision Spack's `@1.14` means: any 1.14.x
    "spack-prefix": Case("spack load hdf5@1.14\n./run\n"),
    "fault-spack-version": Case(
        "spack load hdf5@1.16 +mpi\n./run\n",
        {"spacky": ["spack load hdf5@1.16 (line 1): not installed by Spack at the site "
                    "(only hdf5@1.12.2, hdf5@1.14.3)"]}),
    "fault-spack-missing": Case(
        "spack load --first netcdf-fortran %gcc@12.3.0\n./run\n",
        {"spacky": ["spack load netcdf-fortran (line 1): not installed by Spack at the site "
                    "(spack find lists 6 packages, none named netcdf-fortran)"]},
        note="checked where discovery listed Spack's installed packages"),
    # through `eval "$(spack load --sh ...)"`, a compiler and a variant in one word
    "spack-eval": Case('eval "$(spack load --sh py-numpy@1.26%gcc@12.3.0)"\npython a.py\n'),
    # a hash names one install whatever its name; a version range is checked by name
    "spack-hash-and-range": Case("spack load /abc1234\nspack load netcdf-c@4.8:4.10\n"),
    "fault-spack-env": Case(
        "spack env activate -p wrf\n./wrf.exe\n",
        {"spacky": ["spack environment 'wrf' (line 1) does not exist at the site (spack env "
                    "list: cfd, climate)"]}),
    "spack-env-here": Case("spack env activate climate\n./model\n"),
    "spack-env-dir": Case("spack env activate -d ./spack-env\n./model\n"),
    # options that take a value: `--only package` names no package; `-e ENV` before load
    "fault-spack-only-package": Case(
        "spack load --only package hdf5@1.16\n",
        {"spacky": ["spack load hdf5@1.16 (line 1): not installed by Spack at the site "
                    "(only hdf5@1.12.2, hdf5@1.14.3)"]}),
    "fault-spack-global-env-option": Case(
        "spack -e proj load netcdf-c@4.9\nspack -e proj load netcdf-fortran\n",
        {"spacky": ["spack load netcdf-fortran (line 2): not installed by Spack at the site "
                    "(spack find lists 6 packages, none named netcdf-fortran)"]}),
    # `-d DIR`: a directory, whatever its name looks like
    "fault-spack-env-dir-option": Case("spack env activate -d myproj\n./model\n"),
    "spacktivate-dir": Case("spacktivate -d myproj\n./model\n"),
    # named at run time: never checked (a backquoted command was checked as a name)
    "spack-version-variable": Case("spack load hdf5@$HDF5_VERSION\n./run\n",
                                   note="not checked: named at run time (line 1)"),
    "spack-env-variable": Case("spack env activate $SPACK_ENV_NAME\n./run\n"),
    "conda-backquoted": Case("conda activate `cat .envname`\n./run\n",
                             note="must exist at the site (named at run time: not checked)"),
    "conda-variable": Case('conda activate "${CONDA_ENV:-sim}"\n./run\n',
                           note="must exist at the site (named at run time: not checked)"),
    # only in a branch: where it runs is not known
    "spack-in-branch": Case("if [ -n \"$GPU\" ]; then spack load cuda@12.4; fi\n./run\n",
                            note="spack load cuda@12.4 (line 1): Spack packages are not in "
                                 "the site's module list; not checked: used only in a branch "
                                 "or function (line 1)"),
}
# (b) conda
CASES |= {
    "conda-named": Case("conda activate sim\npython run.py\n"),
    "fault-conda-missing": Case(
        "conda activate torch\npython train.py\n",
        {"spacky": ["conda environment 'torch' (line 1) does not exist at the site (conda env "
                    "list: base, sim, torch-2.3)"]},
        note="checked where discovery listed its environments"),
    "fault-mamba-shares-condas": Case(
        "mamba activate md\n./md\n",
        {"spacky": ["mamba environment 'md' (line 1) does not exist at the site (conda env "
                    "list: base, sim, torch-2.3)"]}),
    "micromamba-own-root": Case("micromamba activate md\n./md\n"),
    "fault-micromamba-missing": Case(
        'eval "$(micromamba shell hook --shell bash)"\nmicromamba activate sim\n./md\n',
        {"spacky": ["micromamba environment 'sim' (line 2) does not exist at the site "
                    "(micromamba env list: base, md)"]}),
    "old-source-activate": Case(
        "source activate oldenv\npython a.py\n",
        {"spacky": ["conda environment 'oldenv' (line 1) does not exist at the site (conda "
                    "env list: base, sim, torch-2.3)"]}),
    "conda-path": Case("conda activate /scratch/ana/envs/unnamed\npython a.py\n",
                       note="must exist at the site (a path: not checked)"),
    "conda-from-module": Case(
        "module load Miniforge3/24.3.0-0\nconda activate md\n./md\n",
        {where: ["software 'Miniforge3/24.3.0-0' not installed, nor any other conda "
                 "distribution (site has: none)"]  # sites with no modules at all
         for where in ("spacky", "bare")},
        note="(not checked: the job sets its conda up itself (module Miniforge3/24.3.0-0 "
             "(line 1)))"),
    # an install's own activate script: its environments, not the login's conda's
    "conda-own-activate": Case(
        "source ~/miniconda3/bin/activate md\n./md\n",
        note="(not checked: the job sets its conda up itself (~/miniconda3/bin/activate "
             "(line 1)))"),
    "conda-sh": Case(
        "source /opt/anaconda3/etc/profile.d/conda.sh\nconda activate md\n./md\n",
        note="(not checked: the job sets its conda up itself "
             "(/opt/anaconda3/etc/profile.d/conda.sh (line 1)))"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_spack_and_conda_cases(name: str) -> None:
    case = CASES[name]
    n = needs(case.body)
    for where, caps in SITES.items():
        assert needs_reasons(n, caps) == case.reasons.get(where, []), where
    if case.note:
        assert any(case.note in x for x in n.notes), n.notes


# -- the discovery command itself, run by bash with stand-in tools ----------------------------

def tool(bindir: Path, name: str, script: str) -> None:
    path = bindir / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)


def run_discovery(bindir: Path) -> SiteCapabilities:
    script = discovery_script({})
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60,
                       env={"PATH": f"{bindir}:/usr/bin:/bin", "HOME": str(bindir)})
    parts, codes = split_sections(r.stdout)
    return describe_from_outputs("s", SlurmCommands(), parts, codes, [], []).capabilities


def test_discovery_asks_spack_and_each_conda_tool_on_the_path(tmp_path: Path) -> None:
    find = SPACK_FIND.replace("\n", "\\n")
    tool(tmp_path, "spack", f'case "$1" in find) printf "{find}";; '
                            'env) printf "==> 1 environments\\n    climate\\n";; esac\n')
    tool(tmp_path, "conda", 'printf "# conda environments:\\n#\\nbase * /opt/conda\\n'
                            'sim /home/ana/.conda/envs/sim\\n"\n')
    tool(tmp_path, "micromamba", "exit 3\n")  # failed: its environments stay unknown
    caps = run_discovery(tmp_path)
    assert caps.spack_packages is not None and "hdf5@1.14.3" in caps.spack_packages
    assert caps.spack_envs == ["climate"]
    assert caps.conda_envs == {"conda": ["base", "sim"]}


def test_a_listing_longer_than_the_bound_is_cut_and_not_known(tmp_path: Path) -> None:
    tool(tmp_path, "spack", f'case "$1" in find) seq -f "pkg%g@1.0" {ENV_LIST_LINES + 5};; '
                            'env) exit 0;; esac\n')
    caps = run_discovery(tmp_path)
    assert caps.spack_packages is None and caps.spack_envs == []
    n = needs("spack load hdf5@9\n")
    assert needs_reasons(n, caps) == []  # not checked against a part of the list


def test_without_the_tools_nothing_is_listed(tmp_path: Path) -> None:
    caps = run_discovery(tmp_path)
    assert (caps.spack_packages, caps.spack_envs, caps.conda_envs) == (None, None, None)
    assert "timeout \"$__dmd_left\" spack find --format '{name}@{version}'" in \
        discovery_script({})


def test_the_listings_share_one_time_budget(tmp_path: Path) -> None:
    """A `spack find` that hangs is stopped when the budget is spent (its listing not
    known), and the conda listing after it is not made: the whole discovery keeps its
    time. Run here with a budget of 1 s instead of ENV_LIST_BUDGET_S."""
    tool(tmp_path, "spack", "sleep 30\n")
    tool(tmp_path, "conda", 'printf "base * /opt/conda\\n"\n')
    script = discovery_script({})
    assert f"$(({ENV_LIST_BUDGET_S} - (SECONDS - __dmd_e0)))" in script
    script = script.replace(f"$(({ENV_LIST_BUDGET_S} -", "$((1 -")
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=20,
                       env={"PATH": f"{tmp_path}:/usr/bin:/bin", "HOME": str(tmp_path)})
    parts, codes = split_sections(r.stdout)
    caps = describe_from_outputs("s", SlurmCommands(), parts, codes, [], []).capabilities
    assert (caps.spack_packages, caps.spack_envs, caps.conda_envs) == (None, None, None)
    assert "@@rc 124" in parts["envs"]  # timeout stopped it


# -- (d) EasyBuild toolchain generations ------------------------------------------------------

@pytest.mark.parametrize("load,gives", [
    ("OpenMPI/3.1.4", "foss/2019b"),  # 2019b: GCC 8.3.0, OpenMPI 3.1.4, OpenBLAS 0.3.7
    ("OpenBLAS/0.3.7", "foss/2019b"),
    ("ScaLAPACK/2.0.2", "foss/2019b"),
    ("GCC/10.2.0", "foss/2020b"),  # 2020b: GCC 10.2.0, OpenMPI 4.0.5, OpenBLAS 0.3.12
    ("OpenBLAS/0.3.12", "foss/2020b"),
    ("gompi/2020b", "foss/2020b"),
    ("OpenMPI/5.0.7", "foss/2025a"),  # 2025a: GCC 14.2.0, FlexiBLAS 3.4.5, ScaLAPACK 2.2.2
    ("FlexiBLAS/3.4.5", "foss/2025a"),
    ("gfbf/2025a", "foss/2025a"),
    ("iccifort/2020.4.304", "intel/2020b"),  # intel 2020b: iccifort, impi 2019.9.304
    ("impi/2019.9.304", "intel/2020b"),
    ("imkl/2020.4.304", "intel/2020b"),
])
def test_fault_a_toolchain_of_an_older_or_newer_generation_gives_its_parts(load, gives):
    """Before, only 2021a-2024a were known: foss/2019b gave no OpenMPI, so a job loading
    OpenMPI/3.1.4 beside it was refused at a site that has it through the toolchain."""
    assert find_module(load, EASY.software).full == gives
    assert needs_reasons(needs(f"module load {load}\n"), EASY) == []


@pytest.mark.parametrize("load", ["gfbf/2020b", "FlexiBLAS/3.0.4", "OpenMPI/4.0.3",
                                  "iimkl/2020b", "foss/2024b"])
def test_what_those_generations_do_not_hold_is_still_missing(load):
    """foss up to 2020b has no FlexiBLAS nor gfbf, intel no iimkl (both came with 2022a);
    OpenMPI 4.0.3 is 2020a's, which the site lacks; EasyBuild has no 2024b generation."""
    reasons = needs_reasons(needs(f"module load {load}\n"), EASY)
    assert len(reasons) == 1 and reasons[0].startswith(f"software '{load}' not installed")


# -- modules, as users write them -------------------------------------------------------------

@pytest.mark.parametrize("body,reasons", [
    # the default marked (D) serves a load that names no version
    ("module load gcc python\n", []),
    # three on one line, the middle one missing: that one is named
    ("module load gcc/13.2.0 hdf5/1.14.3 openmpi/4.1.6\n",
     ["software 'hdf5/1.14.3' not installed (site has: foss/2019b, foss/2020b, foss/2025a, "
      "gcc/12.3.0, gcc/13.2.0, intel/2020b, intel/2023.2.0, openmpi/4.1.6, ... (1 more))"]),
    # `ml -gcc intel`: gcc unloaded, intel (its default) loaded
    ("ml gcc\nml -gcc intel\n", []),
    ("module load gcc\nmodule swap gcc intel/2099\n",
     ["software 'intel/2099' not installed (only intel/2020b, intel/2023.2.0)"]),
    ("module load gcc/12.3.0\nmodule switch gcc/12.3.0 gcc/14.1.0\n",
     ["software 'gcc/14.1.0' not installed (only gcc/12.3.0, gcc/13.2.0)"]),
    # the module system's own init sourced first: the loads after it are checked
    ("source /etc/profile.d/modules.sh\nmodule load gcc/11.2.0\n",
     ["software 'gcc/11.2.0' not installed (only gcc/12.3.0, gcc/13.2.0)"]),
    (". /usr/share/lmod/lmod/init/bash\nml openmpi/5.0.3\n",
     ["software 'openmpi/5.0.3' not installed (only openmpi/4.1.6)"]),
    # a hidden version (Lmod's leading dot): not listed by any site, kept unchecked
    ("module load python/.3.13.0-beta\n", []),
])
def test_module_loads_as_users_write_them(body, reasons):
    assert needs_reasons(needs(body), EASY) == reasons


def test_a_hidden_module_is_said_to_be_unchecked():
    n = needs("module load python/.3.14.0-rc1\n")
    assert [s.unchecked for s in n.software] == [
        "a hidden module (line 1): checked where the site lists hidden modules"]


# -- containers -------------------------------------------------------------------------------

def caps_with(*runtimes: str, gpus: tuple[str, ...] = ()) -> SiteCapabilities:
    return SiteCapabilities(site="c", container_runtimes=list(runtimes), gpu_models=list(gpus))


@pytest.mark.parametrize("body,runtimes,reasons", [
    # apptainer and singularity are one runtime under two names
    ("apptainer exec img.sif ./a\n", ("singularity",), []),
    ("singularity exec img.sif ./a\n", ("apptainer",), []),
    ("srun --container-image=nvcr.io#nvidia/pytorch:24.01-py3 python t.py\n", ("enroot",), []),
    ("srun --container-image=ubuntu:22.04 ./a\n", ("apptainer",),
     ["container runtime 'pyxis' not available (pyxis: srun --container-image, which needs "
      "enroot) (site has: apptainer)"]),
    ("shifter --image=docker:ubuntu:22.04 ./a\n", ("shifter",), []),
    ("podman-hpc run --rm -v $PWD:/w ubuntu:22.04 ./a\n", ("podman",),
     ["container runtime 'podman-hpc' not available (site has: podman)"]),
    ("ch-run /scratch/ana/img -- ./a\n", ("charliecloud",), []),
    ("ch-run /scratch/ana/img -- ./a\n", (),
     ["container /scratch/ana/img needs a container runtime, site has none"]),
])
def test_container_runtimes_by_their_names(body, runtimes, reasons):
    assert needs_reasons(needs(body), caps_with(*runtimes)) == reasons


def test_apptainer_nv_on_a_site_without_gpus_is_noted_not_refused():
    """`--nv` on nodes without GPUs runs (apptainer warns); the job asks for no GPU, which
    is what the note says."""
    n = needs("apptainer exec --nv img.sif python train.py\n")
    assert needs_reasons(n, caps_with("apptainer")) == []
    assert any("the body uses GPUs (apptainer with GPUs, line 1) but the job requests none"
               in x for x in n.notes)


def test_fault_pyxis_sbatch_options_need_pyxis():
    """`#SBATCH --container-image` is pyxis's own sbatch option: a site without it refuses
    the whole script ("unrecognized option"). Before: not read as a need at all."""
    n = needs_of(Federation.parse(
        "#!/bin/bash\n#SBATCH -t 10\n#SBATCH --container-image=/scratch/ana/pytorch.sqsh\n"
        "#SBATCH --container-mounts=/scratch:/scratch\npython train.py\n"))
    assert (n.container.image, n.container.runtime) == ("/scratch/ana/pytorch.sqsh", "pyxis")
    assert needs_reasons(n, caps_with("enroot")) == []
    assert needs_reasons(n, caps_with("apptainer")) == [
        "container runtime 'pyxis' not available (pyxis: srun --container-image, which needs "
        "enroot) (site has: apptainer)"]


def test_fault_a_registry_image_cut_at_its_hash_is_noted():
    """sbatch reads an unescaped `#` in a directive as a comment: `nvcr.io#nvidia/...`
    becomes the image `nvcr.io` (the dialect reads it as sbatch does); the note says so
    and how to escape it. Escaped, the image is read whole."""
    n = needs_of(Federation.parse("#!/bin/bash\n#SBATCH -t 10\n"
                                  "#SBATCH --container-image=nvcr.io#nvidia/pytorch:24.01-py3\n"
                                  "python t.py\n"))
    assert n.container.image == "nvcr.io"
    assert any("sbatch reads the `#` as the start of a comment, so the image is 'nvcr.io'; "
               "escape it (nvcr.io\\#...)" in x for x in n.notes), n.notes
    esc = needs_of(Federation.parse("#!/bin/bash\n#SBATCH -t 10\n"
                                    "#SBATCH --container-image nvcr.io\\#nvidia/pytorch:24.01\n"
                                    "python t.py\n"))
    assert esc.container.image == "nvcr.io#nvidia/pytorch:24.01" and not any(
        "comment" in x for x in esc.notes)


def test_the_discovery_env_is_bounded_by_the_environment_not_the_login_shell() -> None:
    """The listing runs without a terminal: `timeout` and `head` come from coreutils,
    found on the login's PATH as every section's commands are."""
    script = discovery_script({})
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp")}
    r = subprocess.run(["bash", "-n", "-c", script], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert f"head -n {ENV_LIST_LINES + 1}" in script


def test_module_trees_of_a_module_use_are_still_checked_only_where_listed() -> None:
    """(c) unchanged: a tree the site lists is checked, one it does not is kept (said)."""
    caps = site("t", modules=LMOD)
    assert parse_module_trees(LMOD) == ["/sw/Core"] == caps.module_trees
    assert needs_reasons(needs("module use /sw/Core\nmodule load gcc/99\n"), caps) == [
        "software 'gcc/99' not installed (only gcc/12.3.0, gcc/13.2.0)"]
    assert needs_reasons(needs("module use /home/ana/mods\nmodule load gcc/99\n"), caps) == []
    assert parse_module_list(LMOD)[0] == "lmod"


def test_diamond_describe_shows_the_listings_where_known() -> None:
    from diamond_jupyter.cli.describe import describe_text
    from diamond_jupyter.discovery import SiteDescription

    text = describe_text(SiteDescription(site="spacky", capabilities=SPACKY))
    assert "  Spack packages:      6 (gromacs@2023.3, hdf5@1.12.2, hdf5@1.14.3, " in text
    assert "  Spack environments:  cfd, climate" in text
    assert "  conda environments:  base, sim, torch-2.3" in text
    assert "  micromamba environments: base, md" in text
    bare = describe_text(SiteDescription(site="bare", capabilities=BARE))
    assert "Spack" not in bare and "environments" not in bare


# -- old spellings of a load ------------------------------------------------------------------

@pytest.mark.parametrize("body", [
    "eval `modulecmd bash load gcc/99`\n",
    'eval "$(/usr/bin/modulecmd sh add gcc/99)"\n',
    "eval $($LMOD_CMD bash load gcc/99)\n",
    "module sw gcc gcc/99\n",
])
def test_fault_modulecmd_through_eval_and_lmods_sw_are_loads(body):
    """Environment Modules 3 scripts call `modulecmd` through `eval` (what the `module`
    function does), and Lmod takes `sw` for swap: before, neither was read (the job was
    placed anywhere, and failed where gcc/99 is not)."""
    n = needs(body)
    assert [s.full for s in n.software] == ["gcc/99"]
    assert needs_reasons(n, EASY) == [
        "software 'gcc/99' not installed (only gcc/12.3.0, gcc/13.2.0)"]


def test_a_load_through_modulecmd_is_respelled_as_the_site_names_it():
    from diamond_jupyter.capabilities import SoftwareModule
    from diamond_jupyter.software import rewrite_modules

    caps = SiteCapabilities(site="eb", software=[SoftwareModule.parse("GCC/12.3.0")])
    body = 'eval "$(/usr/bin/modulecmd bash load gcc/12.3.0)"\n./a\n'
    assert rewrite_modules(body, caps) == (
        'eval "$(/usr/bin/modulecmd bash load GCC/12.3.0)"\n./a\n',
        ["rewrote: body line 1: module gcc/12.3.0 -> GCC/12.3.0 (as eb names it)"])


def test_fault_nersc_shifter_image_option_needs_shifter():
    """`#SBATCH --image=docker:IMAGE` then `srun shifter CMD` (NERSC's way): the image is
    the sbatch option's, which sbatch refuses where shifter is not. Before: no need read."""
    n = needs_of(Federation.parse("#!/bin/bash\n#SBATCH -t 10\n#SBATCH --image=docker:ubuntu:"
                                  "22.04\nsrun -n 4 shifter python3 a.py\n"))
    assert (n.container.image, n.container.runtime) == ("docker:ubuntu:22.04", "shifter")
    assert needs_reasons(n, caps_with("shifter")) == []
    assert needs_reasons(n, caps_with("apptainer")) == [
        "container runtime 'shifter' not available (site has: apptainer)"]


def test_fault_podman_hpc_gpu_flag_uses_nvidia_gpus():
    n = needs("podman-hpc run --gpu --rm -v $PWD:/w nvcr.io/nvidia/pytorch:24.01-py3 ./t\n")
    assert (n.container.runtime, n.container.gpu, n.gpu_vendor) == (
        "podman-hpc", "nvidia", "nvidia")


@pytest.mark.parametrize("load,ok", [
    ("gcc@11:12.9", True),   # Environment Modules 4.4+: a range, inclusive
    ("gcc@:12", True),       # up to 12, at the precision given: 12.3.0 is a 12
    ("gcc@12:", True),
    ("gcc@12.9,13.2.0", True),  # a list: any of them
    ("gcc@14:", False),
    ("gcc@:11", False),
    ("gcc@12.4:12.9", False),
    ("gcc@99,98", False),
])
def test_fault_environment_modules_version_ranges_and_lists(load, ok):
    """`module load gcc@11:12.9` was compared as the version "11" (refused at a site with
    gcc 12.3.0, which the range holds), and `gcc@12.9,13.2.0` as "12.9"."""
    gccs = site("gccs", modules="system environment-modules 5.4.0\n/opt/modulefiles:\n"
                                "gcc/12.3.0\ngcc/13.2.0(default)\n")
    reasons = needs_reasons(needs(f"module load {load}\n"), gccs)
    assert (reasons == []) is ok, reasons
    if not ok:
        assert reasons == [f"software '{load}' not installed (only gcc/12.3.0, gcc/13.2.0)"]


def test_discovery_says_which_spack_it_listed(tmp_path: Path) -> None:
    """The root of the `spack` on the login's PATH, or $SPACK_ROOT where its setup-env.sh
    made `spack` a shell function."""
    (tmp_path / "bin").mkdir()
    tool(tmp_path / "bin", "spack", 'case "$1" in find) echo hdf5@1.14.3;; esac\n')
    caps = run_discovery(tmp_path / "bin")
    assert caps.spack_root == str(tmp_path) and caps.spack_packages == ["hdf5@1.14.3"]
    script = discovery_script({})
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60,
                       env={"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path),
                            "SPACK_ROOT": "/sw/spack-0.22"})
    parts, codes = split_sections(r.stdout)
    got = describe_from_outputs("s", SlurmCommands(), parts, codes, [], []).capabilities
    assert got.spack_root == "/sw/spack-0.22"


def test_a_spack_the_job_sets_up_itself_is_checked_only_where_it_is_the_listed_one() -> None:
    body = "source /opt/spack/share/spack/setup-env.sh\nspack load hdf5@1.16\n./run\n"
    n = needs(body)
    assert any("sources /opt/spack/share/spack/setup-env.sh (line 1): its packages and "
               "environments are checked only where the login's spack is /opt/spack/bin/spack"
               in x for x in n.notes), n.notes
    listing = envs_section(("spack /opt/spack", SPACK_FIND, 0))
    same, other = site("same", listing), site("other", envs_section(
        ("spack /home/ana/spack", SPACK_FIND, 0)))
    assert (same.spack_root, other.spack_root, SPACKY.spack_root) == (
        "/opt/spack", "/home/ana/spack", None)
    assert needs_reasons(n, same) == [
        "spack load hdf5@1.16 (line 2): not installed by Spack at the site (only hdf5@1.12.2, "
        "hdf5@1.14.3)"]
    assert needs_reasons(n, other) == [] and needs_reasons(n, SPACKY) == []


# -- (c) a tree the job adds, listed alone where the job is placed ----------------------------

MODULE_FN = """module() {
  [ "$1" = -t ] && shift
  [ "$1" = avail ] || return 1
  local IFS=:
  for d in $MODULEPATH; do
    echo "$d:"
    (cd "$d" && find . -mindepth 2 -maxdepth 2 -type f | sed 's|^\\./||' | sort)
  done
}
"""


class BashTransport:
    """Runs the command with this machine's bash, `module` a function listing MODULEPATH's
    directories as `module -t avail` does (the BASH_ENV file discovery sources first)."""

    def __init__(self, home: Path) -> None:
        self.home, self.calls = home, 0
        (home / "module.sh").write_text(MODULE_FN)

    async def run(self, argv, *, env=None, preamble="", check=True, timeout=None):
        from types import SimpleNamespace

        self.calls += 1
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                           env={"PATH": "/usr/bin:/bin", "HOME": str(self.home),
                                "BASH_ENV": str(self.home / "module.sh")})
        return SimpleNamespace(stdout=r.stdout, stderr=r.stderr, exit_status=r.returncode)


def tree_site(tmp_path: Path, kind: str = "ssh"):
    from types import SimpleNamespace

    from diamond_jupyter.discovery_site import SiteDiscovery

    cfg = SimpleNamespace(transport=SimpleNamespace(kind=kind), env={}, preamble="",
                          discovery=SimpleNamespace(ttl_s=600.0))
    site = SimpleNamespace(name="lab", cfg=cfg, transport=BashTransport(tmp_path))
    site.discovery = SiteDiscovery(site)
    return SimpleNamespace(sites={"lab": site})


def with_trees(fed, body: str) -> tuple[Needs, SiteCapabilities]:
    import asyncio

    from diamond_jupyter.federation_discover import DiscoverMixin
    from diamond_jupyter.federation_needs import job_trees

    n = needs(body)
    caps = {"lab": site("lab", modules=LMOD)}
    spec = Federation.parse("#!/bin/bash\n#SBATCH -t 10\n" + body)
    asyncio.run(DiscoverMixin.add_trees(fed, caps, job_trees(spec)))
    return n, caps["lab"]


def test_gap_c_a_module_use_tree_is_listed_alone_and_its_loads_checked(tmp_path: Path):
    """Before: a load after `module use /proj/mods` of a tree the site's listing does not
    name was never checked. Now the tree is listed at the site (MODULEPATH set to it alone,
    bounded), and the loads after it are checked against it and the site's own modules."""
    mods = tmp_path / "proj" / "mods"
    (mods / "mytool").mkdir(parents=True)
    (mods / "mytool" / "2.1").write_text("#%Module\n")
    fed = tree_site(tmp_path)
    body = f"module use {mods}\nmodule load mytool/2.1 gcc/13.2.0\n./run\n"
    n, caps = with_trees(fed, body)
    assert str(mods) in caps.module_trees and any(m.full == "mytool/2.1" for m in caps.software)
    assert needs_reasons(n, caps) == []
    n, caps = with_trees(fed, f"module use {mods}\nmodule load mytool/3.0\n")
    assert needs_reasons(n, caps) == ["software 'mytool/3.0' not installed (only mytool/2.1)"]
    assert fed.sites["lab"].transport.calls == 1  # listed once, then cached for the TTL


def test_gap_c_a_tree_the_site_does_not_have_fails_its_loads(tmp_path: Path):
    fed = tree_site(tmp_path)
    n, caps = with_trees(fed, "module use ~/modulefiles\nmodule load mytool/2.1\n")
    assert "~/modulefiles" in caps.module_trees
    assert needs_reasons(n, caps)[0].startswith("software 'mytool/2.1' not installed")


def test_gap_c_a_home_tree_is_listed_under_the_sites_home(tmp_path: Path):
    (tmp_path / "modulefiles" / "mytool").mkdir(parents=True)
    (tmp_path / "modulefiles" / "mytool" / "2.1").write_text("#%Module\n")
    n, caps = with_trees(tree_site(tmp_path), "module use $HOME/modulefiles\n"
                                              "module load mytool/2.1\n")
    assert needs_reasons(n, caps) == []


@pytest.mark.parametrize("body,kind", [
    ("module use $PROJ/mods\nmodule load mytool/2.1\n", "ssh"),  # a path given at run time
    ("module use /proj/mods\nmodule load mytool/2.1\n", "slurmrestd"),  # no shell there
])
def test_gap_c_a_tree_that_cannot_be_asked_stays_unchecked(tmp_path: Path, body, kind):
    fed = tree_site(tmp_path, kind)
    n, caps = with_trees(fed, body)
    assert needs_reasons(n, caps) == [] and fed.sites["lab"].transport.calls == 0


def test_the_tree_listing_is_bounded_and_quoted() -> None:
    from diamond_jupyter.discovery import TREE_LIST_LINES, tree_listing_script

    script = tree_listing_script("/proj/my mods")
    assert "__dmd_t='/proj/my mods'; [ -d \"$__dmd_t\" ] || exit 4" in script
    assert f"| head -n {TREE_LIST_LINES}" in script
    assert tree_listing_script("~/mods").count('"$HOME"/mods') == 1
    assert tree_listing_script("$PROJ/mods") is None and tree_listing_script("/a/*/m") is None

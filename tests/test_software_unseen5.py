"""Software environments, fifth sweep: bodies written the way users write them, each case's
answer (runs at the site, or not, with the reason) worked out by hand against an EasyBuild
site on Lmod with conda and micromamba environments (`SITE`) and a site where nothing was
discovered (`BARE`). Lmod's `family` (two compilers: Lmod swaps one for the other, both
exist), `ml spider` and other queries that load nothing, `module purge` before loads,
options before the subcommand (`module --ignore_cache load`), `ml -NAME`, `module swap`,
EasyBuild versions with a CUDA suffix, a version a `.modulerc` hides, old conda's `source
activate`, `conda|mamba|micromamba run -n NAME`, `pixi run`, `uv run`, saved collections.

Faults found and fixed, each with its case marked `fault`: names joined by a comma
(`module load GCC/12.3.0,CUDA/12.1.1`, one unknown name to Lmod) were matched as GCC
12.3.0 and the job placed; `micromamba run -n NAME` (and
conda's, mamba's) was not read at all (no check, no note: a job naming an environment the
site lacks was placed there); a module hidden by a `.modulerc` (`hide_version`,
`hide-version`), which Lmod loads when named, was refused as not installed (discovery
asked `module -t avail`, which leaves it out: now `--show_hidden` on Lmod)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field

import pytest
from test_software_unseen4 import CONDA_LIST, MICROMAMBA_LIST, envs_section, needs, site

from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.discovery import discovery_script, split_sections
from diamond_jupyter.discovery_site import describe_from_outputs
from diamond_jupyter.software import needs_reasons, rewrite_modules

# `module --show_hidden -t avail` on Lmod 8: EasyBuild names, a default version marked,
# a dot-named hidden version (loaded only by its dotted name)
LMOD = """system lmod 8.7.32
/sw/easybuild/modules/all:
CUDA/12.1.1
GCC/12.3.0
GCC/13.2.0 (D)
Miniforge3/24.3.0-0
OpenMPI/4.1.5-GCC-12.3.0
PyTorch/2.1.2-foss-2023a-CUDA-12.1.1
imkl/2023.1.0
intel/2023.2.0
python/.3.14.0-beta
python/3.10.8
python/3.11.6 (D)
"""
SITE = site("hpc", modules=LMOD, envs=envs_section(("conda conda", CONDA_LIST, 0),
                                                   ("conda micromamba", MICROMAMBA_LIST, 0)))
BARE = site("bare")


@dataclass
class Case:
    body: str
    reasons: list[str] = field(default_factory=list)  # at SITE; BARE never refuses
    note: str | None = None  # words one of the job's notes holds
    loads: list[str] | None = None  # the modules the job needs, as name/version (None: none)
    bare: list[str] | None = None  # at BARE, where not one refusal per load


CASES = {
    # Lmod's family: loading intel after GCC swaps the compiler; both are installed
    "family-two-compilers": Case("module load GCC/12.3.0\nmodule load intel/2023.2.0\n./a\n",
                                 loads=["GCC/12.3.0", "intel/2023.2.0"]),
    "default-version": Case("module load python\npython a.py\n", loads=["python"]),
    # queries load nothing: `ml spider` with several versions, `ml avail`, `ml` alone
    "ml-spider-then-load": Case("ml spider python\nml python/3.10.8\n",
                                loads=["python/3.10.8"]),
    "ml-queries-only": Case("ml spider PyTorch/2.1.2-foss-2023a-CUDA-12.1.1\nml avail\n"
                            "ml list\nml\nml --version\n", loads=[]),
    "eb-cuda-suffix": Case("module load PyTorch/2.1.2-foss-2023a-CUDA-12.1.1\n",
                           loads=["PyTorch/2.1.2-foss-2023a-CUDA-12.1.1"]),
    "eb-cuda-suffix-other": Case(
        "module load PyTorch/2.1.2-foss-2023a-CUDA-12.4.0\n",
        ["software 'PyTorch/2.1.2-foss-2023a-CUDA-12.4.0' not installed (only "
         "PyTorch/2.1.2-foss-2023a-CUDA-12.1.1)"],
        loads=["PyTorch/2.1.2-foss-2023a-CUDA-12.4.0"]),
    "purge-then-loads": Case("module purge\nmodule load GCC/12.3.0 OpenMPI/4.1.5-GCC-12.3.0\n",
                             loads=["GCC/12.3.0", "OpenMPI/4.1.5-GCC-12.3.0"]),
    "ignore-cache": Case("module --ignore_cache load GCC/12.3.0\n", loads=["GCC/12.3.0"]),
    "ignore-cache-missing": Case("module --ignore_cache load GCC/11.2.0\n",
                                 ["software 'GCC/11.2.0' not installed (only GCC/12.3.0, "
                                  "GCC/13.2.0)"], loads=["GCC/11.2.0"]),
    # Lmod 8.6 (checked by hand): `The following module(s) are unknown:
    # "GCC/12.3.0,CUDA/12.1.1"`; before, the version was matched by its first part
    "fault-names-joined-by-a-comma": Case(
        "module load GCC/12.3.0,CUDA/12.1.1\n",
        ["software 'GCC/12.3.0,CUDA/12.1.1' not installed (only GCC/12.3.0, GCC/13.2.0; "
         "names joined by ',' are one name to module load: separate them with blanks)"],
        loads=["GCC/12.3.0,CUDA/12.1.1"],
        bare=["software 'GCC/12.3.0,CUDA/12.1.1' not installed (site has: none; names joined "
              "by ',' are one name to module load: separate them with blanks)"]),
    "ml-unload-and-load": Case("ml -GCC intel/2023.2.0\n", loads=["intel/2023.2.0"]),
    "swap": Case("module swap GCC/13.2.0 intel/2023.2.0\n", loads=["intel/2023.2.0"]),
    "switch-missing": Case("module switch GCC GCC/9.3.0\n",
                           ["software 'GCC/9.3.0' not installed (only GCC/12.3.0, "
                            "GCC/13.2.0)"], loads=["GCC/9.3.0"]),
    "saved-collection": Case("module restore myset\n./a\n",
                             note="module restore myset (line 1): a saved collection; its "
                                  "modules are not known here"),
    # old conda
    "source-activate": Case("source activate sim\npython a.py\n"),
    "source-activate-missing": Case(
        "source activate torch\npython a.py\n",
        ["conda environment 'torch' (line 1) does not exist at the site (conda env list: "
         "base, sim, torch-2.3)"]),
    # run in an environment without activating it
    "fault-micromamba-run": Case("micromamba run -n md python a.py\n",
                                 note="micromamba environment 'md' (line 1) must exist at "
                                      "the site (checked where discovery listed"),
    "fault-micromamba-run-missing": Case(
        "micromamba run -n nope python a.py\n",
        ["micromamba environment 'nope' (line 1) does not exist at the site (micromamba env "
         "list: base, md)"]),
    "fault-conda-run-missing": Case(
        "conda run --no-capture-output --name=torch python train.py\n",
        ["conda environment 'torch' (line 1) does not exist at the site (conda env list: "
         "base, sim, torch-2.3)"]),
    "fault-mamba-run-shares-condas": Case("mamba run -n sim python a.py\n",
                                          note="mamba environment 'sim' (line 1) must exist "
                                               "at the site (checked where"),
    "fault-conda-run-prefix": Case("conda run -p /scratch/ana/envs/unnamed python a.py\n",
                             note="conda environment '/scratch/ana/envs/unnamed' (line 1) "
                                  "must exist at the site (a path: not checked)"),
    "fault-conda-run-cwd-first": Case("conda run --cwd /tmp -n torch python a.py\n",
                                ["conda environment 'torch' (line 1) does not exist at the "
                                 "site (conda env list: base, sim, torch-2.3)"]),
    "conda-run-no-env": Case("conda run python a.py\n"),
    # project tools: kept, said
    "pixi-run": Case("pixi run -e cuda train\n",
                     note="pixi run (line 1): pixi must be on the site's PATH"),
    "uv-run": Case("cd $SLURM_SUBMIT_DIR\nuv run --frozen python train.py\n",
                   note="uv run (line 2): uv must be on the site's PATH"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_software_cases(name: str) -> None:
    case = CASES[name]
    n = needs(case.body)
    assert needs_reasons(n, SITE) == case.reasons
    # no module system found there: every module load is refused, environments unchecked
    bare = case.bare if case.bare is not None else [
        f"software '{m}' not installed (site has: none)" for m in case.loads or []]
    assert needs_reasons(n, BARE) == bare
    if case.note:
        assert any(case.note in x for x in n.notes), n.notes
    if case.loads is not None:
        assert [s.name + (f"/{s.version}" if s.version else "") for s in n.software] == \
            case.loads


def test_a_toolchain_suffix_the_site_lacks_is_rewritten_to_the_sites_module():
    """`imkl/2023.1.0-gompi-2023a` where the site builds imkl at the system level
    (`imkl/2023.1.0`): the same imkl, loaded by the site's name for it, and said."""
    body, notes = rewrite_modules("module load imkl/2023.1.0-gompi-2023a\n", SITE)
    assert body == "module load imkl/2023.1.0\n"
    assert notes == ["rewrote: body line 1: module imkl/2023.1.0-gompi-2023a -> "
                     "imkl/2023.1.0 (as hpc names it)"]


def test_a_dotted_hidden_version_is_kept_unchecked_where_hidden_ones_were_not_listed():
    """`python/.3.14.0-beta`: Lmod loads it by that name; SITE's listing carries no mark
    that it holds hidden modules (test_software_unseen6 has those that do), so it is not
    checked there (said with the need). BARE has no module system at all: no module loads
    there, hidden or not (test_software_unseen13)."""
    n = needs("module load python/.3.14.0-beta\n")
    assert [(s.full, s.unchecked) for s in n.software] == [
        ("python/.3.14.0-beta",
         "a hidden module (line 1): checked where the site lists hidden modules")]
    assert needs_reasons(n, SITE) == []
    assert needs_reasons(n, BARE) == ["software 'python/.3.14.0-beta' not installed (site has: "
                                      "none)"]


# -- a version a .modulerc hides ---------------------------------------------------------------

# Lmod as a bash function: `module -t avail` leaves out python/3.13.0 (hidden by
# `hide_version("python/3.13.0")` in .modulerc.lua, or `hide-version` in a Tcl .modulerc);
# `--show_hidden` lists it, as Lmod 8.6 does (checked by hand on Debian's lmod 8.6.19)
HIDING_LMOD = (
    'module() { case "$*" in\n'
    '  "-t avail") printf "/sw/mods:\\npython/\\npython/3.11.6\\n" >&2 ;;\n'
    '  "--show_hidden -t avail") printf "/sw/mods:\\npython/\\npython/.3.14.0-beta\\n'
    'python/3.11.6\\npython/3.13.0\\n" >&2 ;;\n'
    '  *) ;;\n'
    'esac; }\nexport LMOD_VERSION=8.6.19\n')


def test_fault_a_version_a_modulerc_hides_is_discovered_and_loads():
    r = subprocess.run(["bash", "-c", HIDING_LMOD + discovery_script({})],
                       capture_output=True, text=True, timeout=60,
                       env={"PATH": "/usr/bin:/bin"})
    parts, codes = split_sections(r.stdout)
    caps = describe_from_outputs("s", SlurmCommands(), parts, codes, [], []).capabilities
    assert [m.full for m in caps.software or []] == ["python/3.11.6", "python/3.13.0"]
    assert needs_reasons(needs("module load python/3.13.0\n"), caps) == []
    assert needs_reasons(needs("module load python/3.12.1\n"), caps) == [
        "software 'python/3.12.1' not installed (only python/3.11.6, python/3.13.0)"]

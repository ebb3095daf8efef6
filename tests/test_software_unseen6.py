"""Software environments, sixth sweep: bodies written the way users write them, each case's
answer (runs at the site, or not, with the reason) worked out by hand against the fifth
sweep's EasyBuild site on Lmod (`SITE`), its Spack site (`SPACKY`) and a site where nothing
was discovered (`BARE`): loads inside `if` branches and `case` arms, `module restore`,
oneAPI's `setvars.sh`, `spack load --first`, `spack env activate -p`, conda's shell hook,
a module list named at run time, a tolerated load, and version ranges users write.

Faults found and fixed, each with its case or test marked `fault`: a hidden module
(`python/.3.14.0-beta`) was never checked, though Lmod's `--show_hidden` listing names the
site's hidden ones, and Environment Modules 4.6+ hid them from discovery (`module avail`
without `--all`); versions joined by ',' after '/' (`GCC/12.3.0,13.2.0`, one unknown name
to Lmod and to Environment Modules) matched GCC/12.3.0 and the job was placed; `module load
gcc/>=12` unquoted (the shell's redirection: it loads the default gcc and writes to a file
`=12`) was read as a plain `gcc/` without a word."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field

import pytest
from test_software_unseen4 import SPACKY, needs, site
from test_software_unseen5 import SITE

from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.discovery import MODULE_LIST_LINES, discovery_script, split_sections
from diamond_jupyter.discovery_site import describe_from_outputs
from diamond_jupyter.software import needs_reasons, rewrite_modules


@dataclass
class Case:
    body: str
    site: list[str] = field(default_factory=list)  # reasons at SITE
    spacky: list[str] = field(default_factory=list)  # reasons at SPACKY (no module system)
    note: str | None = None  # words one of the job's notes holds


NOT_AT_SPACKY = "not installed (site has: none)"

CASES = {
    # both branches' loads: run only when the branch runs, so neither is checked
    "if-else-branches": Case("if [ \"$MODE\" = gpu ]; then\n  module load CUDA/12.1.1\n"
                             "else\n  module load GCC/11.1.0\nfi\n./run\n"),
    # a case on the cluster's name that names this site: its arm runs here, so it is checked
    "case-arm-for-this-site": Case("case $SLURM_CLUSTER_NAME in\n  hpc) module load "
                                   "CUDA/12.4.0 ;;\n  *) ;;\nesac\n",
                                   ["software 'CUDA/12.4.0' not installed (only CUDA/12.1.1)"]),
    "restore-collection": Case("module restore collection\n./a\n",
                               note="module restore collection (line 1): a saved collection; "
                                    "its modules are not known here"),
    "oneapi-setvars": Case("source /opt/intel/oneapi/setvars.sh --force intel64 > /dev/null\n"
                           "mpirun -n 4 ./a\n",
                           note="sources /opt/intel/oneapi/setvars.sh (line 1): a helper read "
                                "at run time"),
    # `--first`: the first of several matching installs; the package is what is checked
    "spack-load-first": Case("spack load --first hdf5\n",
                             note="spack load hdf5 (line 1): Spack packages are not in the "
                                  "site's module list"),
    "spack-load-first-missing": Case(
        "spack load --first netcdf-fortran\n",
        spacky=["spack load netcdf-fortran (line 1): not installed by Spack at the site "
                "(spack find lists 6 packages, none named netcdf-fortran)"]),
    "spack-load-first-old-version": Case(
        "spack load --first hdf5@1.10\n",
        spacky=["spack load hdf5@1.10 (line 1): not installed by Spack at the site (only "
                "hdf5@1.12.2, hdf5@1.14.3)"]),
    "spack-env-activate-prompt-missing": Case(
        "spack env activate -p weather\n",
        spacky=["spack environment 'weather' (line 1) does not exist at the site (spack env "
                "list: cfd, climate)"]),
    "conda-shell-hook": Case("eval \"$(conda shell.bash hook)\"\nconda activate sim\n",
                             note="conda environment 'sim' (line 2) must exist at the site"),
    "conda-shell-hook-missing": Case(
        "eval \"$(conda shell.bash hook)\"\nconda activate torch-2.4\n",
        ["conda environment 'torch-2.4' (line 2) does not exist at the site (conda env list: "
         "base, sim, torch-2.3)"],
        ["conda environment 'torch-2.4' (line 2) does not exist at the site (conda env list: "
         "base, sim, torch-2.3)"]),
    "modules-named-at-run-time": Case("module load $(cat modules.txt)\n",
                                      note="module $(cat modules.txt) (line 1): named at run "
                                           "time; not checked"),
    "tolerated-load-then-pip": Case("module load PyTorch/2.2.0 2>/dev/null || pip install "
                                    "--user torch\n",
                                    note="pip installs packages at run time (line 1)"),
    "quoted-with-comment": Case("module load \"GCC/13.2.0\"  # the compiler\n",
                                spacky=[f"software 'GCC/13.2.0' {NOT_AT_SPACKY}"]),
    "lowercase-short-version": Case("module load cuda/12.1\n",
                                    spacky=[f"software 'cuda/12.1' {NOT_AT_SPACKY}"]),
    "force-purge-then-missing-stdenv": Case(
        "module --force purge\nmodule load StdEnv/2023\n",
        ["software 'StdEnv/2023' not installed (site has: CUDA/12.1.1, GCC/12.3.0, GCC/13.2.0, "
         "imkl/2023.1.0, intel/2023.2.0, Miniforge3/24.3.0-0, OpenMPI/4.1.5-GCC-12.3.0, "
         "python/3.10.8, ... (2 more))"],
        [f"software 'StdEnv/2023' {NOT_AT_SPACKY}"]),
    # a range quoted: one unknown name (no module system reads `>=`)
    "range-quoted": Case("module load 'GCC/>=12'\n",
                         ["software 'GCC/>=12' not installed (only GCC/12.3.0, GCC/13.2.0)"],
                         [f"software 'GCC/>=12' {NOT_AT_SPACKY}"]),
    # Lmod: `The following module(s) are unknown: "GCC/12.3.0,13.2.0"` (Environment Modules
    # reads a list of versions after '@' only); before, it matched GCC/12.3.0
    "fault-versions-joined-after-slash": Case(
        "module load GCC/12.3.0,13.2.0\n",
        ["software 'GCC/12.3.0,13.2.0' not installed (only GCC/12.3.0, GCC/13.2.0; versions "
         "joined by ',' after '/' are one name to module load: name one version (a list is "
         "read only after '@', GCC@12.3.0,13.2.0, by Environment Modules with "
         "advanced_version_spec))"],
        ["software 'GCC/12.3.0,13.2.0' not installed (site has: none; versions joined by ',' "
         "after '/' are one name to module load: name one version (a list is read only after "
         "'@', GCC@12.3.0,13.2.0, by Environment Modules with advanced_version_spec))"]),
    # unquoted, the shell reads `>=12` as a redirection to the file `=12`: `gcc/` loads the
    # default gcc (GCC/13.2.0 here), which is said
    "fault-range-unquoted-is-a-redirection": Case(
        "module load gcc/>=12\n", spacky=[f"software 'gcc/' {NOT_AT_SPACKY}"],
        note="module gcc/ (line 1): the '>' right after it is a redirection of the shell, not "
             "part of the version"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_software_cases(name: str) -> None:
    case = CASES[name]
    n = needs(case.body)
    assert needs_reasons(n, SITE) == case.site
    assert needs_reasons(n, SPACKY) == case.spacky
    if case.note:
        assert any(case.note in x for x in n.notes), n.notes


def test_fault_versions_joined_after_slash_are_not_rewritten():
    """The rewrite used to turn `GCC/12.3.0,13.2.0` into the site's GCC/12.3.0."""
    body = "module load GCC/12.3.0,13.2.0\n"
    assert rewrite_modules(body, SITE) == (body, [])


def test_a_version_list_after_at_is_still_environment_modules_list():
    """`GCC@12.3.0,13.2.0`: one of the versions listed (advanced_version_spec)."""
    assert needs_reasons(needs("module load GCC@12.3.0,13.2.0\n"), SITE) == []
    assert needs_reasons(needs("module load GCC@11.1.0,11.3.0\n"), SITE) == [
        "software 'GCC@11.1.0,11.3.0' not installed (only GCC/12.3.0, GCC/13.2.0)"]


# -- hidden modules: discovery lists them, a job's are checked ---------------------------------

def discover(shell: str):
    """The real discovery command, run by bash with `module` defined by `shell`."""
    r = subprocess.run(["bash", "-c", shell + discovery_script({})], capture_output=True,
                       text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
    parts, codes = split_sections(r.stdout)
    return describe_from_outputs("s", SlurmCommands(), parts, codes, [], []).capabilities


LISTING = '"/sw/mods:\\npython/.3.14.0-beta\\npython/3.11.6\\npython/3.13.0\\n"'
VISIBLE = '"/sw/mods:\\npython/3.11.6\\n"'
# Lmod as a bash function: `--show_hidden` lists the dotted version
LMOD = ('module() { case "$*" in\n'
        f'  "-t avail") printf {VISIBLE} >&2 ;;\n'
        f'  "--show_hidden -t avail") printf {LISTING} >&2 ;;\n'
        '  *) ;;\nesac; }\nexport LMOD_VERSION=8.7.32\n')


def env_modules(release: str, all_fails: bool = False) -> str:
    """Environment Modules as a bash function: `--all` (4.6 and later) lists hidden ones."""
    listing = "echo 'ERROR: Invalid option --all' >&2; return 1" if all_fails else \
        f"printf {LISTING} >&2"
    return ('module() { case "$*" in\n'
            f'  "--version") echo "Modules Release {release} (2021-01-01)" >&2 ;;\n'
            f'  "-t avail") printf {VISIBLE} >&2 ;;\n'
            f'  "-t avail --all") {listing} ;;\n'
            '  *) ;;\nesac; }\n')


def test_fault_lmods_hidden_listing_checks_a_jobs_hidden_module():
    caps = discover(LMOD)
    assert caps.hidden_modules == ["python/.3.14.0-beta"]
    assert [m.full for m in caps.software or []] == ["python/3.11.6", "python/3.13.0"]
    assert needs_reasons(needs("module load python/.3.14.0-beta\n"), caps) == []
    assert needs_reasons(needs("module load python/.3.15.0-beta\n"), caps) == [
        "software 'python/.3.15.0-beta' not installed (a hidden module: the site's hidden "
        "python modules are python/.3.14.0-beta)"]
    assert needs_reasons(needs("ml .cuda-preview/13.0\n"), caps) == [
        "software '.cuda-preview/13.0' not installed (a hidden module: the site lists 1 hidden "
        "module, none of .cuda-preview)"]


def test_fault_environment_modules_4_6_lists_hidden_ones_with_all():
    caps = discover(env_modules("4.6.1"))
    assert caps.module_system == "environment-modules"
    assert caps.hidden_modules == ["python/.3.14.0-beta"]
    assert [m.full for m in caps.software or []] == ["python/3.11.6", "python/3.13.0"]
    assert needs_reasons(needs("module load python/3.13.0\n"), caps) == []
    assert needs_reasons(needs("module load python/.3.15.0-beta\n"), caps) != []


def test_environment_modules_before_4_6_lists_no_hidden_ones_so_none_is_checked():
    """Before 4.6 `--all` does not exist: the visible listing only, a hidden name unchecked."""
    caps = discover(env_modules("4.5.3"))
    assert caps.hidden_modules is None
    assert [m.full for m in caps.software or []] == ["python/3.11.6"]
    assert needs_reasons(needs("module load python/.3.15.0-beta\n"), caps) == []


def test_a_refused_all_option_leaves_hidden_modules_unknown():
    caps = discover(env_modules("5.4.0", all_fails=True))
    assert caps.hidden_modules is None
    assert needs_reasons(needs("module load python/.3.15.0-beta\n"), caps) == []


def test_a_hidden_module_in_a_branch_stays_unchecked():
    caps = discover(LMOD)
    n = needs("if [ -n \"$BETA\" ]; then\n  module load python/.3.15.0-beta\nfi\n")
    assert [s.unchecked for s in n.software] == ["loaded only in a branch or function (line 2)"]
    assert needs_reasons(n, caps) == []


def test_a_listing_longer_than_the_bound_is_cut_and_leaves_software_unknown():
    """A listing past MODULE_LIST_LINES lines: only that many are read, and the site's
    software is not known (a module past the cut would otherwise be refused)."""
    many = ('module() { if [ "$*" = "--show_hidden -t avail" ]; then '
            f'seq -f "m%g/1" 1 {MODULE_LIST_LINES + 5} >&2; fi; }}\n'
            'export LMOD_VERSION=8.7.32\n')
    caps = discover(many)
    assert caps.software is None and caps.hidden_modules is None
    assert any(f"the listing was cut at {MODULE_LIST_LINES} lines" in e for e in caps.errors)
    assert needs_reasons(needs("module load m60000/1\n"), caps) == []
    small = site("small", modules="system lmod 8.7.32\n@@hidden\n/sw:\npython/.3.1\nx/1\n")
    assert small.hidden_modules == ["python/.3.1"]

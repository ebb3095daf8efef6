"""Software environments, seventh sweep: what Lmod and Environment Modules print to the real
discovery command (run by bash, `module` a shell function answering as each does), and job
bodies checked against it as a user expects them to run. The Lmod site lists a Core tree
with defaults marked `(default)`, a hidden `python/.3.14-beta`, EasyBuild toolchains whose
versions hold letters (`foss/2023a`), names holding '/' and '-' (`apps/gromacs/2023.3`,
`py-numpy/1.26.4-gcc-12.3.0`, `nvhpc-hpcx-cuda12/24.3`), and a hierarchy `module -t spider`
shows (openmpi under a gcc, hdf5 under gcc + openmpi); Environment Modules 5 marks its
defaults as symbolic versions and its tags in `<...>`.

Faults found and fixed, each with its test marked `fault`: `module load Python/3.11`, where
the site has both `Python/3.11.3-GCCcore-12.3.0` and `python/3.11.6`, was rewritten to the
other spelling's `python/3.11.6` (module load, case-sensitive, finds Python/3.11.3-...);
an Lmod whose `module -t spider` failed (its cache not built) had its avail listing taken
as all its software, so a job loading a module its hierarchy shows once gcc is loaded was
refused as "not installed"; `module load gcc/12.3.0 openmpi/4.1.6 gcc/13.2.0` passed,
though Lmod swaps gcc and keeps openmpi/4.1.6 inactive (none under gcc/13.2.0): the job ran
without its MPI."""

from __future__ import annotations

import pytest
from test_software_unseen4 import needs
from test_software_unseen6 import discover

from diamond_jupyter.software import needs_reasons, rewrite_modules

AVAIL = """/apps/mods/Core:
apps/gromacs/2023.3
cuda/11.8.0
cuda/12.4.1(default)
foss/2023a
foss/2023b(default)
gcc/12.3.0
gcc/13.2.0(default)
intel-oneapi-compilers/2023.2.1
nvhpc-hpcx-cuda12/24.3
py-numpy/1.26.4-gcc-12.3.0
Python/3.11.3-GCCcore-12.3.0
python/.3.14-beta
python/3.11.6
R/4.3.2-gfbf-2023a
/apps/mods/Linux:
StdEnv/2023
"""
VISIBLE = AVAIL.replace("python/.3.14-beta\n", "")
SPIDER = "".join(ln + "\n" for ln in AVAIL.splitlines() if not ln.endswith(":")) + \
    "openmpi/4.1.6\nopenmpi/5.0.3\nhdf5/1.14.3\n"
# what each module of the hierarchy needs loaded first, as `module spider NAME` says it
NEEDS_FIRST = {"openmpi/4.1.6": "gcc/12.3.0", "openmpi/5.0.3": "gcc/13.2.0",
               "hdf5/1.14.3": "gcc/13.2.0  openmpi/5.0.3"}


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def lmod(spider: str = "") -> str:
    """Lmod 8.7 as a bash function; `spider`: its `-t spider` answer, else the hierarchy's."""
    one = "".join(
        f'  "spider {name}") printf "%s\\n" "" "  {name}:" "" "    You will need to load all '
        f'module(s) on any one of the lines below before the \\"{name}\\" module is available '
        f'to load." "" "      {first}" "" ;;\n' for name, first in NEEDS_FIRST.items())
    listing = spider or f'printf "%s" {_quoted(SPIDER)} >&2'
    return ('module() { case "$*" in\n'
            f'  "-t avail") printf "%s" {_quoted(VISIBLE)} >&2 ;;\n'
            f'  "--show_hidden -t avail") printf "%s" {_quoted(AVAIL)} >&2 ;;\n'
            f'  "-t spider") {listing} ;;\n' + one +
            '  *) ;;\nesac; }\nexport LMOD_VERSION=8.7.37\n')


@pytest.fixture(scope="module")
def site():
    return discover(lmod())


def test_the_listing_reads_defaults_hidden_ones_and_the_hierarchy(site):
    got = {m.full: (m.default, m.requires) for m in site.software}
    assert got["foss/2023b"] == (True, []) and got["foss/2023a"] == (False, [])
    assert got["cuda/12.4.1"][0] and got["gcc/13.2.0"][0] and not got["gcc/12.3.0"][0]
    assert got["hdf5/1.14.3"] == (False, [["gcc/13.2.0", "openmpi/5.0.3"]])
    assert got["openmpi/4.1.6"][1] == [["gcc/12.3.0"]]
    assert site.hidden_modules == ["python/.3.14-beta"]
    assert site.module_trees == ["/apps/mods/Core", "/apps/mods/Linux"]


NOT_HERE = ("site has: apps/gromacs/2023.3, cuda/11.8.0, cuda/12.4.1, foss/2023a, foss/2023b, "
            "gcc/12.3.0, gcc/13.2.0, hdf5/1.14.3, ... (9 more)")

# body -> the reasons the site cannot run it ([]: it runs)
CASES = {
    "letter-version": ("module load foss/2023a\n", []),
    "letter-version-missing": ("module load foss/2023c\n",
                               ["software 'foss/2023c' not installed (only foss/2023a, "
                                "foss/2023b)"]),
    "bare-name-takes-the-default": ("module load foss\n", []),
    "easybuild-suffix": ("ml R/4.3.2-gfbf-2023a\n", []),
    "easybuild-newer-release-missing": ("module load R/4.4.0-gfbf-2023a\n",
                                        ["software 'R/4.4.0-gfbf-2023a' not installed (only "
                                         "R/4.3.2-gfbf-2023a)"]),
    "name-with-slashes": ("module load apps/gromacs/2023.3\n", []),
    "name-with-slashes-directory": ("module load apps/gromacs\n", []),
    "name-with-slashes-missing-version": ("module load apps/gromacs/2024.1\n",
                                          ["software 'apps/gromacs/2024.1' not installed "
                                           "(only apps/gromacs/2023.3)"]),
    "spack-name-with-dashes": ("module load py-numpy/1.26.4-gcc-12.3.0\n", []),
    "dashed-name-missing-version": ("module load intel-oneapi-compilers/2024.0.0\n",
                                    ["software 'intel-oneapi-compilers/2024.0.0' not "
                                     "installed (only intel-oneapi-compilers/2023.2.1)"]),
    "dashed-name-default": ("module load nvhpc-hpcx-cuda12\n", []),
    # a part of a dashed name is not that name: no `nvhpc` or `intel` module here
    "part-of-a-dashed-name-is-not-it": ("module load nvhpc/24.3\n",
                                        [f"software 'nvhpc/24.3' not installed ({NOT_HERE})"]),
    "intel-is-not-intel-oneapi-compilers": ("module load intel/2023.2.1\n",
                                            [f"software 'intel/2023.2.1' not installed "
                                             f"({NOT_HERE})"]),
    "software-the-site-lacks": ("module load gaussian/g16.c01\n",
                                [f"software 'gaussian/g16.c01' not installed ({NOT_HERE})"]),
    "hidden-module-by-its-name": ("module load python/.3.14-beta\n", []),
    "hierarchy-in-order": ("module load gcc/13.2.0 openmpi/5.0.3\n", []),
    "hierarchy-defaults": ("module load gcc openmpi\n", []),
    "hierarchy-three-levels": ("ml gcc/13.2.0 openmpi/5.0.3 hdf5/1.14.3\n", []),
    "hierarchy-parent-missing": ("module load openmpi/5.0.3\n",
                                 ["software 'openmpi/5.0.3' (openmpi/5.0.3) needs gcc/13.2.0 "
                                  "loaded first (Lmod's hierarchy shows it only then); the "
                                  "script loads before it: none"]),
    # the other compiler's openmpi: conflicting versions across the hierarchy
    "hierarchy-other-compiler": ("module load gcc/13.2.0 openmpi/4.1.6\n",
                                 ["software 'openmpi/4.1.6' (openmpi/4.1.6) needs gcc/12.3.0 "
                                  "loaded first (Lmod's hierarchy shows it only then); the "
                                  "script loads before it: gcc/13.2.0"]),
    "hierarchy-swap-first": ("module swap gcc/13.2.0 gcc/12.3.0\nmodule load openmpi/4.1.6\n",
                             []),
    "hierarchy-wrong-mpi-under-it": ("module load gcc/12.3.0 hdf5/1.14.3\n",
                                     ["software 'hdf5/1.14.3' (hdf5/1.14.3) needs gcc/13.2.0 + "
                                      "openmpi/5.0.3 loaded first (Lmod's hierarchy shows it "
                                      "only then); the script loads before it: gcc/12.3.0"]),
    # two versions of one module: the second replaces the first, both exist
    "two-versions-both-here": ("module load gcc/12.3.0 gcc/13.2.0\n", []),
    "two-versions-one-missing": ("module load python/3.11.6 python/3.12.1\n",
                                 ["software 'python/3.12.1' not installed (only "
                                  "Python/3.11.3-GCCcore-12.3.0, python/3.11.6)"]),
    "second-tree": ("module load StdEnv/2023\n", []),
    # the same gcc again, or a bare gcc (the loaded one kept): openmpi stays
    "same-version-again": ("ml gcc/12.3.0 openmpi/4.1.6 gcc/12.3.0\n", []),
    "bare-name-after": ("module load gcc/12.3.0 openmpi/4.1.6 gcc\n", []),
    # a later line may follow an unload or purge, which is not followed: not said
    "other-version-on-a-later-line": ("module load gcc/12.3.0 openmpi/4.1.6\n"
                                      "module load gcc/13.2.0\n", []),
}


@pytest.mark.parametrize("name", list(CASES))
def test_lmod_site_cases(site, name):
    body, reasons = CASES[name]
    assert needs_reasons(needs(body), site) == reasons


@pytest.mark.parametrize("written,site_names", [
    ("module load Python/3.11\n", "Python/3.11.3-GCCcore-12.3.0"),
    ("module load python/3.11\n", "python/3.11.6"),
    ("module load apps/gromacs/2023\n", "apps/gromacs/2023.3"),
    ("module load R/4.3\n", "R/4.3.2-gfbf-2023a"),
])
def test_fault_a_short_version_is_spelled_as_the_module_of_the_name_written(site, written,
                                                                          site_names):
    """`Python/3.11` became python/3.11.6 (the highest of either spelling), not the
    Python/3.11.3-GCCcore-12.3.0 module load itself finds."""
    body, notes = rewrite_modules(written, site)
    assert body == f"module load {site_names}\n"
    assert notes == [f"rewrote: body line 1: module {written.split()[-1]} -> {site_names} "
                     "(as s names it)"]


def test_a_name_the_site_spells_so_already_is_left_as_written(site):
    for body in ("module load foss/2023a\n", "module load nvhpc-hpcx-cuda12\n",
                 "module load python/.3.14-beta\n"):
        assert rewrite_modules(body, site) == (body, [])


def test_fault_a_failed_spider_leaves_the_sites_software_unchecked():
    """`module -t spider` failing (Lmod could not build its cache) left the avail listing as
    all the site had: openmpi, which the hierarchy shows once gcc is loaded, was "not
    installed" and the job refused."""
    caps = discover(lmod('echo "Lmod has detected the following error: Unable to build the '
                         'spider cache" >&2; return 1'))
    assert caps.software is None
    assert any("`module -t spider` failed" in e and "not checked" in e for e in caps.errors)
    assert needs_reasons(needs("module load gcc/13.2.0 openmpi/5.0.3\n"), caps) == []


def test_a_spider_that_answers_nothing_new_keeps_the_listing(site):
    caps = discover(lmod(f'printf "%s" {_quoted(VISIBLE)} >&2'))
    assert caps.software is not None and "openmpi/5.0.3" not in {m.full for m in
                                                                 caps.software}
    assert not any("spider" in e for e in caps.errors)


ENV_MODULES_5 = ('module() { case "$*" in\n'
                 '  "--version") echo "Modules Release 5.4.0 (2024-02-20)" >&2 ;;\n'
                 '  "-t avail --all") printf "%s\\n" "/usr/share/modulefiles:" "gcc/12.3.0" '
                 '"gcc/13.2.0(default:latest)" "cuda/12.4.1 <sticky>" '
                 '"foss/2023b(2023:default)" "mpi/openmpi-x86_64" "null" >&2 ;;\n'
                 '  *) ;;\nesac; }\n')


@pytest.mark.parametrize("body,reasons", [
    ("module load gcc\n", []),
    ("module load cuda/12.4.1\n", []),
    ("module load mpi/openmpi-x86_64\n", []),
    ("module load foss/2023a\n", ["software 'foss/2023a' not installed (only foss/2023b)"]),
    ("module load cuda/11.8\n", ["software 'cuda/11.8' not installed (only cuda/12.4.1)"]),
])
def test_environment_modules_5_symbolic_versions_and_tags(body, reasons):
    caps = discover(ENV_MODULES_5)
    assert caps.module_system == "environment-modules"
    assert {m.full: m.default for m in caps.software} == {
        "cuda/12.4.1": False, "foss/2023b": True, "gcc/12.3.0": False, "gcc/13.2.0": True,
        "mpi/openmpi-x86_64": False, "null": False}
    assert needs_reasons(needs(body), caps) == reasons


def test_fault_a_compiler_swapped_on_the_same_line_leaves_its_mpi_inactive(site):
    assert needs_reasons(needs("module load gcc/12.3.0 openmpi/4.1.6 gcc/13.2.0\n"), site) == [
        "software 'openmpi/4.1.6' (openmpi/4.1.6) is unloaded again when the same line loads "
        "gcc/13.2.0 in place of gcc/12.3.0: Lmod then keeps it inactive (it needs "
        "gcc/12.3.0); leave gcc/13.2.0 out, or load it first, then the openmpi built with it"]
    # three levels: hdf5 needs the gcc/13.2.0 + openmpi/5.0.3 that a later gcc/12.3.0 swaps
    assert needs_reasons(needs("ml gcc/13.2.0 openmpi/5.0.3 hdf5/1.14.3 gcc/12.3.0\n"),
                         site) == [
        "software 'openmpi/5.0.3' (openmpi/5.0.3) is unloaded again when the same line loads "
        "gcc/12.3.0 in place of gcc/13.2.0: Lmod then keeps it inactive (it needs "
        "gcc/13.2.0); leave gcc/12.3.0 out, or load it first, then the openmpi built with it",
        "software 'hdf5/1.14.3' (hdf5/1.14.3) is unloaded again when the same line loads "
        "gcc/12.3.0 in place of gcc/13.2.0: Lmod then keeps it inactive (it needs gcc/13.2.0 "
        "+ openmpi/5.0.3); leave gcc/12.3.0 out, or load it first, then the hdf5 built with it"]

"""Software environments, fourteenth sweep: bodies as users write them (modules loaded in a
function or an `if`, after `source /etc/profile.d/modules.sh`, `module --ignore_cache`,
Apptainer run after its module), placed against four sites, each answer worked out by
hand: a Spack-generated Lmod 8.7 tree (names holding `+` and `@`, a prerequisite choice of
three lines, a module hidden by `hide_version`, a bundle's extensions), an Environment
Modules 5.3 site (`<H>`, `<L>` tags, Apptainer only as a module), a site with Lmod and an
empty MODULEPATH, and one with no module system at all; and the real Lmod of this machine.

Faults found and fixed, each with its test marked `fault` that failed before:
- A module Lmod's `hide_version` hid (`tool/2.0`, not dotted) loads only by its whole
  name, but Lmod's `--show_hidden -t avail` does not mark it: `module load tool` (which
  Lmod refuses, "unknown") passed. The discovery now marks `<H>` what the plain listing
  leaves out; `<H>`/`(H)`/`<hidden>` marks make a module loadable by its whole name only,
  and a shorter name is refused saying so.
- Lmod's `module -t spider` lists each extension as a module (`numpy/1.25.1`): a job's
  `module load numpy/1.25.1`, which Lmod refuses ("exist but cannot be loaded as
  requested"), passed as is. Its spider answer ("This extension is provided by the
  following modules") now makes it an extension: the load is spelt as its bundle
  (rewrite) where a bundle provides it, refused otherwise.
- A sites file copied from `module avail` kept `cuda/12.2.0 (H)`, `pmix/4.2.9 <H:L>` as
  visible modules: their hidden mark now holds there too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_software_unseen4 import needs, site
from test_software_unseen9 import _real_lmod, _tree, needs_lmod

from diamond_jupyter.capabilities import from_metadata
from diamond_jupyter.discovery import parse_module_list
from diamond_jupyter.software import needs_reasons, rewrite_modules

# Lmod 8.7 as the discovery asks it: `--show_hidden -t avail` with what the plain listing
# leaves out marked <H>, `(L)` where the login loaded one, `-t --default avail`, `-t
# spider` and `spider NAME/VERSION` for each module avail does not list
LMOD = """system lmod 8.7.37
/apps/spack/modules/linux-rocky9-x86_64/Core:
apptainer/1.2.5
cuda/11.8.0
cuda/12.2.0 <H>
gcc/12.2.0(L)
gcc/13.2.0
py-numpy/1.26.4-gcc-12.2.0-abcdef
boost/1.83.0+python-gcc-12.2.0
miniforge3@24.3.0
SciPy-bundle/2023.07
@@hidden
@@defaults
cuda/11.8.0(D)
gcc/13.2.0(D)
@@sticky
@@spider
SciPy-bundle/2023.07
gcc/12.2.0
gcc/13.2.0
netcdf-c/4.9.2
numpy/1.25.1
openmpi/4.1.6
@@requires netcdf-c/4.9.2
----------------------------------------------------------------------------
  netcdf-c: netcdf-c/4.9.2
----------------------------------------------------------------------------

    You will need to load all module(s) on any one of the lines below before the
    "netcdf-c/4.9.2" module is available to load.

      gcc/12.2.0  openmpi/4.1.6
      gcc/13.2.0  openmpi/4.1.6
      intel/2021.10  impi/2021.10

    Help:
      NetCDF C library
@@requires numpy/1.25.1
----------------------------------------------------------------------------
  numpy: numpy/1.25.1 (E)
----------------------------------------------------------------------------
    This extension is provided by the following modules. To access the extension you
    must load one of the following modules.

       SciPy-bundle/2023.07

Names marked by a trailing (E) are extensions provided by another module.
@@requires openmpi/4.1.6
    You will need to load all module(s) on any one of the lines below before the
    "openmpi/4.1.6" module is available to load.

      gcc/12.2.0
      gcc/13.2.0
"""
# Environment Modules 5.3 `module -t avail --all`: tags abbreviated (`<L>` loaded, `<H>`
# hidden by `module-hide`), the default a symbolic version
EM = """system environment-modules 5.3.1
/usr/share/modulefiles:
mpi/openmpi-x86_64(default) <L>
apptainer/1.3.4
pmix/4.2.9 <H>
/opt/site/modulefiles:
lammps/2Aug2023
@@hidden
"""
EMPTY_LMOD = "system lmod 8.7.37\nNo module(s) or extension(s) found!\n@@hidden\n@@defaults\n" \
    "@@sticky\n@@spider\n"
SITES = {"spack": site("spack", modules=LMOD), "em": site("em", modules=EM),
         "empty": site("empty", modules=EMPTY_LMOD), "bare": site("bare")}


def placed(body: str) -> dict[str, list[str]]:
    return {name: needs_reasons(needs(body), caps) for name, caps in SITES.items()}


def none_at(*names: str) -> list[str]:
    """The reasons of the two sites with no module to load (an empty MODULEPATH, none)."""
    return [f"software '{n}' not installed (site has: none)" for n in names]


SPACK_HAS = "site has: apptainer/1.2.5, boost/1.83.0+python-gcc-12.2.0, cuda/11.8.0, " \
    "cuda/12.2.0, gcc/12.2.0, gcc/13.2.0, miniforge3@24.3.0, netcdf-c/4.9.2, ... (3 more)"
EM_HAS = "site has: apptainer/1.3.4, lammps/2Aug2023, mpi/openmpi-x86_64, pmix/4.2.9"


def elsewhere(has: dict[str, str], *names: str) -> dict[str, list[str]]:
    return {s: [f"software '{n}' not installed ({h})" for n in names] for s, h in has.items()}


CASES = {
    # Spack's generated names: `+` in a version, `@` kept whole, a version prefix
    "spack-names": (
        "module load gcc/12.2.0 py-numpy/1.26.4 boost/1.83.0+python-gcc-12.2.0 "
        "miniforge3@24.3.0\n", {
            "spack": [], **elsewhere({"em": EM_HAS}, "gcc/12.2.0", "py-numpy/1.26.4",
                                     "boost/1.83.0+python-gcc-12.2.0", "miniforge3@24.3.0"),
            **{s: none_at("gcc/12.2.0", "py-numpy/1.26.4", "boost/1.83.0+python-gcc-12.2.0",
                          "miniforge3@24.3.0") for s in ("empty", "bare")}}),
    "spack-hash-of-another-build": ("module load py-numpy/1.26.4-gcc-13.2.0-zzzzzz\n", {
        "spack": ["software 'py-numpy/1.26.4-gcc-13.2.0-zzzzzz' not installed (only "
                  "py-numpy/1.26.4-gcc-12.2.0-abcdef)"],
        **elsewhere({"em": EM_HAS}, "py-numpy/1.26.4-gcc-13.2.0-zzzzzz"),
        **{s: none_at("py-numpy/1.26.4-gcc-13.2.0-zzzzzz") for s in ("empty", "bare")}}),
    # spider names three lines of prerequisites: any one of them loaded first does
    "spider-second-line-loaded": ("module load gcc/13.2.0 openmpi/4.1.6 netcdf-c/4.9.2\n", {
        # em's `mpi/openmpi-x86_64` (the distribution's, no version said) is an openmpi
        "spack": [], **elsewhere({"em": EM_HAS}, "gcc/13.2.0", "netcdf-c/4.9.2"),
        **{s: none_at("gcc/13.2.0", "openmpi/4.1.6", "netcdf-c/4.9.2")
           for s in ("empty", "bare")}}),
    "spider-no-line-complete": ("module load gcc/13.2.0\nmodule load netcdf-c/4.9.2\n", {
        "spack": ["software 'netcdf-c/4.9.2' (netcdf-c/4.9.2) needs gcc/12.2.0 + openmpi/4.1.6 "
                  "or gcc/13.2.0 + openmpi/4.1.6 or intel/2021.10 + impi/2021.10 loaded first "
                  "(Lmod's hierarchy shows it only then); the script loads before it: "
                  "gcc/13.2.0"],
        **elsewhere({"em": EM_HAS}, "gcc/13.2.0", "netcdf-c/4.9.2"),
        **{s: none_at("gcc/13.2.0", "netcdf-c/4.9.2") for s in ("empty", "bare")}}),
    # the loads in a function the script calls are read as its own
    "loads-in-a-function": (
        "setup_env() {\n  module purge\n  module load gcc/13.2.0 openmpi/4.1.6\n}\n"
        "setup_env\nsrun ./a.out\n", {
            "spack": [], **elsewhere({"em": EM_HAS}, "gcc/13.2.0"),
            **{s: none_at("gcc/13.2.0", "openmpi/4.1.6") for s in ("empty", "bare")}}),
    # a load in one branch of an `if` on anything but the cluster's name may not run
    "loads-in-an-if": ('if [ -n "$USE_GPU" ]; then\n  module load cuda/12.4.0\nfi\n', {
        "spack": [], "em": [], "empty": [], "bare": []}),
    "source-modules-sh-then-load": (
        "source /etc/profile.d/modules.sh\nmodule load lammps/2Aug2023\n", {
            "em": [], **elsewhere({"spack": SPACK_HAS}, "lammps/2Aug2023"),
            **{s: none_at("lammps/2Aug2023") for s in ("empty", "bare")}}),
    "ignore-cache-avail-and-load": (
        "module --ignore_cache avail 2>&1 | head\nmodule --ignore_cache load gcc/12.2.0\n", {
            "spack": [], **elsewhere({"em": EM_HAS}, "gcc/12.2.0"),
            **{s: none_at("gcc/12.2.0") for s in ("empty", "bare")}}),
    # Apptainer on no login's PATH: only as a module, which the job must load
    "apptainer-without-its-module": ("apptainer exec --nv image.sif python run.py\n", {
        "spack": ["container image.sif needs a container runtime, site has none on its PATH "
                  "(its modules apptainer/1.2.5 have one: module load it first)"],
        "em": ["container image.sif needs a container runtime, site has none on its PATH "
               "(its modules apptainer/1.3.4 have one: module load it first)"],
        **{s: ["container image.sif needs a container runtime, site has none"]
           for s in ("empty", "bare")}}),
    "apptainer-after-its-module": (
        "module load apptainer\napptainer exec image.sif python run.py\n", {
            "spack": [], "em": [],
            **{s: [*none_at("apptainer"), "container image.sif needs a container runtime, "
                   "site has none"] for s in ("empty", "bare")}}),
    # a module hidden by `module-hide`/`hide_version` loads by its whole name only
    "hidden-by-its-whole-name": ("module load pmix/4.2.9 cuda/12.2.0\n", {
        "spack": ["software 'pmix/4.2.9' not installed (site has: apptainer/1.2.5, boost/"
                  "1.83.0+python-gcc-12.2.0, cuda/11.8.0, cuda/12.2.0, gcc/12.2.0, gcc/13.2.0, "
                  "miniforge3@24.3.0, netcdf-c/4.9.2, ... (3 more))"],
        "em": ["software 'cuda/12.2.0' not installed (" + EM_HAS + ")"],
        **{s: none_at("pmix/4.2.9", "cuda/12.2.0") for s in ("empty", "bare")}}),
    "fault-hidden-by-a-shorter-name": ("module load pmix cuda/12\n", {
        "spack": ["software 'pmix' not installed (" + SPACK_HAS + ")",
                  "software 'cuda/12' not installed as named (cuda/12.2.0 is hidden at this "
                  "site: only `module load cuda/12.2.0`, its whole name, loads it)"],
        "em": ["software 'pmix' not installed as named (pmix/4.2.9 is hidden at this site: "
               "only `module load pmix/4.2.9`, its whole name, loads it)",
               "software 'cuda/12' not installed (" + EM_HAS + ")"],
        **{s: none_at("pmix", "cuda/12") for s in ("empty", "bare")}}),
    # `module load cuda` takes the visible default, 11.8.0, never the hidden one
    "hidden-is-never-the-default": ("module load cuda\n", {
        "spack": [], **elsewhere({"em": EM_HAS}, "cuda"),
        **{s: none_at("cuda") for s in ("empty", "bare")}}),
    # an extension the bundle provides: spelt as the bundle where it is (see the rewrite)
    "extension-loaded-by-name": ("module load numpy/1.25.1\n", {
        "spack": [], **elsewhere({"em": EM_HAS}, "numpy/1.25.1"),
        **{s: none_at("numpy/1.25.1") for s in ("empty", "bare")}}),
}


@pytest.mark.parametrize("body, where", CASES.values(), ids=CASES.keys())
def test_each_site_says_whether_it_has_what_the_job_loads(body, where):
    assert placed(body) == where


def test_the_lmod_listing_reads_its_marks_hidden_loaded_and_extensions():
    refused: list[str] = []
    hidden: list[str] = []
    extensions: list[str] = []
    system, version, mods = parse_module_list(LMOD, refused, hidden, extensions)
    assert (system, version, refused, hidden, extensions) == \
        ("lmod", "8.7.37", [], [], ["numpy/1.25.1"])
    got = {m.full: (m.default, m.hidden) for m in mods}
    assert got["cuda/12.2.0"] == (False, True) and got["cuda/11.8.0"] == (True, False)
    assert got["gcc/12.2.0"] == (False, False)  # `(L)`: loaded at the login, no default
    assert "numpy/1.25.1" not in got and got["SciPy-bundle/2023.07"] == (False, False)
    # Environment Modules' `<H>` after its symbolic version
    _, _, em = parse_module_list(EM)
    assert [(m.full, m.default, m.hidden) for m in em] == [
        ("apptainer/1.3.4", False, False), ("lammps/2Aug2023", False, False),
        ("mpi/openmpi-x86_64", True, False), ("pmix/4.2.9", False, True)]


def test_fault_an_extensions_load_is_spelt_as_the_bundle_that_provides_it():
    """Before: `numpy/1.25.1` from `module -t spider` was a module of its own, so the body
    kept a load Lmod refuses."""
    body, notes = rewrite_modules("#!/bin/bash\nmodule load numpy/1.25.1\npython a.py\n",
                                  SITES["spack"])
    assert body == "#!/bin/bash\nmodule load SciPy-bundle/2023.07\npython a.py\n"
    assert notes == ["rewrote: body line 2: module numpy/1.25.1 -> SciPy-bundle/2023.07 "
                     "(as spack names it)"]


def test_an_empty_module_listing_is_no_error_and_no_module():
    for name in ("empty", "bare"):
        caps = SITES[name]
        assert (caps.software, caps.errors) == ([], []), name
    assert (SITES["empty"].module_system, SITES["bare"].module_system) == ("lmod", None)


# -- the real Lmod of this machine ---------------------------------------------------------
LUA = 'whatis("a module written for the test")\n'


@pytest.fixture(scope="module")
def spack_tree(tmp_path_factory) -> Path:
    """A Spack-like tree: a bundle with extensions, a version hidden by `hide_version`."""
    return _tree(tmp_path_factory.mktemp("spack14"), {
        **{f"{m}.lua": LUA for m in ("cuda/11.8.0", "cuda/12.2.0", "tool/2.0",
                                     "py-numpy/1.26.4-gcc-12.2.0-abcdef",
                                     "boost/1.83.0+python-gcc-12.2.0")},
        "SciPy-bundle/2023.07.lua": LUA + 'extensions("numpy/1.25.1, scipy/1.11.1")\n',
        ".modulerc.lua": 'hide_version("cuda/12.2.0")\nhide_version("tool/2.0")\n'})


@needs_lmod
def test_fault_real_lmods_hide_version_is_found_and_loads_by_its_whole_name(spack_tree):
    caps = _real_lmod(spack_tree)
    assert caps.errors == []
    assert {m.full for m in caps.software if m.hidden} == {"cuda/12.2.0", "tool/2.0"}
    assert needs_reasons(needs("module load tool/2.0 cuda/12.2.0 cuda\n"), caps) == []
    assert needs_reasons(needs("module load tool\n"), caps) == [
        "software 'tool' not installed as named (tool/2.0 is hidden at this site: only "
        "`module load tool/2.0`, its whole name, loads it)"]


@needs_lmod
def test_fault_real_lmods_spider_lists_extensions_as_extensions(spack_tree):
    caps = _real_lmod(spack_tree)
    assert caps.extensions == ["numpy/1.25.1", "scipy/1.11.1"]
    assert "numpy/1.25.1" not in caps.module_names()
    body, _ = rewrite_modules("module load scipy/1.11.1\n", caps)
    assert body == "module load SciPy-bundle/2023.07\n"
    assert needs_reasons(needs("module load py-numpy/1.26.4 boost/1.83.0+python-gcc-12.2.0\n"),
                         caps) == []


def test_fault_a_sites_file_copied_from_module_avail_keeps_its_hidden_marks():
    """Before: `cuda/12.2.0 (H)` in a sites file was a visible module, so `module load
    cuda/12` passed where Lmod says "unknown"."""
    caps = from_metadata("listed", {"software": [
        "cuda/11.8.0 (D)", "cuda/12.2.0 (H)", "pmix/4.2.9 <H:L>", "gcc/13.2.0 (L,D)"]})
    assert [(m.full, m.hidden) for m in caps.software] == [
        ("cuda/11.8.0", False), ("cuda/12.2.0", True), ("pmix/4.2.9", True),
        ("gcc/13.2.0", False)]
    assert needs_reasons(needs("module load cuda/12.2.0 pmix/4.2.9 cuda gcc\n"), caps) == []
    assert needs_reasons(needs("module load cuda/12\n"), caps) == [
        "software 'cuda/12' not installed as named (cuda/12.2.0 is hidden at this site: only "
        "`module load cuda/12.2.0`, its whole name, loads it)"]

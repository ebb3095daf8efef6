"""Software environments, eighth sweep: what Lmod and Environment Modules print to the real
discovery command (run by bash, `module` a shell function and no program on the PATH, its
listing on stderr as Lmod writes it, or on stdout), and job bodies checked against it as a
user expects them to run: Lmod's extensions (`numpy/1.26.4 (E)`, in its spider listing),
default and hidden marks, builds under a version (`openmpi/4.1.6/gcc-13.2.0`), a `module`
function whose program is missing, names and descriptions outside ASCII (read through the
local transport, which decodes as the SSH one does), and placement choosing the site that
has the software.

Faults found and fixed, each with its test marked `fault` that failed before:
- Lmod's extensions (marked `(E)`: a package a module provides, never loaded by its own
  name) were read as modules: `module load pip/23.2.1` passed where it fails. They are now
  listed apart (`SiteCapabilities.extensions`) and such a load is refused saying it is an
  extension and what to do (one a known bundle holds, numpy in SciPy-bundle, is spelt as
  the bundle, as before for sites that do not list extensions).
- `module load openmpi/4.1.6/gcc-12` passed, and was rewritten to `openmpi/4.1.6/gcc-13.2.0`,
  where the site has only that build: the level past the version was not compared.
- A `module` function whose program is missing (`$LMOD_CMD` unset, a moved install)
  answered an error, read as an empty listing: every module load was refused as "not
  installed (site has: none)". Now the site's software is not known (not checked), and
  the error says what `module` answered.
- A listing's name outside ASCII was counted twice in discovery's errors (once from
  `module avail`, once from `module spider`).
- Placement said nothing of a site whose modules are not known (its loads not checked
  there), and took it over one whose listing has them on an equal finish when it came
  first in the sites file. Now `place --explain` says "SITE not checked: software ...", and
  such a site comes after one known to have the software on an equal finish.
"""

from __future__ import annotations

import asyncio

import pytest
from test_software_unseen4 import needs
from test_software_unseen6 import discover

from diamond_jupyter.capabilities import SiteCapabilities
from diamond_jupyter.cli.describe import describe_text
from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.discovery import (
    SiteDescription,
    discovery_script,
    parse_spider_requires,
    split_sections,
)
from diamond_jupyter.discovery_site import describe_from_outputs
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import Node, Partition, SiteSnapshot
from diamond_jupyter.placement import place
from diamond_jupyter.software import needs_reasons, rewrite_modules
from diamond_jupyter.transports.local import LocalTransport


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def lmod(avail: str, spider: str | None = None, *, hidden: str | None = None,
         to: str = ">&2") -> str:
    """Lmod 8.7 as a bash function printing its terse listings (`to`: Lmod's stderr, or
    stdout as with LMOD_REDIRECT); `hidden`: what `--show_hidden` adds."""
    shown = avail + (hidden or "")
    return ('module() { case "$*" in\n'
            f'  "-t avail") printf "%s" {_quoted(avail)} {to} ;;\n'
            f'  "--show_hidden -t avail") printf "%s" {_quoted(shown)} {to} ;;\n'
            f'  "-t spider") printf "%s" {_quoted(spider if spider is not None else shown)} '
            f'{to} ;;\n'
            '  *) ;;\nesac; }\nexport LMOD_VERSION=8.7.37\n')


# an EasyBuild site: Python's packages are extensions of its Python and SciPy-bundle
AVAIL = ("/cvmfs/soft/modules/all:\nGCC/13.2.0\nPython/3.11.5-GCCcore-13.2.0 (D)\n"
         "Python/3.10.8-GCCcore-12.2.0\nSciPy-bundle/2023.11-gfbf-2023b\n"
         "openmpi/4.1.6/gcc-13.2.0\nopenmpi/5.0.3/gcc-13.2.0 (L,D)\n")
SPIDER = (AVAIL.split(":\n", 1)[1] + "numpy/1.26.2 (E)\nscipy/1.11.4 (E)\n"
          "pip/23.2.1 (E)\n")


@pytest.fixture(scope="module")
def site() -> SiteCapabilities:
    return discover(lmod(AVAIL, SPIDER))


def test_the_listing_reads_defaults_builds_and_extensions_apart(site):
    got = {m.full: m.default for m in site.software}
    assert got == {"GCC/13.2.0": False, "Python/3.11.5-GCCcore-13.2.0": True,
                   "Python/3.10.8-GCCcore-12.2.0": False,
                   "SciPy-bundle/2023.11-gfbf-2023b": False,
                   "openmpi/4.1.6/gcc-13.2.0": False, "openmpi/5.0.3/gcc-13.2.0": True}
    assert site.extensions == ["numpy/1.26.2", "pip/23.2.1", "scipy/1.11.4"]
    assert not site.errors
    text = describe_text(SiteDescription(site="north", capabilities=site, clusters=[]))
    assert "  extensions (E):      numpy/1.26.2, pip/23.2.1, scipy/1.11.4  (no modules: " \
        "load the module that provides each)" in text.splitlines()


@pytest.mark.parametrize("body", ["module load pip/23.2.1\n", "ml pip\n",
                                  "module load Python pip/23.2\n"])
def test_fault_an_extension_is_no_module_to_load(site, body):
    """Before: `pip/23.2.1 (E)` was a module, so the load passed here and failed at the
    site ("The following module(s) are unknown")."""
    [why] = needs_reasons(needs(body), site)
    name = body.split()[-1]
    assert why.startswith(f"software '{name}' is an extension at this site (")
    assert "another module provides" in why and "module spider" in why


def test_the_module_an_extension_comes_with_loads(site):
    assert needs_reasons(needs("module load Python/3.11.5-GCCcore-13.2.0\n"), site) == []
    assert needs_reasons(needs("module load SciPy-bundle/2023.11-gfbf-2023b\n"), site) == []


def test_fault_an_extension_a_known_bundle_holds_is_loaded_as_that_bundle(site):
    """numpy 1.26.2 is in SciPy-bundle 2023.11 (EasyBuild's): the load is spelt as the
    bundle, which is a module, not refused as an extension. Before: `numpy/1.26.2 (E)` was
    a module of its own, so the load was left as written, and failed at the site."""
    body = "module load numpy/1.26.2\n"
    assert needs_reasons(needs(body), site) == []
    assert rewrite_modules(body, site)[0] == "module load SciPy-bundle/2023.11-gfbf-2023b\n"


def test_a_name_neither_module_nor_extension_is_not_installed(site):
    [why] = needs_reasons(needs("module load tensorflow/2.15\n"), site)
    assert why.startswith("software 'tensorflow/2.15' not installed (site has: ")


@pytest.mark.parametrize("body, reasons, rewritten", [
    ("module load openmpi/4.1.6\n", [], "module load openmpi/4.1.6\n"),
    ("module load openmpi/4.1.6/gcc-13.2.0\n", [], "module load openmpi/4.1.6/gcc-13.2.0\n"),
    ("module load openmpi/4.1.6/gcc-13\n", [], "module load openmpi/4.1.6/gcc-13.2.0\n"),
    ("module load openmpi/4.1.6/gcc-12\n",
     ["software 'openmpi/4.1.6/gcc-12' not installed (only openmpi/4.1.6/gcc-13.2.0, "
      "openmpi/5.0.3/gcc-13.2.0)"], "module load openmpi/4.1.6/gcc-12\n"),
    ("module load openmpi/5.0.3/intel-2023\n",
     ["software 'openmpi/5.0.3/intel-2023' not installed (only openmpi/4.1.6/gcc-13.2.0, "
      "openmpi/5.0.3/gcc-13.2.0)"], "module load openmpi/5.0.3/intel-2023\n"),
    ("module load openmpi/4.1.6/gcc-13.2.0/cuda\n",
     ["software 'openmpi/4.1.6/gcc-13.2.0/cuda' not installed (only openmpi/4.1.6/gcc-13.2.0, "
      "openmpi/5.0.3/gcc-13.2.0)"], "module load openmpi/4.1.6/gcc-13.2.0/cuda\n"),
])
def test_fault_a_build_under_a_version_is_compared_level_by_level(site, body, reasons,
                                                                  rewritten):
    """Before: `openmpi/4.1.6/gcc-12` matched `openmpi/4.1.6/gcc-13.2.0` on its version
    alone, passed and was rewritten to the other compiler's build."""
    assert needs_reasons(needs(body), site) == reasons
    assert rewrite_modules(body, site)[0] == rewritten


def test_lmods_hidden_marks_and_hidden_versions(site):
    """`--show_hidden` adds a module marked (H) (hidden by a modulerc, loadable by its name)
    and a dotted one; both load by name, an absent hidden version is refused."""
    caps = discover(lmod(AVAIL, hidden="GCC/14.1.0 (H)\nPython/.3.13.0-beta\n"))
    assert "GCC/14.1.0" in caps.module_names() and caps.hidden_modules == [
        "Python/.3.13.0-beta"]
    assert needs_reasons(needs("module load GCC/14.1.0 Python/.3.13.0-beta\n"), caps) == []
    assert needs_reasons(needs("module load Python/.3.14.0-beta\n"), caps) == [
        "software 'Python/.3.14.0-beta' not installed (a hidden module: the site's hidden "
        "Python modules are Python/.3.13.0-beta)"]


def test_a_listing_on_stdout_reads_as_on_stderr_and_warnings_are_no_modules():
    noisy = ("Lmod Warning: MODULEPATH directory /old/mods has no modules\n" + AVAIL
             + "WARNING: Unable to find the ModuleRC file\n")
    on_stderr = discover(lmod(AVAIL))
    on_stdout = discover(lmod(noisy, to=""))
    assert on_stdout.module_names() == on_stderr.module_names()
    assert on_stdout.module_trees == on_stderr.module_trees == ["/cvmfs/soft/modules/all"]
    assert not on_stdout.errors


@pytest.mark.parametrize("function, answer", [
    ('module() { eval "$(/opt/lmod/8.7/libexec/lmod bash "$@")"; }\n'
     'export LMOD_VERSION=8.7.37\n', "/opt/lmod/8.7/libexec/lmod: No such file or directory"),
    ('module() { eval "$($LMOD_CMD bash "$@")"; }\nexport LMOD_VERSION=8.7.37\n',
     "--show_hidden: invalid option"),
    ('module() { /usr/local/Modules/bin/modulecmd bash "$@"; }\n',
     "/usr/local/Modules/bin/modulecmd: No such file or directory"),
])
def test_fault_a_module_function_whose_program_is_missing_leaves_software_unknown(function,
                                                                                  answer):
    """`module` is a shell function (no program on the PATH) that runs a program this
    shell does not find. Before: its error was an empty listing, and `module load gcc`
    was refused as "not installed (site has: none)"."""
    caps = discover(function)
    assert caps.software is None
    [error] = [e for e in caps.errors if e.startswith("modules:")]
    assert "answered no module listing" in error and answer in error
    assert "not known (not checked)" in error
    assert needs_reasons(needs("module load gcc/13.2.0\n"), caps) == []


def test_a_module_system_with_no_modules_is_an_empty_listing_not_an_error():
    caps = discover(lmod("/cvmfs/soft/modules/all:\n", ""))
    assert caps.software == [] and not caps.errors
    assert needs_reasons(needs("module load gcc/13.2.0\n"), caps) == [
        "software 'gcc/13.2.0' not installed (site has: none)"]


# -- names and descriptions outside ASCII ---------------------------------------------------

def _through_the_local_transport(tmp_path, listing: bytes) -> SiteCapabilities:
    """The discovery command run by the local transport (bytes decoded as UTF-8 with
    replacement, as the SSH transport does), `module` printing `listing` as its avail
    and spider answers."""
    path = tmp_path / "listing"
    path.write_bytes(listing)
    function = ('module() { case "$*" in\n'
                f'  "--show_hidden -t avail"|"-t spider") cat {path} >&2 ;;\n'
                '  *) ;;\nesac; }\nexport LMOD_VERSION=8.7.37\n')
    res = asyncio.run(LocalTransport("s").run(["bash", "-c", function + discovery_script({})]))
    parts, codes = split_sections(res.stdout)
    return describe_from_outputs("s", SlurmCommands(), parts, codes, [], []).capabilities


def test_fault_names_outside_ascii_are_left_out_once_and_the_rest_read(tmp_path):
    """A Latin-1 `café/1.0` (not UTF-8) and a UTF-8 `réseau/2.1`: neither is a name module
    load takes here, both said once; the other modules are read."""
    caps = _through_the_local_transport(
        tmp_path, b"/apps/Core:\ngcc/13.2.0\ncaf\xe9/1.0\nr\xc3\xa9seau/2.1\nR/4.3.2\n")
    assert caps.module_names() == ["gcc/13.2.0", "R/4.3.2"]
    [error] = [e for e in caps.errors if e.startswith("modules:")]
    assert error.startswith("modules: 2 name(s) left out, holding characters no module name "
                            "has (first: caf")
    assert needs_reasons(needs("module load R/4.3\n"), caps) == []


def test_a_spider_answer_with_a_description_outside_ascii_gives_its_requirements():
    answer = ('@@requires hdf5/1.14.3\n\n  hdf5: hdf5/1.14.3\n\n    Description:\n'
              '      HDF5 \u2013 Hierarchical Data Format \u00a9 The HDF Group; f\u00fcr '
              'gro\u00dfe Daten \u6570\u636e\n\n'
              '    You will need to load all module(s) on any one of the lines below before '
              'the "hdf5/1.14.3" module is available to load.\n\n'
              '      GCC/13.2.0  openmpi/5.0.3/gcc-13.2.0\n      intel/2023b\n\n'
              '    Help:\n      \u00dcberblick: https://www.hdfgroup.org\n')
    assert parse_spider_requires(answer) == {
        "hdf5/1.14.3": [["GCC/13.2.0", "openmpi/5.0.3/gcc-13.2.0"], ["intel/2023b"]]}


# -- placement chooses the site that has the software ---------------------------------------

def _idle(site: str) -> tuple[SiteConfig, SiteSnapshot]:
    nodes = [Node(name=f"{site}{i}", state="idle", cpus=64, memory_mb=256000,
                  partitions=["main"], architecture="x86_64") for i in range(2)]
    return SiteConfig(name=site), SiteSnapshot(
        site=site, nodes=nodes, partitions=[Partition(name="main", default=True, total_nodes=2,
                                                      nodes=[n.name for n in nodes])])


def test_fault_placement_chooses_the_site_whose_listing_has_the_software(site):
    """Three idle sites: `north` (the EasyBuild listing above), `south` (Environment
    Modules 5 without that openmpi build) and `west` (whose `module` is broken: unknown,
    not refused). A job loading Python and openmpi/4.1.6/gcc-13.2.0 fits north and west,
    not south, which lacks that build; of north and west, equally soon, north, where the
    build is known to be. Before: west when listed first, and nothing said that its loads
    were not checked. With `module load pip` added, as a user writes it, north is refused
    too: pip is an extension there, no module."""
    south = discover('module() { case "$*" in\n'
                     '  "--version") echo "Modules Release 5.4.0 (2024-02-20)" >&2 ;;\n'
                     '  "-t avail --all") printf "%s\\n" "/usr/share/modulefiles:" '
                     '"gcc/13.2.0(default)" "openmpi/5.0.3" "python/3.11.6" >&2 ;;\n'
                     '  *) ;;\nesac; }\n')
    west = discover('module() { eval "$($LMOD_CMD bash "$@")"; }\nexport LMOD_VERSION=8.7\n')
    caps = {"north": site, "south": south, "west": west}
    sites = [_idle(name) for name in ("south", "west", "north")]
    spec = Federation.parse("#!/bin/bash\n#SBATCH -t 30\n#SBATCH -n 8\n"
                            "module load Python/3.11.5-GCCcore-13.2.0 "
                            "openmpi/4.1.6/gcc-13.2.0\nmpirun ./solver\n")
    plan = place(spec, sites, capabilities=caps)
    verdicts = {v.site: v for v in plan.ranked}
    assert verdicts["north"].feasible and verdicts["west"].feasible
    assert not verdicts["south"].feasible
    assert any("software 'openmpi/4.1.6/gcc-13.2.0' not installed (only openmpi/5.0.3)" in r
               for r in verdicts["south"].reasons)
    # an equal finish: the site known to have the build, before the one not known, in any
    # order of the sites file; the other's loads are said not checked
    for order in (("south", "west", "north"), ("west", "north", "south")):
        assert place(spec, [_idle(name) for name in order], capabilities=caps).choice == \
            "north"
    assert verdicts["north"].not_checked == []
    assert verdicts["west"].not_checked == [
        "software Python/3.11.5-GCCcore-13.2.0, openmpi/4.1.6/gcc-13.2.0: the site's modules "
        "are not known (`diamond describe west` says why)"]
    assert "west not checked: software Python/3.11.5" in plan.explain()
    with_pip = Federation.parse(spec.script.replace("mpirun", "module load pip\nmpirun"))
    verdicts = {v.site: v for v in place(with_pip, sites, capabilities=caps).ranked}
    assert any("'pip' is an extension at this site" in r for r in verdicts["north"].reasons)
    assert [name for name, v in verdicts.items() if v.feasible] == ["west"]

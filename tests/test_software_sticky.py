"""Sticky modules: a module the site made sticky (Lmod's `add_property("lmod", "sticky")`,
shown `(S)` by `module avail`) stays loaded through a plain `module purge` or `module
unload`; only `module --force purge` / `--force unload` takes it off (Lmod 8.6: `--force`
before the subcommand; after it, or `-f`, it keeps the module). Each case is checked against
what this machine's real Lmod loads.

Before: every `module purge` read as unloading all, so a library Lmod shows under a sticky
compiler the script loaded, then purged, was refused as needing the compiler loaded first."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_software_unseen4 import needs
from test_software_unseen9 import _real_lmod, _tree, needs_lmod
from test_software_unseen10 import LUA, _lmod_loads
from test_software_unseen11 import FFTW_NEEDS

from diamond_jupyter.capabilities import SiteCapabilities, from_metadata
from diamond_jupyter.discovery import parse_module_list
from diamond_jupyter.script_body import FORCED, PURGE_ALL, module_unloads
from diamond_jupyter.software import needs_reasons


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """Core: a sticky gcc 13 (opening fftw), a sticky StdEnv and a plain intel."""
    root = tmp_path_factory.mktemp("sticky")
    sticky = 'add_property("lmod", "sticky")\n'
    return _tree(root, {
        "Core/gcc/13.2.0.lua": 'family("compiler")\n' + sticky
        + f'prepend_path("MODULEPATH", "{root}/Compiler/gcc/13")\n',
        "Core/StdEnv/2023.lua": sticky, "Core/intel/2023.2.lua": LUA,
        "Compiler/gcc/13/fftw/3.3.10.lua": LUA})


@pytest.fixture(scope="module")
def site(tree) -> SiteCapabilities:
    return _real_lmod(tree / "Core")


@needs_lmod
def test_discovery_reads_which_modules_the_site_made_sticky(site):
    assert {m.full: m.sticky for m in site.software} == {
        "StdEnv/2023": True, "gcc/13.2.0": True, "intel/2023.2": False,
        "fftw/3.3.10": False}
    assert site.errors == []


@needs_lmod
@pytest.mark.parametrize("between", [
    "module purge", "ml purge", "module unload gcc", "ml -gcc", "module rm gcc/13.2.0",
    "module purge --force",  # (Lmod 8.6 forces only before the subcommand)
])
def test_a_sticky_compiler_stays_through_a_plain_purge_or_unload(site, tree, tmp_path,
                                                                  between):
    body = f"module load gcc/13.2.0\n{between}\nmodule load fftw/3.3.10\n"
    assert _lmod_loads(tree / "Core", tmp_path, body + " 2>/dev/null").split(":") == [
        "gcc/13.2.0", "fftw/3.3.10"]
    assert needs_reasons(needs(body), site) == []


@needs_lmod
@pytest.mark.parametrize("between", ["module --force purge", "ml --force purge",
                                     "module --force unload gcc", "ml --force -gcc"])
def test_a_forced_purge_or_unload_takes_the_sticky_compiler_off(site, tree, tmp_path,
                                                                between):
    body = f"module load gcc/13.2.0\n{between}\nmodule load fftw/3.3.10\n"
    assert "fftw" not in _lmod_loads(tree / "Core", tmp_path, body + " 2>/dev/null")
    assert needs_reasons(needs(body), site) == [
        f"{FFTW_NEEDS}none (gcc/13.2.0 unloaded again before it)"]


@pytest.mark.parametrize("cmd, gone", [
    ("module purge", [PURGE_ALL]),
    ("module --force purge", [FORCED + PURGE_ALL]),
    ("ml --force purge", [FORCED + PURGE_ALL]),
    ("module purge --force", [PURGE_ALL]),
    ("module -f purge", [PURGE_ALL]),
    ("module --force unload gcc mpi", [FORCED + "gcc", FORCED + "mpi"]),
    ("ml --force -gcc intel", [FORCED + "gcc"]),
    ("module --force swap gcc intel", [FORCED + "gcc"]),
])
def test_what_a_forced_module_command_unloads(cmd, gone):
    assert module_unloads(cmd.split()) == gone


@pytest.mark.parametrize("listing, sticky", [
    ("StdEnv/2023 (S,L)\ngcc/13.2.0 (D)\n", {"StdEnv/2023"}),
    ("StdEnv/2023(S)\n", {"StdEnv/2023"}),
    ("StdEnv/2023 <L:sticky>\ngcc/13.2.0 <super-sticky>\nintel/2023 <L>\n",
     {"StdEnv/2023", "gcc/13.2.0"}),
    ("gcc/13.2.0\n@@sticky\ngcc/13.2.0 (S)\n", {"gcc/13.2.0"}),
    ("gcc/13.2.0 (D)\nintel/2023 (L)\n", set()),
])
def test_listings_mark_sticky_modules(listing, sticky):
    _, _, modules = parse_module_list("system lmod 8.6.19\n" + listing)
    assert {m.full for m in modules if m.sticky} == sticky


def test_a_sites_file_listing_copied_from_module_avail_keeps_its_sticky_marks():
    caps = from_metadata("north", {"software": ["StdEnv/2023 (S,L)", "gcc/13.2.0 (D)",
                                                "env/1 <L:super-sticky>", "SCOTCH/7"]})
    assert [(m.full, m.default, m.sticky) for m in caps.software] == [
        ("StdEnv/2023", False, True), ("gcc/13.2.0", True, False), ("env/1", False, True),
        ("SCOTCH/7", False, False)]

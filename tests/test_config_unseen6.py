"""Sites files, sixth sweep, as centers and users write them: software lists copied from a
wiki (a blank inside a name, a `;` from a shell line, `module avail` marks and EasyBuild
versions), a port written as a string or a service name, a `module_init:` script, env
blocks with a key left empty or a number, `$HOME` and `~` in paths (the workdir and the
SSH key), a discovery cluster listed twice, a Globus path map without a collection id, and
metadata keys spelt near the ones placement reads. Each file's answer was worked out by
hand: what it builds (checked without connecting) or its one-line refusal naming the file,
the site, the key and what would be accepted; `diamond sites` exits 2 on it. The tests
marked `fault` failed before this sweep's fixes."""

from __future__ import annotations

from pathlib import Path

import pytest
import sweep_helpers
from test_config_unseen2 import loads, refused, write

from diamond_jupyter.capabilities import from_metadata
from diamond_jupyter.cli import main

d = sweep_helpers.key_dir


LOCAL = "sites:\n  - name: hpc\n    transport: {kind: local}\n"


def ssh(d: Path, lines: str = "") -> str:
    return ("sites:\n  - name: hpc\n    transport:\n      host: login.hpc.example.org\n"
            f"      key_file: {d}/id_ed25519\n      known_hosts: {d}/known_hosts\n"
            "      use_agent: false\n" + "".join(f"      {ln}\n" for ln in lines.splitlines()))


# -- 1-3. software lists ----------------------------------------------------------------------

def test_fault_a_software_name_with_a_blank_is_refused_naming_the_entry(d):
    """Copied from a wiki table: `python 3.11` (a blank, not a slash). It was kept as a
    module called "python 3.11" that no `module load python/3.11` ever matched."""
    msg = refused(d, LOCAL + "    metadata:\n      software: [gcc/12.2.0, python 3.11]\n")
    assert "site 'hpc' (sites[0]): metadata: software entry 2: 'python 3.11' is not a " \
           "module name: ' ' is not allowed (one module an entry" in msg
    assert "(line 4)" in msg


def test_fault_shell_text_in_a_software_string_is_refused(d):
    """One string of names separated by commas, the last pasted with a shell command."""
    msg = refused(d, LOCAL + "    metadata:\n      software: 'gcc/12.2.0, cuda/12.1; rm -rf ~'\n")
    assert "software entry 2: 'cuda/12.1; rm -rf ~' is not a module name: ';' is not " \
           "allowed" in msg
    assert "ASCII letters, digits and _ . + - / @ % : , = ~" in msg


def test_module_avail_marks_and_easybuild_versions_are_names(d):
    cfg = loads(d, LOCAL + "    metadata:\n      software: ['GCC/12.3.0 (D)', 'CUDA/12.1.1 <L>',"
                           " OpenMPI/4.1.5-GCC-12.3.0, "
                           "PyTorch/2.1.2-foss-2023a-CUDA-12.1.1]\n")
    caps = from_metadata("hpc", cfg.site("hpc").metadata)
    got = {m.full: m.default for m in caps.software or []}
    assert got == {"GCC/12.3.0": True, "CUDA/12.1.1": False,
                   "OpenMPI/4.1.5-GCC-12.3.0": False,
                   "PyTorch/2.1.2-foss-2023a-CUDA-12.1.1": False}


# -- 4-5. ports -------------------------------------------------------------------------------

def test_a_port_written_as_a_string_is_the_number(d):
    assert loads(d, ssh(d, "port: '2222'")).site("hpc").transport.port == 2222


def test_a_port_written_as_a_service_name_is_refused(d):
    msg = refused(d, ssh(d, "port: ssh"))
    assert "transport.port: Input should be a valid integer" in msg
    assert "(a plain number, a port from 1 to 65535, e.g. 22)" in msg


# -- 6. a module_init script ------------------------------------------------------------------

def test_a_module_init_key_is_refused_listing_the_preamble(d):
    """Some tools take `module_init: /etc/profile.d/lmod.sh`; here the site's setup lines
    are the `preamble` (shell run before every command)."""
    msg = refused(d, LOCAL + "    module_init: /etc/profile.d/lmod.sh\n")
    assert "module_init: unknown key (accepted: " in msg and "preamble" in msg
    cfg = loads(d, LOCAL + "    preamble: |\n      source /etc/profile.d/lmod.sh\n")
    assert cfg.site("hpc").preamble == "source /etc/profile.d/lmod.sh\n"


# -- 7-8. env blocks --------------------------------------------------------------------------

def test_fault_an_env_key_left_empty_says_it_has_no_value(d):
    """`LD_PRELOAD:` with nothing after it (YAML's null): the refusal said only "should be
    a valid string"."""
    msg = refused(d, LOCAL + "    env:\n      OMP_NUM_THREADS: '8'\n      LD_PRELOAD:\n")
    assert "env.LD_PRELOAD: Input should be a valid string, got nothing: the key has no " \
           "value (write '' for an empty one, or leave the key out) (line 6)" in msg
    assert loads(d, LOCAL + "    env:\n      LD_PRELOAD: ''\n").site("hpc").env == \
        {"LD_PRELOAD": ""}


def test_an_env_number_and_a_secret_looking_name(d):
    msg = refused(d, LOCAL + "    env:\n      OMP_NUM_THREADS: 4\n")
    assert "env.OMP_NUM_THREADS: Input should be a valid string, got the number 4" in msg
    assert "put the value in quotes" in msg
    cfg = loads(d, LOCAL + "    env:\n      AWS_SECRET_ACCESS_KEY: 'x1y2'\n")
    assert cfg.site("hpc").env == {"AWS_SECRET_ACCESS_KEY": "x1y2"}


# -- 9-10. $HOME and ~ ------------------------------------------------------------------------

@pytest.mark.parametrize("workdir", ["$HOME/diamond", "${HOME}/diamond", "~/diamond"])
def test_home_in_a_workdir_is_the_logins_home(d, workdir):
    assert loads(d, LOCAL + f"    workdir: {workdir}\n").site("hpc").workdir == "~/diamond"


def test_a_variable_inside_a_workdir_and_another_users_home_are_refused(d):
    assert "workdir: '/scratch/$USER/diamond': one variable is accepted, at the start" in \
        refused(d, LOCAL + "    workdir: /scratch/$USER/diamond\n")
    assert "~user paths are not supported (use ~/path or an absolute path)" in \
        refused(d, LOCAL + "    workdir: ~ana/diamond\n")


@pytest.mark.parametrize("key", ["$HOME/.ssh/id_hpc", "${HOME}/.ssh/id_hpc", "~/.ssh/id_hpc"])
def test_fault_home_in_a_key_path_is_read_as_tilde(d, monkeypatch, key):
    """A center's shared sites file names each user's own key. `~/.ssh/id_hpc` was kept as
    `~` (checked when the site connects, for whoever runs it), but `$HOME/.ssh/id_hpc` was
    written out with the reader's home and refused when that user had no such key yet."""
    monkeypatch.setenv("HOME", str(d / "nokeys"))
    text = ("sites:\n  - name: hpc\n    transport:\n      host: login.hpc.example.org\n"
            f"      key_file: '{key}'\n      known_hosts: {d}/known_hosts\n"
            "      use_agent: false\n")
    assert loads(d, text).site("hpc").transport.key_file == "~/.ssh/id_hpc"


# -- 11. a discovery cluster twice ------------------------------------------------------------

def test_fault_a_cluster_listed_twice_is_refused(d):
    """The second `gpu` entry replaced the first's SLURM_CONF without a word."""
    msg = refused(d, LOCAL + "    discovery:\n      clusters:\n"
                             "        - {name: gpu, env: {SLURM_CONF: /etc/slurm/gpu.conf}}\n"
                             "        - {name: cpu, env: {SLURM_CONF: /etc/slurm/cpu.conf}}\n"
                             "        - {name: gpu, env: {SLURM_CONF: /etc/slurm/old.conf}}\n")
    assert "discovery: clusters: 'gpu' is given twice (clusters[0] and clusters[2]); name " \
           "each cluster once" in msg


# -- 12. Globus without a collection ----------------------------------------------------------

def test_fault_a_globus_path_map_without_a_collection_is_refused(d):
    """The endpoint's path map copied, its collection id forgotten: no transfer would use
    Globus, and the map was ignored."""
    msg = refused(d, LOCAL + "    globus_path_map: {/global/cfs/: /}\n")
    assert "globus_path_map needs globus_collection (the site's Globus collection id, a " \
           "UUID such as 6c54cade-bde5-45c1-bdea-f4bd71dba2cc)" in msg
    ok = loads(d, LOCAL + "    globus_collection: 6c54cade-bde5-45c1-bdea-f4bd71dba2cc\n"
                          "    globus_path_map: {/global/cfs/: /}\n")
    assert ok.site("hpc").globus_path_map == {"/global/cfs/": "/"}


# -- 13. metadata keys spelt near the ones placement reads ------------------------------------

@pytest.mark.parametrize("key,value,meant", [
    ("softwares", "[gcc/12]", "software"),
    ("arch", "aarch64", "architecture"),
    ("modules", "[gcc/12]", "software"),
    ("gpu_model", "A100", "gpu_models"),
    ("feature", "[ib]", "features"),
])
def test_fault_a_metadata_key_spelt_near_a_read_one_is_refused(d, key, value, meant):
    msg = refused(d, LOCAL + f"    metadata: {{{key}: {value}}}\n")
    assert f"metadata: {key}: did you mean {meant}? (the keys placement reads: " in msg


def test_other_metadata_keys_stay_notes(d):
    cfg = loads(d, LOCAL + "    metadata: {owner: hpc-team, notes: 'nightly maintenance'}\n")
    assert cfg.site("hpc").metadata == {"owner": "hpc-team", "notes": "nightly maintenance"}


# -- the command line -------------------------------------------------------------------------

@pytest.mark.parametrize("text,want", [
    (LOCAL + "    metadata:\n      software: [python 3.11]\n", "software entry 1"),
    (LOCAL + "    env:\n      LD_PRELOAD:\n", "got nothing"),
    (LOCAL + "    globus_path_map: {/a: /}\n", "globus_path_map needs globus_collection"),
    (LOCAL + "    metadata: {arch: x86_64}\n", "did you mean architecture?"),
])
def test_diamond_sites_exits_2_naming_the_file(d, capsys, text, want):
    path = write(d, text)
    assert main(["sites", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert want in err and str(path) in err and err.count("\n") == 1


# -- 14-16. metadata lists --------------------------------------------------------------------

@pytest.mark.parametrize("written", ["[x86_64]", "[x86_64, aarch64]", "'x86_64, aarch64'"])
def test_fault_an_architecture_list_places_x86_jobs(d, written):
    """`architecture: [x86_64]` (a list, as describe and the other keys take it) was
    written into every unlabeled node's architecture as the text "['x86_64']", and every
    job asking x86_64 was refused there ("site has ['x86_64']"). One architecture is the
    nodes'; several leave each node's own to decide."""
    from test_placement_cases import NOW, hera

    from diamond_jupyter.federation import Federation
    from diamond_jupyter.placement import place

    cfg = loads(d, LOCAL + f"    metadata: {{architecture: {written}}}\n").site("hpc")
    _, snap = hera()
    snap = snap.model_copy(update={"nodes": [n.model_copy(update={"architecture": None})
                                             for n in snap.nodes]})
    site = cfg.model_copy(update={"name": "hera"})
    spec = Federation.spec_from_text("#!/bin/bash\n#SBATCH -t 1:00:00\n./a\n",
                                     overrides={"arch": "x86_64"})
    assert place(spec, [(site, snap)], now=NOW).verdict("hera").feasible
    arm = Federation.spec_from_text("#!/bin/bash\n#SBATCH -t 1:00:00\n./a\n",
                                    overrides={"arch": "aarch64"})
    v = place(arm, [(site, snap)], now=NOW).verdict("hera")
    assert v.feasible == (written != "[x86_64]")
    if written == "[x86_64]":
        assert "architecture mismatch: job needs aarch64, site has x86_64" in v.reasons


@pytest.mark.parametrize("text,want", [
    ("features: true", "metadata: features: a list of names (features: [a, b], or one "
                       "string 'a, b'), not True"),
    ("mpi: 2024-01-01", "metadata: mpi: a list of names"),
    ("gpu_models: [[a100, 4]]", "metadata: gpu_models entry 1: ['a100', 4] is not a name"),
    ("container_runtimes: [null]", "container_runtimes entry 1: None is not a name"),
])
def test_fault_a_metadata_list_of_another_shape_is_refused(d, text, want):
    """`features: true` crashed placement ('bool' object is not iterable); a nested list
    became a name no site has."""
    assert want in refused(d, LOCAL + f"    metadata: {{{text}}}\n")


def test_fault_groups_as_one_string_are_the_users_groups(d):
    """Placement reads the user's groups as a list; `groups: 'users, hpc'` was ignored."""
    cfg = loads(d, LOCAL + "    metadata: {groups: 'users, hpc'}\n")
    assert cfg.site("hpc").metadata["groups"] == ["users", "hpc"]

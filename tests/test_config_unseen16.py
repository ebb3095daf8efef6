"""Sites files, sixteenth sweep: a host written `@login` (the user left out), a container
runtime misspelt in a site's metadata (`dockr`: the site never matched a job asking for
docker), a partition listed twice in allowed_partitions; and, as guards, what an admin
writes meaning one plain thing: a fully qualified host with its trailing dot, an Active
Directory login holding '@', a scheduler's name in capitals, `hedge: 'off'`, a workdir
whose path holds blanks and shell syntax (quoted in every job), a relative workdir, and
numbers at their edges. Each mistake is refused naming the file, the site, the key, the
line and what would be accepted. The tests marked `fault` failed before this sweep's
fixes."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import sweep_helpers
import yaml
from test_config_unseen2 import loads, refused

from diamond_jupyter.federation import Federation
from diamond_jupyter.model import JobSpec
from diamond_jupyter.store import Store

key_dir = sweep_helpers.key_dir
LOCAL = "sites:\n  - name: a\n    transport: {kind: local}\n"


def _ssh(d: Path, host: str, more: str = "") -> str:
    return sweep_helpers.ssh_site(d, f"host: '{host}'\nkey_file: {d}/id_ed25519\n{more}")


# ---- the user left out before '@' ----------------------------------------------------------

@pytest.mark.parametrize("host", ["@login.example.org", "@[2001:db8::1]:2222"])
def test_fault_a_host_with_nothing_before_its_at_sign_is_refused(key_dir, host):
    """`@login` was taken as `login`: the user the admin meant to write was dropped, and the
    connection went as whoever ssh_config or the local account named."""
    got = refused(key_dir, _ssh(key_dir, host))
    assert f"site 'a' (sites[0]): transport: host: '{host}': nothing before '@': write " \
           "USER@HOST, or the host alone" in got, got
    assert got.endswith("(line 6)"), got  # host's own line, not transport's


def test_fault_a_jump_host_with_nothing_before_its_at_sign_is_refused(key_dir):
    got = refused(key_dir, _ssh(key_dir, "login.example.org", "proxy_jump: '@gw.example.org'"))
    assert "transport.proxy_jump: '@gw.example.org': nothing before '@'" in got, got
    assert got.endswith("(line 8)"), got


@pytest.mark.parametrize("host,said", [
    ("@login", "nothing before '@'"),
    ("a b", "is not a host"),
    ("login;rm -rf ~", "is not a host"),
    ("alice@", "nothing after '@'"),
])
def test_fault_a_host_mistake_names_the_host_line_not_the_transport_line(key_dir, host, said):
    """Every mistake in host: was said at `transport:` (line 3 here), three lines above the
    one to fix; now at host's own line, in a second site as well as the first."""
    ssh = _ssh(key_dir, host, "port: 22")
    got = refused(key_dir, ssh)
    assert f"transport: host: '{host}'" in got and said in got, got
    assert got.endswith("(line 6)"), got
    two = LOCAL + ssh.removeprefix("sites:\n").replace("name: a", "name: b")
    got = refused(key_dir, two)
    assert f"site 'b' (sites[1]): transport: host: '{host}'" in got, got
    assert got.endswith("(line 8)"), got


@pytest.mark.parametrize("host,user,name,port", [
    ("login.example.org.", None, "login.example.org.", None),  # a FQDN's root dot
    ("Login.Example.ORG", None, "Login.Example.ORG", None),
    ("bob@corp.example@login.example.org", "bob@corp.example", "login.example.org", None),
    ("ssh://ana@login.example.org:2222/", "ana", "login.example.org", 2222),
    ("[2001:db8::1]:2200", None, "2001:db8::1", 2200),
])
def test_a_host_as_ssh_reads_it_is_kept(key_dir, host, user, name, port):
    t = loads(key_dir, _ssh(key_dir, host)).sites[0].transport
    assert (t.user, t.host, t.port) == (user, name, port)


# ---- a misspelt container runtime ----------------------------------------------------------

@pytest.mark.parametrize("runtimes,given,meant", [
    ("[dockr]", "dockr", "docker"),
    ("[apptainer, singulartiy]", "singulartiy", "singularity"),
    ("'podman, enrot'", "enrot", "enroot"),
    ("[Apptainr]", "Apptainr", "apptainer"),
])
def test_fault_a_container_runtime_a_letter_off_is_refused_naming_the_one_meant(
        tmp_path, runtimes, given, meant):
    """`container_runtimes: [dockr]` was kept: no job asking for docker was ever placed on
    the site, and nothing said why."""
    got = refused(tmp_path, LOCAL + f"    metadata: {{container_runtimes: {runtimes}}}\n")
    assert f"site 'a' (sites[0]): metadata: container_runtimes: '{given}': did you mean " \
           f"{meant}? (known: apptainer, singularity" in got, got
    assert got.endswith("(line 4)"), got


@pytest.mark.parametrize("runtimes,kept", [
    ("[Docker, charliecloud]", ["Docker", "charliecloud"]),
    ("[apptainer, my-runtime]", ["apptainer", "my-runtime"]),  # one the list does not know
    ("'ch-run, podman-hpc'", "ch-run, podman-hpc"),
])
def test_known_and_unlisted_runtimes_are_kept_as_written(tmp_path, runtimes, kept):
    site = loads(tmp_path, LOCAL + f"    metadata: {{container_runtimes: {runtimes}}}\n").sites[0]
    assert site.metadata["container_runtimes"] == kept


# ---- a partition listed twice --------------------------------------------------------------

@pytest.mark.parametrize("allowed,twice", [("[debug, gpu, debug]", "debug"),
                                           ("\n      - gpu\n      - gpu", "gpu")])
def test_fault_a_partition_listed_twice_in_allowed_partitions_is_refused(tmp_path, allowed,
                                                                         twice):
    got = refused(tmp_path, LOCAL + f"    allowed_partitions: {allowed}\n")
    assert f"site 'a' (sites[0]): allowed_partitions: '{twice}' is listed twice; list each " \
           "partition once" in got, got
    assert got.endswith("(line 4)"), got  # allowed_partitions: itself, not the name


# ---- mistakes refused as earlier sweeps' kin -----------------------------------------------

@pytest.mark.parametrize("lines,said,line", [
    ("    speed_factor: .inf\n", "speed_factor: Input should be a finite number", 4),
    ("    charge_factor: 150%\n", "charge_factor: Input should be a valid number", 4),
    ("    max_job_name: 0\n", "max_job_name: Input should be greater than or equal to 1", 4),
    ("    hedge: maybe\n", "hedge: Input should be a valid boolean", 4),
    ("    auto: 2\n", "auto: Input should be a valid boolean", 4),
    ("    discovery: {override: {gpus: 4}}\n", "discovery.override: Input should be a valid "
                                              "boolean (true or false)", 4),
    ("    env: {SCRATCH_DIR: \"a\\nb\"}\n", "env.SCRATCH_DIR: must be one line of printable "
                                           "text (it holds '\\n')", 4),
    ("    commands: {sbatch: '$HOME/bin/sbatch'}\n", "commands.sbatch: '$HOME/bin/sbatch' is "
                                                    "not a program path", 4),
])
def test_a_value_of_the_wrong_kind_is_refused_naming_key_and_line(tmp_path, lines, said,
                                                                  line):
    got = refused(tmp_path, LOCAL + lines)
    assert f"site 'a' (sites[0]): {said}" in got and got.endswith(f"(line {line})"), got


# ---- what an admin means plainly is taken --------------------------------------------------

@pytest.mark.parametrize("lines,key,value", [
    ("    hedge: 'off'\n", "hedge", False),
    ("    auto: 0\n", "auto", False),
    ("    scheduler: SLURM\n", "scheduler", "slurm"),
    ("    workdir: scratch/diamond\n", "workdir", "scratch/diamond"),  # in the home
    ("    charge_factor: 1e-9\n", "charge_factor", 1e-9),
    ("    discovery: {ttl_s: 0}\n", "discovery", {"enabled": True, "ttl_s": 0.0,
                                                 "override": False, "clusters": []}),
    ("    metadata: {groups: 'hpc, users'}\n", "metadata", {"groups": ["hpc", "users"]}),
])
def test_a_plain_value_is_taken_as_meant(tmp_path, lines, key, value):
    site = loads(tmp_path, LOCAL + lines).sites[0]
    got = getattr(site, key)
    assert (got.model_dump() if hasattr(got, "model_dump") else got) == value


def test_a_workdir_with_blanks_and_shell_syntax_is_quoted_in_every_job(tmp_path):
    """A path is a path: `/scratch/my dir;`x`&y` is taken, and no line of a job's script
    runs any of it."""
    workdir = str(tmp_path / "my dir;`touch PWNED`&y")
    (tmp_path / "sites.yaml").write_text(yaml.safe_dump({"sites": [{
        "name": "here", "transport": {"kind": "local"}, "workdir": workdir,
        "commands": sweep_helpers.fake_slurm_commands(tmp_path / "fake")}]}))

    async def plan() -> str:
        fed = Federation(tmp_path / "sites.yaml", store=Store(tmp_path / "s.sqlite3"),
                         poll_interval_s=3600, min_poll_s=3600)
        await fed.start(recover=False)
        try:
            return (await fed.plan_submit(JobSpec(script="#!/bin/bash\necho hi\n"),
                                          "here"))["script"]
        finally:
            await fed.close()

    script = asyncio.run(plan())
    assert f'#SBATCH --chdir="{workdir}/jobs/' in script
    assert f"__dmd_ev='{workdir}/events.log'" in script
    unquoted = [ln for ln in script.splitlines() if "touch PWNED" in ln
                and not ln.startswith("#SBATCH")
                and ln.replace(f"'{workdir}", "").count("touch PWNED")]
    assert unquoted == [], unquoted

"""The sixteenth sweep of hostile inputs and careless hands, through the faces: the command
line (a subprocess on `test_cli_newuser.NewUser`'s fake Slurm site), MCP tool calls (the
server's own `call_tool`), JobSpecs as REST, MCP and the agent send them, and sites files.

The standard is the earlier sweeps': bad input is refused with one line naming what, where
and what would be accepted (exit 2 on the CLI), and loses nothing: no job reaches a
scheduler, no traceback, no hang. Tests marked `fault` failed before this sweep's fixes; the
others are guards (attacks that already failed safely)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import sweep_helpers
from sweep_helpers import mcp_refusal, sbatch_calls
from test_cli_newuser import _interruptible

from diamond_jupyter.model import BadInput, JobSpec, JobState
from diamond_jupyter.store import Store

user = sweep_helpers.new_user


# -- 1. the command line ----------------------------------------------------------------------

@pytest.mark.parametrize("typed", [
    "ghost:4242",  # the number of another site's job
    "alpha:4242 ",  # a blank copied with it
    "alpha:4242_1",  # an array task of it
    "alpha:4242.batch",  # a step of it
])
@pytest.mark.parametrize("command", ["status", "logs", "cancel"])
def test_fault_a_job_id_near_a_stored_one_suggests_it(user, typed, command):
    """`diamond status ghost:4242` (alpha's number), `alpha:4242_1` (a task of the array
    squeue shows) said only "no job ... in the store"."""
    user.job("alpha:4242")
    line = user.refused(command, typed, "--json")
    assert line == (f"diamond: no job {typed!r} in the store (did you mean alpha:4242? "
                    "`diamond jobs` lists the known ones)"), line
    assert not (user.fake / "calls").exists()


@pytest.mark.parametrize("typed", ["alpha:424", "alpha:42420", "alpha:x4242"])
def test_a_job_id_of_another_number_suggests_nothing(user, typed):
    """(guard for the suggestion) A number is matched whole."""
    user.job("alpha:4242")
    assert "did you mean" not in user.refused("status", typed)


def test_fault_fetch_of_a_finished_job_whose_directory_is_gone_says_so(user):
    """A finished job whose working directory was purged from the site: `fetch` printed
    "has no result files to fetch (yet)" and exit 0, as if they might still come."""
    gone = user.root / "purged"
    user.job("alpha:5000", JobState.COMPLETED, workdir=str(gone))
    line = user.refused("fetch", "alpha:5000", "--json", code=1)
    assert line == (f"diamond: alpha:5000's working directory {gone} is no longer on alpha "
                    "(removed since the job ended COMPLETED: a purge of scratch space, or by "
                    "hand): nothing to fetch"), line
    assert not (user.root / "alpha-5000").exists()
    # (guard) a job not started yet, its directory not made yet: nothing "yet"
    user.job("alpha:5001", JobState.PENDING, workdir=str(gone))
    assert "no result files to fetch (yet)" in user.run("fetch", "alpha:5001", code=0).stderr


@pytest.mark.parametrize("text", ["#!/bin/bash\n#SBATCH -n 1\n#SBATCH -t 5\n",
                                  "#SBATCH -N 2\n# just a comment\n\n"])
def test_a_script_of_only_directives_says_to_write_the_commands(user, text):
    user.write("d.sh", text)
    line = user.refused("submit", "--site", "alpha", "d.sh")
    assert line == ("diamond: the job has no script body or command: a script of only "
                    "directives and comments runs nothing; write the commands the job runs "
                    "after its directives"), line
    assert sbatch_calls(user) == []


@pytest.mark.parametrize(("text", "runs"), [
    ("", False), ("#!/bin/bash\r\n#SBATCH -n 1\r\n  \t\r\n", False),
    ("#SBATCH -N 2\n  # indented comment\n", False), ("#SBATCH -N 2\n  hostname\n", True),
    ("cat <<'EOF'\n# data\nEOF\n", True), ("exit 0\n# after\n", True),
    ("#a \\\n echo continued\n", True), ("'#quoted'\n", True)])
def test_the_body_scan_says_whether_a_line_runs(text, runs):
    """The scan that reads the body answers the "only directives and comments" check (no
    second walk of its lines): a line neither blank nor a comment runs."""
    from diamond_jupyter.script_body import runs_commands, scan_body

    assert runs_commands(text) is runs
    assert scan_body(text).runs_commands is runs


@pytest.mark.parametrize("name", ["submit", "jobs", "status"])
def test_a_site_named_like_a_subcommand_is_a_site(user, name):
    """(guard) A site called `submit` takes jobs and is listed; nothing reads it as a
    command."""
    user.sites = user.write("s.yaml", user.sites.read_text().replace("name: alpha",
                                                                     f"name: {name}"))
    job = json.loads(user.run("submit", "--site", name, "job.sh", "--json", code=0).stdout)
    assert job["id"] == f"{name}:4242"
    assert user.run("jobs", "--site", name, code=0).stdout.startswith(f"{name}:4242\t")


@pytest.mark.parametrize("name,said", [
    ("my site", "'my site' is not a site name: 1 to 63 letters, digits, _ . -"),
    ("alpha:1", "'alpha:1' is not a site name"),
    ("-alpha", "'-alpha' is not a site name"),
    ("auto", "'auto' is reserved (`--site auto` chooses a site)"),
])
def test_a_site_name_no_job_id_can_hold_is_refused_naming_it(user, name, said):
    user.sites = user.write("s.yaml", user.sites.read_text().replace("name: alpha",
                                                                     f"name: '{name}'"))
    line = user.refused("sites", "--offline")
    assert said in line and "(line 2)" in line, line


def test_ctrl_c_during_submit_wait_names_the_job_it_leaves_running(user):
    """(guard) Ctrl-C while `submit --wait` waits: exit 130, the job named with the commands
    that follow and stop it, nothing cancelled."""
    os.mkfifo(user.fake / "fifo")
    proc = subprocess.Popen([sys.executable, "-m", "diamond_jupyter.cli", "submit", "--site",
                             "alpha", "--wait", "--poll", "1", "job.sh"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=user.root, env=user.env(user.sites), preexec_fn=_interruptible)
    with open(user.fake / "fifo") as fifo:  # the wait's second poll
        assert fifo.read().strip() == "polled"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert err.strip().splitlines()[-1] == (
        "diamond: interrupted; alpha:4242 was submitted and keeps running (follow it: "
        "`diamond wait alpha:4242`; stop it: `diamond cancel alpha:4242`)")
    assert "scancel" not in (user.fake / "calls").read_text()
    assert not Store(user.store_path).get_job("alpha:4242").state.terminal


def test_a_workflow_written_in_another_order_than_its_needs_runs_in_theirs(user):
    """(guard) Steps listed c, b, a where c needs b and b needs a: each submitted after
    the step it needs, depending on that step's job."""
    user.write("wf.yaml", "name: rev\nsteps:\n"
               "  - {name: c, site: alpha, needs: [b], script: \"#!/bin/bash\\necho c\\n\"}\n"
               "  - {name: b, site: alpha, needs: [a], script: \"#!/bin/bash\\necho b\\n\"}\n"
               "  - {name: a, site: alpha, script: \"#!/bin/bash\\necho a\\n\"}\n")
    view = json.loads(user.run("workflow", "run", "wf.yaml", "--json", code=0).stdout)
    assert [s["name"] for s in view["steps"]] == ["a", "b", "c"]
    sent = [Path(c.split()[-1]).read_text() for c in sbatch_calls(user)]
    assert [next(w for w in ("echo a", "echo b", "echo c") if w in t) for t in sent] == \
        ["echo a", "echo b", "echo c"]
    assert "--dependency" not in sent[0]
    assert all("#SBATCH --dependency=afterok:4242" in t for t in sent[1:]), sent


# -- 2. MCP tool calls and JobSpecs -------------------------------------------------------------

BIG = "echo hi\n" * 600_000  # 4.8 MB


@pytest.mark.parametrize("tool,args", [
    # fault: submitted after minutes of reading the body (the engine's loop held meanwhile)
    ("submit", {"site": "alpha", "script": BIG}),
    ("submit", {"site": "alpha", "spec": {"script": BIG}}),
    ("place", {"script": BIG}),
])
async def test_fault_a_tool_calls_script_longer_than_any_job_script_is_refused(user, tool,
                                                                                args):
    msg = await mcp_refusal(user, tool, args)
    assert "is 4800000 bytes, more than the 4194304 a job script may hold (Slurm's own " \
           "bound, max_script_size, is 4 MB by default); keep the data in files the script " \
           "reads" in msg, msg[:300]
    assert sbatch_calls(user) == []


def test_fault_a_script_file_and_a_cell_are_bounded_alike():
    """The bound a script file read from disk had now holds for any script text."""
    from diamond_jupyter.federation import MAX_SCRIPT_BYTES, Federation

    with pytest.raises(BadInput, match="the job script is 4194305 bytes, more than the"):
        Federation.parse("#!/bin/sh\n" + "x" * (MAX_SCRIPT_BYTES - 9))
    with pytest.raises(BadInput, match="is 4194306 bytes"):  # counted in UTF-8 bytes
        Federation.parse("#!/bin/sh\n" + "é" * ((MAX_SCRIPT_BYTES - 8) // 2))
    assert Federation.parse("#!/bin/sh\n" + "x" * (MAX_SCRIPT_BYTES - 11)).script


def test_a_body_read_once_is_each_callers_own():
    """(guard for the scan kept between a submit's checks) What one caller adds to the scan
    it got is not in the next caller's."""
    from diamond_jupyter.script_body import scan_body

    body = "module load gcc/12\nsrun ./a.out\n"
    first = scan_body(body)
    first.software.append(first.software[0].model_copy(update={"name": "added"}))
    first.notes.append("added")
    again = scan_body(body)
    assert [s.name for s in again.software] == ["gcc"] and "added" not in again.notes


@pytest.mark.parametrize("environment,said", [
    # fault: `A=1` in `passed` was written into PBS and Grid Engine's -v as a value,
    # past the check of variables that act before the script (LD_PRELOAD, BASH_ENV)
    ({"passed": ["LD_PRELOAD=/tmp/evil.so"]},
     "environment.passed[0]: 'LD_PRELOAD=/tmp/evil.so' is not a variable name (a letter or _, "
     "then letters, digits or _): list names only here, each copied from the submitting "
     "shell; a value goes in environment.variables"),
    ({"passed": ["OK", "-x"]}, "environment.passed[1]: '-x' is not a variable name"),
    ({"passed": ["A,B"]}, "environment.passed[0]: 'A,B' is not a variable name"),
    # fault: `module load -f` read the name as an option; `a;b` as two words
    ({"modules": ["--force"]}, "environment.modules[0]: '--force' is not a module name: it "
                               "starts with '-', which `module load` reads as an option"),
    ({"modules": ["gcc", "a;touch x"]}, "environment.modules[1]: 'a;touch x' is not a module "
                                        "name: ';' is not allowed"),
    # guards
    ({"variables": {"A\nB": "x"}}, "environment.variables key contains a control character"),
    ({"variables": {"A=B": "x"}}, "name 'A=B' is not a variable name"),
    ({"variables": {"A": "x\ny"}}, "environment.variables['A'] contains a control character"),
    ({"variables": {"BASH_ENV": "/tmp/x"}}, "BASH_ENV acts before the script's first line"),
])
def test_an_environment_entry_that_is_no_name_is_refused_naming_it(environment, said):
    with pytest.raises(BadInput) as e:
        JobSpec.model_validate({"command": "echo", "environment": environment})
    assert said in str(e.value), str(e.value)


async def test_fault_a_tool_calls_spec_with_a_value_among_passed_names_sends_nothing(user):
    msg = await mcp_refusal(user, "submit", {"site": "alpha", "spec": {
        "command": "echo hi", "environment": {"passed": ["BASH_ENV=/tmp/x"]}}})
    assert "environment.passed[0]: 'BASH_ENV=/tmp/x' is not a variable name" in msg, msg
    assert sbatch_calls(user) == []


def test_names_and_values_that_are_fine_still_render():
    """(guard for the checks) Names copied, a value holding `=` and `,`, a module with a
    version."""
    from diamond_jupyter.dialects import get_script_dialect

    spec = JobSpec.model_validate({"command": "echo", "environment": {
        "passed": ["HOME_DIR"], "variables": {"OPTS": "a=1,b=2"}, "modules": ["gcc/12.2.0"],
        "export_all": False}})
    for dialect in ("slurm", "pbs", "flux", "sge"):  # LSF's `-env none` takes no names
        text = get_script_dialect(dialect).render_script(spec).script
        assert "module load gcc/12.2.0" in text and "HOME_DIR" in text, (dialect, text)


@pytest.mark.parametrize("working_directory,said", [
    ("-rf", "working_directory '-rf' starts with '-' (it would be read as an option)"),
    ("a\nb", "working_directory contains a control character (newline, U+000A)"),
])
async def test_a_working_directory_an_option_or_two_lines_is_refused(user, working_directory,
                                                                    said):
    """(guards) Through a tool call's spec, as REST and the agent send it."""
    msg = await mcp_refusal(user, "submit", {"site": "alpha", "spec": {
        "command": "echo hi", "working_directory": working_directory}})
    assert said in msg, msg
    assert sbatch_calls(user) == []


@pytest.mark.parametrize("name", ["a\nb", "\x1b[2J\x1b[Hname", "a\x1b]0;title\x07"])
async def test_a_job_name_with_a_newline_or_an_escape_is_refused(user, name):
    """(guards) Never a directive's second line, never a terminal's command."""
    msg = await mcp_refusal(user, "submit", {"site": "alpha", "script": "echo hi", "name": name})
    assert "contains a control character" in msg, msg
    assert sbatch_calls(user) == []


# -- 3. sites files: keys and ssh_config of other users --------------------------------------

def _ssh_site(tmp_path: Path, **transport: str) -> Path:
    key = tmp_path / "id_ed25519"
    if not key.exists():
        key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nx\n"
                       "-----END OPENSSH PRIVATE KEY-----\n")
        key.chmod(0o600)
        (tmp_path / "known_hosts").write_text("")
    fields = {"host": "login.example.org", "key_file": str(key),
              "known_hosts": str(tmp_path / "known_hosts"), **transport}
    p = tmp_path / "sites.yaml"
    p.write_text("sites:\n  - name: s\n    transport: {"
                 + ", ".join(f"{k}: '{v}'" for k, v in fields.items()) + "}\n")
    p.chmod(0o600)
    return p


def _refused(path: Path) -> str:
    from diamond_jupyter.config import load_config

    with pytest.raises(BadInput) as e:
        load_config(path)
    return str(e.value)


@pytest.mark.skipif(os.geteuid() != 0, reason="making another user's file needs root")
def test_fault_a_key_file_of_another_user_is_refused(tmp_path):
    """A key another user owns (readable here as root, or by a mode already refused): used
    without a word, logging in as whoever it was made for."""
    sites = _ssh_site(tmp_path)
    os.chown(tmp_path / "id_ed25519", 65534, 65534)
    msg = _refused(sites)
    assert f"transport.key_file: {tmp_path}/id_ed25519 belongs to another user (uid 65534" \
           in msg and "give a key of your own (`ssh-keygen -t ed25519`" in msg, msg
    assert msg.endswith("(line 3)")


def test_a_key_file_others_can_read_is_still_refused(tmp_path):
    sites = _ssh_site(tmp_path)
    (tmp_path / "id_ed25519").chmod(0o640)
    assert "can be read by other users (mode 640)" in _refused(sites)


@pytest.mark.parametrize("mode", [0o664, 0o646])
def test_fault_an_ssh_config_others_may_write_is_refused(tmp_path, mode):
    """An ssh_config others may write may send the site to their own host, key or jump
    host; OpenSSH refuses it ("Bad owner or permissions"), the engine read it."""
    cfg = tmp_path / "ssh_config"
    cfg.write_text("Host login.example.org\n  User me\n")
    cfg.chmod(mode)
    msg = _refused(_ssh_site(tmp_path, ssh_config=str(cfg)))
    assert f"transport.ssh_config: {cfg} can be written by other users (mode {mode:03o})" \
           in msg and f"`chmod go-w {cfg}`" in msg, msg
    cfg.chmod(0o644)  # (guard) one of the user's own, written by them only: read
    from diamond_jupyter.config import load_config

    assert load_config(_ssh_site(tmp_path, ssh_config=str(cfg))).sites[0].name == "s"


@pytest.mark.skipif(os.geteuid() != 0, reason="making another user's file needs root")
def test_fault_an_ssh_config_of_another_user_is_refused_where_it_is_read(tmp_path):
    """Also when the transport reads it (a config made in code, ~/.ssh/config, an
    Include), before any connection."""
    from diamond_jupyter.transports.ssh_auth import load_ssh_config

    cfg = tmp_path / "ssh_config"
    cfg.write_text("Host x\n  HostName evil.example.org\n")
    os.chown(cfg, 65534, 65534)
    msg = _refused(_ssh_site(tmp_path, ssh_config=str(cfg)))
    assert f"transport.ssh_config: {cfg} belongs to another user (uid 65534" in msg, msg
    with pytest.raises(BadInput, match="belongs to another user"):
        load_ssh_config(str(cfg))


def test_a_misspelt_key_file_key_names_the_one_meant(tmp_path):
    """(guard) paramiko's `key_filename` is named as key_file."""
    sites = _ssh_site(tmp_path)
    sites.write_text(sites.read_text().replace("key_file:", "key_filename:"))
    assert "transport.key_filename: unknown key (did you mean key_file?" in _refused(sites)

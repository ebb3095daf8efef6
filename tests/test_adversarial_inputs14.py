"""The fourteenth sweep of hostile inputs and careless hands, through the faces: the command
line (a subprocess on `test_cli_newuser.NewUser`'s fake Slurm site), the REST routes (a real
Jupyter server with the extension, a local site), the magics (an in-process engine), MCP tool
calls (the server's own `call_tool`), and workflow and sites files.

The standard is the earlier sweeps': bad input is refused with one line naming what, where
and what would be accepted (exit 2 on the CLI, a 4xx with a JSON message on REST), and loses
nothing: no job reaches a scheduler, no traceback. Tests marked `fault` failed before this
sweep's fixes; the others are guards (attacks that already failed safely)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import sweep_helpers
from sweep_helpers import assert_magic_refused, mcp_refusal, sbatch_calls
from test_cli_newuser import NewUser

from diamond_jupyter.model import BadInput, JobSpec
from diamond_jupyter.workflow.model import load_workflow

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")


user = sweep_helpers.new_user


# -- 1. the command line ----------------------------------------------------------------------

# named as typed (test_adversarial_inputs20_followups): the option, not the spec's `queue`
BLANK_QUEUE = ("--partition 'a b' has a blank inside a name, and no scheduler's queue name "
               "holds one; give one name, or several separated by commas (a,b)")


@pytest.mark.parametrize("args,said", [
    # fault: `--partition "a b"` reached sbatch as `--partition="a b"` (one unknown name) and
    # LSF's `-q "a b"` as two queues
    (["submit", "--site", "alpha", "--partition", "a b", "job.sh"], BLANK_QUEUE),
    (["submit", "--site", "alpha", "--partition=a\tb", "job.sh"],
     "--partition 'a\\tb' has a blank inside a name"),
    (["submit", "--site", "alpha", "--partition", "a, b c", "job.sh"],
     "--partition 'a, b c' has a blank inside a name"),
    # guards
    (["submit", "--site", "alpha", "--partition=-x", "job.sh"],
     "--partition '-x' starts with '-' (it would be read as an option)"),
    (["submit", "--site=-x", "job.sh"], "unknown site '-x' (known: alpha, ghost)"),
    (["submit", "--site", "alpha", "--dialect=--help", "job.sh"], "unknown dialect '--help'"),
    (["submit", "--site", "alpha", "--arch=-y", "job.sh"], "--arch '-y': expected an "
     "architecture"),
    (["submit", "--site", "alpha", "--name", "a\nb", "job.sh"],
     "name contains a control character (newline, U+000A) at position 1"),
    (["status", "../x"], "job ID '../x' is malformed: expected SITE:NUMBER"),
    (["status", "1;ls"], "job ID '1;ls' is malformed"),
    (["status", "1" + "0" * 30], "job ID '1" + "0" * 30 + "' is malformed"),
    (["cancel", "alpha:" + "9" * 30], "no job 'alpha:" + "9" * 30 + "' in the store"),
    (["cancel", "alpha:-1"], "no job 'alpha:-1' in the store"),
    (["logs", "../../etc/passwd"], "job ID '../../etc/passwd' is malformed"),
    (["describe", "../../etc"], "unknown site '../../etc'"),
])
def test_a_cli_value_that_is_no_value_is_one_line_and_exit_2(user, args, said):
    line = user.refused(*args)
    assert said in line, line
    assert sbatch_calls(user) == []


def test_cancel_of_a_job_the_store_does_not_hold_asks_no_scheduler(user):
    """(guard) `diamond cancel alpha:77` for a job another user (or another tool) submitted:
    refused from the store; scancel never runs, so no one else's job is touched."""
    line = user.refused("cancel", "alpha:77", "--json")
    assert "no job 'alpha:77' in the store" in line
    calls = (user.fake / "calls").read_text() if (user.fake / "calls").exists() else ""
    assert "scancel" not in calls


def test_a_name_written_like_an_option_is_the_name_not_an_option(user):
    """(guard) `--name=--help` is a name: rendered bound to its option (`--job-name=--help`),
    never a line of its own that sbatch would read as `--help`."""
    user.run("submit", "--site", "alpha", "--name=--help", "job.sh", code=0)
    [call] = sbatch_calls(user)
    script = Path(call.split()[-1]).read_text()
    assert "#SBATCH --job-name=--help\n" in script


def test_an_lsf_queue_list_in_quotes_is_still_a_list(user):
    """(guard for the blank check) LSF's `-q "short normal"` is two queues: read as the
    model's comma list, written as Slurm's `--partition=short,normal`."""
    user.write("q.sh", '#!/bin/sh\n#BSUB -q "short normal"\necho\n')
    res = user.run("translate", "--to", "slurm", "q.sh", code=0)
    assert "#SBATCH --partition=short,normal\n" in res.stdout


@pytest.mark.parametrize("directive,field", [("#SBATCH --qos 'a b'", "qos"),
                                             ("#SBATCH --reservation 'r 1'", "reservation")])
def test_fault_a_qos_or_reservation_with_a_blank_is_refused(user, directive, field):
    user.write("q.sh", f"#!/bin/sh\n{directive}\necho\n")
    line = user.refused("translate", "--to", "pbs", "q.sh")
    assert f"{field} '" in line and "has a blank inside a name" in line, line


def test_four_cli_submits_at_once_on_one_store_are_all_recorded(user):
    """(guard) Four `diamond submit` processes at once on one store: each exits 0 and each
    job is in the store (the fake answers one id: each later one is kept beside it)."""
    procs = [subprocess.Popen([sys.executable, "-m", "diamond_jupyter.cli", "submit", "--site",
                               "alpha", "--json", "job.sh"], cwd=user.root,
                              env=user.env(user.sites), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0 and "Traceback" not in err, err
        assert json.loads(out)["native_id"] == "4242"
    jobs = json.loads(user.run("jobs", "--json", code=0).stdout)
    assert len(jobs) == 4 and len({j["id"] for j in jobs}) == 4
    assert len(sbatch_calls(user)) == 4


# -- 2. a store on a full or read-only disk -----------------------------------------------------

def _fed(user: NewUser) -> Any:
    from diamond_jupyter.config import load_config
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.store import Store

    return Federation(load_config(user.sites), store=Store(user.store_path))


@pytest.mark.parametrize("pragma,cause", [
    ("max_page_count", "its disk is full: free space there"),
    ("query_only", "its file system or file is read-only: make it writable"),
])
async def test_fault_a_submit_on_a_store_that_takes_no_write_says_why_and_sends_nothing(
        user, pragma, cause):
    """A store on a full disk ended `diamond submit` in sqlite3's traceback ("database or
    disk is full"); a read-only one likewise. Now a StoreError names the store, the cause and
    what to do; the job's intent was not recorded, so nothing was submitted (exit 1 on the
    CLI, as for any store that cannot be used). The disk is made full, or read-only, for
    SQLite itself: a page limit of what the file holds (the job's 256 kB body needs more
    pages than any store has free), or its query-only mode."""
    from diamond_jupyter.store import StoreError

    fed = _fed(user)
    conn = fed.store._conn()
    if pragma == "max_page_count":
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")
    else:
        conn.execute("PRAGMA query_only = ON")
    spec = JobSpec(name="x", command="echo hi\n" + "# padding\n" * 25_600)
    try:
        with pytest.raises(StoreError) as e:
            await asyncio.wait_for(fed.submit(spec, "alpha"), 60)
        assert str(e.value) == (f"store {user.store_path} cannot be written: {cause}, or give "
                                "another store path (`store:` in the sites file, or "
                                "$DIAMOND_DATA_DIR); this change was not recorded")
        assert sbatch_calls(user) == []
        # room again: the store takes the next write (the failed one left no transaction)
        conn.execute("PRAGMA max_page_count = 1073741823" if pragma == "max_page_count"
                     else "PRAGMA query_only = OFF")
        assert not conn.in_transaction
        job = await asyncio.wait_for(fed.submit(spec, "alpha"), 60)
        assert fed.store.get_job(job.id) is not None
    finally:
        await fed.close()


def test_an_other_sqlite_error_is_not_taken_for_a_full_disk(tmp_path):
    """(guard for the mapping) Only SQLite's words for a full, read-only or failing disk
    become that StoreError; any other error is raised as it was."""
    from diamond_jupyter.store.db import unwritable

    assert unwritable(tmp_path, sqlite3.OperationalError("no such table: x")) is None
    said = unwritable(tmp_path, sqlite3.OperationalError("disk I/O error"))
    assert said is not None and "its disk answered an I/O error" in str(said)


# -- 3. the REST routes -------------------------------------------------------------------------

jp_server_config = sweep_helpers.one_local_site_server


rest = sweep_helpers.rest_caller


SETTING_SAID = ("{key}: a job setting this request has no field for (it would be ignored); "
                "write it in the script's directives, or send `spec` (a JobSpec) holding it")


@pytest.mark.parametrize("path,body,key", [
    ("jobs", {"script": "echo hi", "site": "here", "begin": "now+1hour"}, "begin"),
    ("jobs", {"script": "echo hi", "site": "here", "nodes": "2"}, "nodes"),
    ("jobs", {"script": "echo hi", "site": "here", "partition": "debug"}, "partition"),
    ("jobs", {"script": "echo hi", "site": "here", "walltime_s": 60}, "walltime_s"),
    ("jobs", {"script": "echo hi", "site": "here", "environment": {"modules": ["gcc"]}},
     "environment"),
    ("place", {"script": "echo hi", "gpus": 4}, "gpus"),
    ("place", {"script": "echo hi", "time": "1:00:00"}, "time"),
])
async def test_fault_a_job_setting_beside_the_script_is_refused_not_ignored(rest, path, body,
                                                                            key):
    """`{"script": ..., "hold": true}` submitted the job unheld (now `hold` is the body's
    own field), `"nodes": 2` on one node:
    a key the body has no field for was ignored, as any unknown key is. A key that names a
    job's setting (a JobSpec or Resources field, or a CLI option) is refused, naming it and
    where it goes; nothing is submitted."""
    code, reply = await rest("POST", path, json.dumps(body).encode())
    assert code == 400, (code, reply)
    assert reply == {"reason": "bad-input", "message": SETTING_SAID.format(key=key)}
    assert (await rest("GET", "jobs"))[1]["total"] == 0


async def test_a_key_that_is_no_job_setting_is_refused_too(rest):
    """Other unknown keys are refused as well (test_rest_unknown_fields_memory), naming
    the key and the accepted fields."""
    code, reply = await rest("POST", "translate", json.dumps({
        "script": "#SBATCH -N 2\necho\n", "to": "pbs", "colour": "blue"}).encode())
    assert code == 400 and "unknown field 'colour' in the body" in reply["message"], reply


TRANSLATE = b'{"script": "#SBATCH -N 2\\necho\\n", "to": "pbs"}'


@pytest.mark.parametrize("body,headers,said", [
    (b'{"script": "echo", "to": "pbs",}', {},
     "the request body is not valid JSON (Expecting property name enclosed in double quotes "
     "at line 1, column 32)"),
    (b"script=echo&to=pbs", {"Content-Type": "application/x-www-form-urlencoded"},
     "the request body is not valid JSON (Expecting value at line 1, column 1); it was sent "
     "as application/x-www-form-urlencoded (curl -d, an HTML form): send a JSON object, with "
     "Content-Type: application/json"),
    (b'{"script": "echo", "to": "pbs", "n": ' + b"7" * 5000 + b"}", {},
     "the request body holds a whole number of more than 4300 digits; no field takes one"),
    (b"[" * 100_000 + b"]" * 100_000, {},
     "the request body nests lists or objects too deeply to read; give it a flatter shape"),
])
async def test_fault_a_body_that_is_no_json_object_says_what_and_where(rest, body, headers,
                                                                        said):
    """"the request body is not valid JSON" said neither where nor, for a form's body (what
    `curl -d key=value` sends), what to send instead; a 5000-digit number, valid JSON, was
    called invalid."""
    code, reply = await rest("POST", "translate", body, headers=headers)
    assert code == 400 and reply["reason"] == "bad-input", (code, reply)
    assert said in reply["message"], reply


async def test_a_multipart_form_is_refused_for_its_type(rest):
    """A multipart form's body (`curl -F`) was a 400 "not valid JSON"; it is now refused for
    its type (415, `tests/test_rest_bodies.py`), naming the type to send."""
    code, reply = await rest("POST", "translate",
                             b'--b\r\nContent-Disposition: form-data; name="to"\r\n\r\n'
                             b'pbs\r\n--b--\r\n',
                             headers={"Content-Type": "multipart/form-data; boundary=b"})
    assert code == 415 and reply["reason"] == "unsupported-media-type", (code, reply)
    assert "sent as multipart/form-data" in reply["message"]
    assert "Content-Type: application/json" in reply["message"]


async def test_fault_a_body_after_a_byte_order_mark_is_read(rest):
    """A UTF-8 byte order mark (Windows tools write one) made a valid body "not valid
    JSON"; it is no part of the JSON (RFC 8259 lets a reader pass over it)."""
    code, reply = await rest("POST", "translate", b"\xef\xbb\xbf" + TRANSLATE)
    assert code == 200 and "#PBS" in reply["script"], reply


async def test_a_json_body_labelled_a_form_is_read_as_json(rest):
    """(guard) `curl -d '{...}'` labels JSON a form: it is read, as before."""
    code, reply = await rest("POST", "translate", TRANSLATE,
                             headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert code == 200 and "#PBS" in reply["script"], reply


@pytest.mark.parametrize("path,said", [
    ("jobs/..%2F..%2Fetc", "job ID '../../etc' is malformed"),
    ("jobs/%2e%2e/logs", "job ID '..' is malformed"),
    ("jobs/here%3A1%2F..%2F..", "no job 'here:1/../..' in the store"),
    ("sites/..%2Fstate", "unknown site '../state'"),
    ("sites/%2e%2e%2f%2e%2e%2fstate/describe", "unknown site '../../state'"),
    ("workflows/..%2Fx", "no workflow '../x'"),
    ("tasks/..%2Fx", "unknown task '../x'"),
])
async def test_an_encoded_parent_in_a_route_is_a_name_that_is_not_found(rest, path, said):
    """(guard) `%2F..%2F` in a route's id is part of the id (never a path): 404 with a JSON
    message naming it."""
    code, reply = await rest("GET", path)
    assert code == 404 and reply["reason"] == "not-found" and said in reply["message"], reply


async def test_an_encoded_parent_in_a_transfer_cancel_is_not_found(rest):
    code, reply = await rest("POST", "transfers/..%2Fx/cancel", b"{}")
    assert code == 404 and reply["message"] == "unknown transfer '../x'", reply


ROUTES = ["state", "sites", "sites/here", "sites/here/snapshot", "sites/here/describe",
          "sites/here/usage", "dashboard", "sites/here/login", "logins", "logins/1-0123456789ab",
          "place", "jobs", "jobs/here%3A1", "jobs/here%3A1/cancel", "jobs/here%3A1/release",
          "jobs/here%3A1/logs",
          "jobs/here%3A1/files", "jobs/here%3A1/fetch", "translate", "events", "transfers",
          "transfers/0123456789abcdef/cancel", "tasks", "tasks/t1", "tasks/t1/approve",
          "tasks/t1/reject", "workflows", "workflows/wf-0", "workflows/wf-0/cancel",
          "workflows/wf-0/plan", "workflows/wf-0/approve", "openapi.yaml",
          "no/such/route",  # the JSON 404 of a path that is no route (sweep 17)
          "/diamond/api"]  # and of the API's root without its last '/'


async def test_every_route_and_method_without_credentials_is_403_with_json(rest):
    """(guard, without the test bed: tests/test_server_auth.py needs it) Each route, by every
    method, without a token: 403 with a JSON reason; a POST carrying a cookie's form but no
    XSRF token likewise. Nothing was submitted."""
    from diamond_jupyter.server.routes import routes

    assert len(ROUTES) == len(routes())
    for path in ROUTES:
        for method in ("GET", "POST", "PUT", "DELETE", "PATCH"):
            body = None if method in ("GET", "DELETE") else b"{}"
            code, reply = await rest(method, path, body, auth=False)
            assert code == 403, (method, path, code, reply)
            assert reply["reason"] == "forbidden", (method, path, reply)
    code, reply = await rest("POST", "jobs", b'{"script": "echo hi", "site": "here"}',
                             auth=False, headers={"Cookie": "_xsrf=abc"})
    assert code == 403 and "_xsrf" in reply["message"], reply
    assert (await rest("GET", "jobs"))[1]["total"] == 0


# -- 4. the magics ------------------------------------------------------------------------------

shell = sweep_helpers.magics_shell


@pytest.mark.parametrize("line,cell,said", [
    # fault: the FILE was passed over without a word and the cell submitted
    ("submit --site alpha job.sh", "echo other\n",
     "submit: FILE 'job.sh' and a cell body both given; give one: the FILE with %diamond "
     "submit, or the script as the cell body without a FILE"),
    ("place job.sh", "echo other\n", "place: FILE 'job.sh' and a cell body both given"),
    # fault: a partition with a blank reached sbatch
    ("submit --site alpha --partition 'a b'", "echo hi\n", BLANK_QUEUE),
    # guards
    ("submit --site alpha --bogus", "echo hi\n",  # the CLI's words since sweep 17
     "%diamond submit: unknown option --bogus ("),
    ("submit --site alpha", "#SBATCH -N 1\n#SBATCH -t 5\n",
     "the job has no script body or command"),
    ("submit --site alpha 'unterminated", "echo hi\n", "No closing quotation"),
    ("submit --site alpha", "\x00echo hi\n", "the job script is a binary file"),
])
def test_a_cell_the_magic_cannot_take_is_one_reason_and_nothing_runs(shell, user, capsys,
                                                                      line, cell, said):
    assert_magic_refused(shell, user, capsys, line, cell, said)


def test_fault_a_magics_help_shows_the_usage_without_ending_the_cell(shell, user, capsys):
    """`%%diamond submit --help` printed the usage, then the cell ended in "SystemExit: 0"
    (IPython's "An exception has occurred")."""
    assert shell.run_cell_magic("diamond", "submit --site alpha --help", "echo hi\n") is None
    out = capsys.readouterr().out
    assert "usage: %diamond submit" in out and "--partition" in out
    assert sbatch_calls(user) == []


def test_a_unicode_name_in_a_magic_is_the_job_s_name(shell, user, capsys):
    """(guard) A name in another script is a name: submitted, one line in the script."""
    h = shell.run_cell_magic("diamond", "submit --site alpha --name ünï-名前", "echo hi\n")
    assert h is not None and h.job.name == "ünï-名前"
    [call] = sbatch_calls(user)
    assert '#SBATCH --job-name=ünï-名前\n' in Path(call.split()[-1]).read_text()


# -- 5. MCP tool calls --------------------------------------------------------------------------

@pytest.mark.parametrize("tool,args,said", [
    ("submit", {"script": "echo hi", "site": "alpha", "begin": "now+1hour"},
     "submit: unknown field 'begin' in the arguments (accepted: script, spec, name, arch, "
     "software, "
     "container, gpu_type, memory, site, hedge, hold)"),
    ("submit", {"script": "echo hi", "site": "alpha", "nodes": 2},
     "submit: unknown field 'nodes' in the arguments"),
    ("status", {"job_id": "alpha:1", "refresh": False, "verbose": True},
     "status: unknown field 'verbose' in the arguments (accepted: job_id, refresh)"),
    ("submit", {"site": "alpha", "spec": {"command": "x", "resources": {"queue": "-x"}}},
     "resources.queue '-x' starts with '-' (it would be read as an option)"),
    ("submit", {"site": "alpha", "spec": {"command": "x", "resources": {"queue": "a b"}}},
     "resources.queue 'a b' has a blank inside a name"),
])
async def test_fault_a_tool_call_s_unknown_or_bad_argument_is_refused_saying_which(
        user, tool, args, said):
    """The MCP package's own argument model ignored unknown arguments (`"hold": true` beside
    a script submitted the job unheld, before `hold` was submit's own argument), and a
    JobSpec field its checks refused came back as "Error executing tool submit", the reason
    lost. The skill's own model reads them first."""
    msg = await mcp_refusal(user, tool, args)
    assert said in msg, msg
    assert "\n" not in msg
    assert sbatch_calls(user) == []


# -- 6. workflow and sites files --------------------------------------------------------------

def _wf_refused(text: str) -> str:
    with pytest.raises(BadInput) as e:
        load_workflow(text, sites=["alpha", "beta"])
    msg = str(e.value)
    assert "\n" not in msg, msg
    return msg


STEP = "name: w\nsteps:\n  - name: a\n    script: ./a\n"


@pytest.mark.parametrize("outputs,said", [
    ("[o.bin, o.bin]", "outputs[1] 'o.bin' is outputs[0] 'o.bin' again (one path); list each "
                       "output once"),
    ("[o.bin, ./o.bin]", "outputs[1] './o.bin' is outputs[0] 'o.bin' again (one path); list "
                         "each output once"),
    ("[res/, ./res/]", "outputs[1] './res/' is outputs[0] 'res/' again (one path); list each "
                       "output once"),
    ("[o, o/]", "outputs[0] 'o' and outputs[1] 'o/' are one path, once a file and once a "
                "directory; list it once, with a trailing / if it is a directory"),
])
def test_fault_a_step_s_outputs_that_collide_are_refused(outputs, said):
    """A step listing one output twice, or as a file and as a directory, was read as written
    (the second saying nothing new, or the opposite of the first)."""
    msg = _wf_refused(STEP + f"    outputs: {outputs}\n")
    assert msg == f"the workflow: steps['a'].outputs: {said} (line 5)", msg


def test_a_directory_output_and_a_file_in_it_are_both_kept():
    """(guard) `[d/, d/x]`: a directory and a file in it, both checked."""
    wf = load_workflow(STEP + "    outputs: [d/, d/x]\n", sites=["alpha"])
    assert wf.steps[0].outputs == ["d/", "d/x"]


def test_fault_an_input_named_by_a_file_two_steps_output_names_both():
    """`inputs: [o]` where steps a and b both list o: the message said only that an input
    is a mapping, not from which step (nor that two could give it)."""
    msg = _wf_refused("name: w\nsteps:\n  - name: a\n    script: ./a\n    outputs: [o]\n"
                      "  - name: b\n    script: ./b\n    outputs: [o]\n"
                      "  - name: c\n    script: ./c\n    needs: [a, b]\n    inputs: [o]\n")
    assert msg == ("the workflow: steps['c'].inputs[0]: an input is a mapping naming the step "
                   "it comes from: write {from: a, path: o} (steps 'a', 'b' each list it in "
                   "their outputs: name the one meant, as 'a' here), not 'o' (line 12)"), msg


@pytest.mark.parametrize("path,said", [
    ("/etc/passwd", "path '/etc/passwd' must be relative to the step's working directory"),
    ("x/../../y", "path 'x/../../y' must name a file inside the step's working directory"),
])
def test_an_input_naming_an_absolute_or_parent_path_is_refused(path, said):
    """(guard) An input outside the upstream step's directory."""
    msg = _wf_refused(STEP + "    outputs: [o]\n  - name: b\n    script: ./b\n    needs: [a]\n"
                      f"    inputs: [{{from: a, path: '{path}'}}]\n")
    assert said in msg and "inputs[0].path" in msg, msg


def test_two_sites_on_one_host_with_different_keys_keep_their_own(tmp_path):
    """(guard) Two accounts on one login host, each with its own key: two sites, each with
    its key (one SSH connection each, never shared between sites)."""
    from diamond_jupyter.config import load_config

    for k in ("k1", "k2"):
        (tmp_path / k).write_text("key")
        (tmp_path / k).chmod(0o600)
    p = tmp_path / "sites.yaml"
    p.write_text(f"sites:\n  - name: a\n    transport: {{host: h.example, user: u1, key_file: "
                 f"{tmp_path}/k1}}\n  - name: b\n    transport: {{host: h.example, user: u2, "
                 f"key_file: {tmp_path}/k2}}\n")
    p.chmod(0o600)
    cfg = load_config(p)
    assert [(s.name, s.transport.user, Path(s.transport.key_file).name) for s in cfg.sites] \
        == [("a", "u1", "k1"), ("b", "u2", "k2")]


@pytest.mark.parametrize("name", ["--help", "-x", "auto"])
def test_a_site_named_like_a_cli_option_or_auto_is_refused(tmp_path, name):
    """(guard) `--site --help` could not name it; `auto` is placement's word."""
    from diamond_jupyter.config import load_config

    p = tmp_path / "sites.yaml"
    p.write_text(f"sites:\n  - name: '{name}'\n    transport: {{kind: local}}\n")
    p.chmod(0o600)
    with pytest.raises(BadInput) as e:
        load_config(p)
    assert f"name: '{name}' is" in str(e.value) and "(line 2)" in str(e.value)

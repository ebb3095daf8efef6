"""Faces sweep 21: what a user or an attacker sends to each face (the command line, the REST
API on a real Jupyter server, the `%%diamond` magics, the agent's and MCP's skills), without
the test bed. Odd but valid input must work: a script piped on standard input or given after
`--`, names in any script, a long script, JSON laid out with extra blanks, an option given
twice with one value, a site named with dashes and dots. Bad input must get one clear error
naming what, where and what would be accepted, with nothing sent: option-like values in every
field, numbers past any bound, paths outside the server's root, requests without a login,
numbers JSON has no spelling for, job ids no scheduler can wait on. And what an approval
shows must be exactly what runs.

Tests marked `fault` failed before this sweep's fixes; the others are guards."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import sweep_helpers
from sweep_helpers import (
    assert_magic_refused,
    here_sbatch_calls,
    sbatch_calls,
    submitted_script,
)

from diamond_jupyter.model import BadInput
from diamond_jupyter.skills import NeedsApproval, SkillContext, run_skill, skill_input

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
user, shell, jp_server_config, rest = sweep_helpers.FACES_FIXTURES
engine = sweep_helpers.here_engine

SCRIPT = sweep_helpers.FACES_SCRIPT
LISTED = "expected how many to list, a whole number from 1 to "  # a list's limit refused


def _piped(user, *args: str, stdin: str) -> subprocess.CompletedProcess:
    """`diamond ARGS` as the user runs it, with `stdin` piped in."""
    res = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", *args], input=stdin,
                         capture_output=True, text=True, timeout=120, cwd=user.root,
                         env=user.env(user.sites))
    assert "Traceback" not in res.stderr, res.stderr
    return res


# ---- (1) the command line: odd but valid ---------------------------------------------------

def test_a_script_piped_on_standard_input_is_submitted_as_given(user):
    res = _piped(user, "submit", "--site", "alpha", "-",
                 stdin="#!/bin/bash\n#SBATCH -J piped\necho from-stdin\n")
    assert (res.returncode, res.stdout) == (0, "alpha:4242\n"), res.stderr
    script = submitted_script(user)
    assert "#SBATCH --job-name=piped\n" in script and "echo from-stdin\n" in script


def test_a_long_script_on_standard_input_reaches_the_site_whole(user):
    """20,000 lines (about 400 kB) piped in: every line is in the script sbatch is given."""
    body = "".join(f"echo step-{i:05d} of the long script\n" for i in range(20000))
    res = _piped(user, "submit", "--site", "alpha", "-", stdin="#!/bin/bash\n" + body)
    assert res.returncode == 0, res.stderr
    script = submitted_script(user)
    assert script.endswith(body) or body in script
    assert script.count("echo step-") == 20000


def test_a_double_dash_ends_the_options_and_a_file_named_like_one_is_read(user):
    user.write("-weird.sh", "#!/bin/bash\necho dashed\n")
    assert user.run("submit", "--site", "alpha", "--", "job.sh", code=0).stdout == \
        "alpha:4242\n"
    assert user.run("submit", "--site", "alpha", "--", "-weird.sh", code=0).stdout == \
        "alpha:4242\n"
    assert "echo dashed\n" in Path(sbatch_calls(user)[-1].split()[-1]).read_text()


@pytest.mark.parametrize("name", ["ジョブ", "Ωmega-β.1", "calc_α+β", "données"])
def test_a_name_in_any_script_is_submitted_and_kept(user, name):
    assert user.run("submit", "--site", "alpha", "--name", name, "job.sh",
                    code=0).stdout == "alpha:4242\n"
    assert name in submitted_script(user)
    listed = json.loads(user.run("jobs", "--json", code=0).stdout)
    assert [j["name"] for j in listed] == [name]


@pytest.mark.parametrize("args", [["--name", "run", "--name", "run"],
                                  ["--site=alpha", "--site", "alpha"],
                                  ["--hold", "--hold"]])
def test_an_option_given_twice_with_one_value_is_taken_once(user, args):
    site = [] if any(a.startswith("--site") for a in args) else ["--site", "alpha"]
    assert user.run("submit", *site, *args, "job.sh", code=0).stdout == "alpha:4242\n"
    assert len(sbatch_calls(user)) == 1


def test_a_site_named_with_dashes_and_dots_takes_every_command(user):
    """`hpc-1.example.org`: its jobs' ids are `hpc-1.example.org:N`, split at the last ':'."""
    user.sites.write_text(user.sites.read_text().replace("name: alpha",
                                                         "name: hpc-1.example.org"))
    assert user.run("submit", "--site", "hpc-1.example.org", "job.sh", code=0).stdout == \
        "hpc-1.example.org:4242\n"
    job = json.loads(user.run("status", "hpc-1.example.org:4242", "--json", code=0).stdout)
    assert (job["site"], job["native_id"]) == ("hpc-1.example.org", "4242")
    assert json.loads(user.run("queue", "hpc-1.example.org", "--json", code=0).stdout) \
        is not None


# ---- (2) the command line: option-like values and numbers past their bounds ----------------

@pytest.mark.parametrize("option,said", [
    ("--partition=--wrap=id", "--partition '--wrap=id' starts with '-'"),
    ("--partition=-delete", "--partition '-delete' starts with '-'"),
    ("--container=--privileged", "--container '--privileged': expected an image"),
    ("--software=-x", "--software '-x': expected NAME or NAME/VERSION"),
    ("--gpu-type=--wrap=id", "--gpu-type '--wrap=id': expected a GPU model"),
    ("--arch=-delete", "--arch '-delete': expected an architecture"),
    ("--dialect=--wrap", "unknown dialect '--wrap' (accepted: slurm, pbs"),
    ("--memory=-1G", "--memory '-1G': expected a size such as 4G"),
])
def test_an_option_like_value_is_refused_naming_the_option(user, option, said):
    line = user.refused("submit", "--site", "alpha", option, "job.sh")
    assert said in line, line
    assert sbatch_calls(user) == []


@pytest.mark.parametrize("args,said", [
    (["submit", "--site", "alpha", "--nodes", "99999999999999999999", "job.sh"],
     "--nodes 99999999999999999999 is too large (at most 9007199254740992)"),
    (["submit", "--site", "alpha", "--nodes", "-1", "job.sh"],
     "argument --nodes: expected a whole number, 1 or more, not '-1'"),
    (["submit", "--site", "alpha", "--gpus", "-1", "job.sh"],
     "argument --gpus: expected a whole number, 0 or more, not '-1'"),
    (["submit", "--site", "alpha", "--hedge", "99999999999999999999999", "job.sh"],
     "--hedge takes a number of copies from 1 to 8"),
    (["submit", "--site", "alpha", "--time", "-5", "job.sh"],
     "argument --time: expected minutes, HH:MM:SS or D-HH[:MM[:SS]], not '-5'"),
    (["logs", "alpha:1", "--lines", "99999999999999999999999"],
     "lines must be a whole number from 1 to 1000000000"),
    (["jobs", "--limit", "99999999999999999999999"],
     f"argument --limit: {LISTED}9223372036854775807"),
])
def test_a_number_past_its_bound_is_refused_saying_the_bound(user, args, said):
    line = user.refused(*args)
    assert said in line, line
    assert sbatch_calls(user) == []


def test_fault_a_time_limit_too_long_is_said_in_the_minutes_given(user):
    """`--time 999999999999` (minutes) was refused as "--time 59999999999940 s is too
    long": a number the user never typed, in a unit they did not use."""
    line = user.refused("submit", "--site", "alpha", "--time", "999999999999", "job.sh")
    assert "(999999999999 minutes) is too long: at most 4294967294 minutes" in line, line
    assert sbatch_calls(user) == []


@pytest.mark.parametrize("args,said", [
    (["--software", ","], "--software ',' names no software (only commas and blanks); give "
                          "NAME or NAME/VERSION (e.g. gromacs/2023), or leave it out"),
    (["--software", "gcc", "--software", " , "], "--software ' , ' names no software"),
    (["--partition", "debug,,gpu"], "--partition 'debug,,gpu' has an empty name in its list "
                                    "(a comma with no name beside it); give names separated "
                                    "by single commas (a,b), or one name"),
    (["--partition", "debug,"], "--partition 'debug,' has an empty name in its list"),
])
def test_fault_a_list_option_with_an_empty_name_is_refused(user, args, said):
    """`--software ,` submitted a job needing no software at all, `--partition debug,`
    reached sbatch with a list holding an empty partition name: each unsaid."""
    line = user.refused("submit", "--site", "alpha", *args, "job.sh")
    assert said in line, line
    assert sbatch_calls(user) == []


def test_a_partition_list_of_names_is_still_submitted(user):
    user.run("submit", "--site", "alpha", "--partition", "debug,gpu", "job.sh", code=0)
    assert '#SBATCH --partition=debug,gpu\n' in submitted_script(user)


@pytest.mark.parametrize("stdin,said", [
    ("", "- reads the job script from standard input, and it held nothing"),
    ("\x00\x01", "the script on standard input is a binary file (it contains NUL bytes"),
])
def test_standard_input_that_holds_no_script_is_refused(user, stdin, said):
    res = _piped(user, "submit", "--site", "alpha", "-", stdin=stdin)
    assert res.returncode == 2 and said in res.stderr, res.stderr
    assert sbatch_calls(user) == []


@pytest.mark.parametrize("args,said", [
    (["queue", "--", "-alpha"], "unknown site '-alpha' (did you mean alpha?"),
    (["queue", "../alpha"], "unknown site '../alpha' (did you mean alpha?"),
    (["status", "alpha:1;id"], "no job 'alpha:1;id' in the store"),
    (["cancel", "--", "-alpha:1"], "no job '-alpha:1' in the store"),
    (["translate", "--to", "pbs", "--from", "../slurm", "job.sh"],
     "unknown dialect '../slurm'; expected one of slurm, pbs, lsf, flux, sge"),
])
def test_a_site_job_or_dialect_shaped_as_an_attack_is_unknown_and_named(user, args, said):
    assert said in user.refused(*args)
    assert not (user.fake / "calls").exists() or sbatch_calls(user) == []


# ---- (3) the REST API ------------------------------------------------------------------------

async def _no_job(rest, tmp_path: Path) -> None:
    assert (await rest("GET", "jobs"))[1]["jobs"] == []
    assert here_sbatch_calls(tmp_path) == []


@pytest.mark.parametrize("body", [
    b'  \n\t{ "script" :\t"echo hi\\n" ,\r\n "site":"here" }  \n',
    b'\xef\xbb\xbf{"script": "echo hi\\n", "site": "here"}',
    b'{"script": "echo \\u00e9t\\u00e9\\n", "site": "here", "name": "\xe3\x82\xb8\xe3\x83\xa7"}',
])
async def test_json_laid_out_oddly_is_submitted(rest, tmp_path, body):
    code, reply = await rest("POST", "jobs", body)
    assert code == 201, reply
    assert reply["id"] == "here:4242" and len(here_sbatch_calls(tmp_path)) == 1


@pytest.mark.parametrize("body,said", [
    (b'{"script": "echo hi\\n", "site": "here", "origin": {"path": NaN}}',
     "origin.path is nan, which is no JSON number"),
    (b'{"script": "echo hi\\n", "site": "here", "origin": {"cell_id": 1e999}}',
     "origin.cell_id is inf, which is no JSON number"),
    (b'{"spec": {"script": "echo hi\\n", "metadata": {"x": [1, -Infinity]}}, "site": "here"}',
     "metadata.x[1] is -inf, which is no JSON number"),
    (b'{"spec": {"script": "echo hi\\n", "metadata": {"a": {"b": Infinity}}}, "site": "here"}',
     "metadata.a.b is inf, which is no JSON number"),
])
async def test_fault_a_number_json_cannot_spell_in_free_form_fields_is_a_400(rest, tmp_path,
                                                                             body, said):
    """`NaN`, `Infinity` and `1e999` (Python's reader takes them) in a submit's origin or a
    spec's metadata were stored as null, the value lost unsaid: the job was submitted."""
    code, reply = await rest("POST", "jobs", body)
    assert code == 400 and reply["reason"] == "bad-input", (code, reply)
    assert said in reply["message"] and "give a finite number, or null" in reply["message"]
    await _no_job(rest, tmp_path)


@pytest.mark.parametrize("jid,said", [
    ("here:12", "'here:12' names no job here can wait for (not a slurm job id), so the job "
                "would start at once instead of after it; did you mean 12, here's own id? "),
    ("--wrap=id", "'--wrap=id' names no job here can wait for (not a slurm job id)"),
    ("12;id", "'12;id' names no job here can wait for"),
    ("99999999999", "'99999999999' names no job here can wait for (job id 99999999999 is, "
                    "beyond slurm's job ids"),
])
async def test_fault_a_dependency_on_no_job_the_site_knows_is_a_400(rest, tmp_path, jid, said):
    """A spec's dependency whose id the site's scheduler cannot take (the API's own
    `here:12`, an option, shell syntax) was dropped with a warning, and the job submitted to
    start at once instead of after the job meant."""
    body = {"spec": {"script": "echo hi\n", "dependencies": [{"job_ids": [jid]}]},
            "site": "here"}
    code, reply = await rest("POST", "jobs", json.dumps(body).encode())
    assert code == 400 and reply["reason"] == "bad-input", (code, reply)
    assert said in reply["message"], reply
    assert "dependencies[0].job_ids[0]" in reply["message"]
    await _no_job(rest, tmp_path)


@pytest.mark.parametrize("spec,said", [
    ({"queue": "gpu,"}, "spec.queue 'gpu,' has an empty name in its list"),
    ({"reservation": ",maint"}, "spec.reservation ',maint' has an empty name in its list"),
])
async def test_fault_a_rest_name_list_with_an_empty_name_is_a_400(rest, tmp_path, spec, said):
    body = json.dumps({"spec": {"script": "echo hi\n", **spec}, "site": "here"}).encode()
    code, reply = await rest("POST", "jobs", body)
    assert code == 400 and said in reply["message"], (code, reply)
    await _no_job(rest, tmp_path)


@pytest.mark.parametrize("path", ["jobs", "place"])
async def test_fault_a_body_with_both_a_script_and_a_spec_is_a_400(rest, tmp_path, path):
    """`script` and `spec` both given: the spec ran and the script was ignored, unsaid."""
    body = {"script": "echo from-script\n", "spec": {"script": "echo from-spec\n"},
            "site": "here"}
    code, reply = await rest("POST", path, json.dumps(body).encode())
    assert code == 400 and reply["reason"] == "bad-input", (code, reply)
    assert "give `script` (batch script text) or `spec` (a JobSpec), not both" in \
        reply["message"], reply
    await _no_job(rest, tmp_path)


def test_fault_a_tool_call_with_both_a_script_and_a_spec_is_refused():
    with pytest.raises(BadInput, match=r"^submit: .*not both: the job is one of them, and the "
                                       r"other would be ignored"):
        skill_input("submit", {"script": "echo a\n", "spec": {"script": "echo b\n"}})


async def test_a_dependency_on_the_sites_own_job_id_is_submitted_with_it(rest, tmp_path):
    body = {"spec": {"script": "echo hi\n", "dependencies": [{"job_ids": ["12"]}]},
            "site": "here"}
    code, reply = await rest("POST", "jobs", json.dumps(body).encode())
    assert code == 201, reply
    [call] = here_sbatch_calls(tmp_path)
    assert "#SBATCH --dependency=afterok:12\n" in Path(call.split()[-1]).read_text()


@pytest.mark.parametrize("spec,said", [
    ({"queue": "--wrap=id"}, "spec.queue '--wrap=id' starts with '-'"),
    ({"account": "-delete"}, "spec.account '-delete' starts with '-'"),
    ({"qos": "--wrap=id"}, "spec.qos '--wrap=id' starts with '-'"),
    ({"reservation": "-x"}, "spec.reservation '-x' starts with '-'"),
    ({"working_directory": "-delete"}, "spec.working_directory '-delete' starts with '-'"),
    ({"stdout": "--wrap=id"}, "spec.stdout '--wrap=id' starts with '-'"),
    ({"environment": {"container_image": "--privileged"}},
     "spec.environment.container_image '--privileged' starts with '-'"),
    ({"environment": {"modules": ["-x"]}}, "spec.environment.modules[0]: '-x' is not a module"),
    ({"environment": {"variables": {"-x": "1"}}}, "name '-x' is not a variable name"),
    ({"resources": {"gpu_type": "-x"}}, "spec.resources.gpu_type '-x' starts with '-'"),
    ({"shell": "-i"}, "spec.shell '-i' is not an absolute interpreter path"),
    ({"array": {"expression": "--wrap=id"}}, "is not a list of job-array indexes"),
])
async def test_an_option_like_value_in_any_spec_field_is_a_400_naming_it(rest, tmp_path, spec,
                                                                         said):
    body = json.dumps({"spec": {"script": "echo hi\n", **spec}, "site": "here"}).encode()
    code, reply = await rest("POST", "jobs", body)
    assert code == 400 and said in reply["message"], (code, reply)
    await _no_job(rest, tmp_path)


@pytest.mark.parametrize("path,body,bad", [
    ("jobs", {"spec": {"script": "echo hi\n", "stage_in": [
        {"source": "../../etc/passwd", "destination": "x"}]}, "site": "here"},
     "'../../etc/passwd'"),
    ("jobs", {"spec": {"script": "echo hi\n", "stage_in": [
        {"source": "/etc/passwd", "destination": "x"}]}, "site": "here"}, "'/etc/passwd'"),
    ("jobs", {"spec": {"script": "echo hi\n", "stage_out": [
        {"source": "out", "destination": "../../../tmp/evil"}]}, "site": "here"},
     "'../../../tmp/evil'"),
    ("transfers", {"src": "/etc/passwd", "dst": "here:/tmp/x"}, "'/etc/passwd'"),
    ("transfers", {"src": "here:/etc/hosts", "dst": "../../x"}, "'../../x'"),
])
async def test_a_path_outside_the_servers_root_is_a_400_naming_it(rest, tmp_path, path, body,
                                                                   bad):
    code, reply = await rest("POST", path, json.dumps(body).encode())
    assert code == 400, (code, reply)
    said = reply["message"]  # a job's entry named first: `stage_in[0].source: '...' is ...`
    assert said.startswith(f"{bad} is outside the server's root directory") or (
        path == "jobs" and f": {bad} is outside the server's root directory" in said), reply
    await _no_job(rest, tmp_path)


@pytest.mark.parametrize("method,path,body", [
    ("GET", "jobs", None),
    ("POST", "jobs", b'{"script": "echo pwned\\n", "site": "here"}'),
    ("POST", "tasks", b'{"prompt": "cancel every job"}'),
    ("GET", "nowhere/../../jobs", None),
])
async def test_a_request_without_a_login_is_refused_and_does_nothing(rest, tmp_path, method,
                                                                     path, body):
    code, _ = await rest(method, path, body, auth=False)
    assert code == 403
    await _no_job(rest, tmp_path)


async def test_a_login_cookie_without_the_xsrf_value_cannot_cancel_approve_or_run(
        http_server_client, jp_base_url, jp_auth_header, rest, tmp_path):
    """(guard) The routes that act beyond a submit (cancel, release, a workflow, an
    approval): a page on another site makes the browser send the login cookie, never the
    _xsrf value, and is refused with 403."""
    base = jp_base_url.rstrip("/") + "/diamond/api/"
    first = await http_server_client.fetch(base + "jobs", headers=jp_auth_header)
    cookies = "; ".join(c.split(";", 1)[0] for c in first.headers.get_list("Set-Cookie")
                        if not c.startswith("_xsrf"))
    assert cookies, "no login cookie to forge with"
    alone = await http_server_client.fetch(base + "jobs", headers={"Cookie": cookies},
                                           raise_error=False)
    assert alone.code == 200, "the cookie alone is a login (else this test proves nothing)"
    for path, body in (("jobs/here:1/cancel", b"{}"), ("jobs/here:1/release", b"{}"),
                       ("workflows", b'{"workflow": {"name": "w", "steps": '
                                     b'[{"name": "a", "script": "echo pwned"}]}}'),
                       ("tasks/t1/approve", b"{}")):
        resp = await http_server_client.fetch(
            base + path, method="POST", body=body, raise_error=False,
            headers={"Cookie": cookies, "Content-Type": "application/x-www-form-urlencoded"})
        assert resp.code == 403, (path, resp.code, resp.body)
    await _no_job(rest, tmp_path)
    assert (await rest("GET", "workflows"))[1]["workflows"] == []


async def test_a_body_past_the_limit_is_a_413_naming_the_limit(rest, tmp_path):
    big = json.dumps({"script": "echo hi\n" + "#" * (5 << 20), "site": "here"}).encode()
    code, reply = await rest("POST", "jobs", big)
    assert code == 413 and reply["reason"] == "too-large", (code, reply)
    assert reply["message"].startswith(f"the request body is {len(big)} bytes; this server "
                                       "accepts at most 5242880 (DiamondApp.max_body_bytes)")
    await _no_job(rest, tmp_path)


@pytest.mark.parametrize("query,said", [
    ("jobs?limit=99999999999999999999999",
     f"limit: {LISTED}500, not '99999999999999999999999'"),
    ("jobs?limit=1e3", f"limit: {LISTED}500, not '1e3'"),
    ("jobs?limit=-1", f"limit: {LISTED}500, not '-1'"),
    ("jobs?offset=%EF%BC%95", "offset must be an integer, not '\uff15'"),
    ("events?since=-5", "since must be between 0 and 9223372036854775807"),
])
async def test_a_query_number_past_its_bound_is_a_400_naming_it(rest, query, said):
    code, reply = await rest("GET", query)
    assert (code, reply["message"]) == (400, said), reply


@pytest.mark.parametrize("path,said", [
    ("jobs/..%2F..%2Fetc", "job ID '../../etc' is malformed: expected SITE:NUMBER"),
    ("sites/..%2F..", "unknown site '../..'"),
    ("sites/here%00", "unknown site 'here\\x00'"),
])
async def test_a_traversal_in_a_path_argument_names_nothing_and_is_a_404(rest, path, said):
    code, reply = await rest("GET", path)
    assert code == 404 and reply["message"].startswith(said), (code, reply)


@pytest.mark.parametrize("body,said", [
    ({"script": "echo hi\n", "site": "--wrap=id"}, "unknown site '--wrap=id' (known: here)"),
    ({"script": "echo hi\n", "site": "here", "dialect": "-x"},
     "unknown dialect '-x' (accepted: slurm, pbs, lsf, flux, sge)"),
    ({"script": "echo hi\n", "site": "here", "hedge": -1},
     "hedge: expected a whole number from 1 to 8, not -1"),
    ({"script": "echo hi\n", "site": "here", "hedge": 2**64 + 1},
     "hedge: expected a whole number from 1 to 8, not 18446744073709551617"),
])
async def test_a_submits_own_field_out_of_its_range_is_a_400(rest, tmp_path, body, said):
    code, reply = await rest("POST", "jobs", json.dumps(body).encode())
    assert code == 400 and said in reply["message"], (code, reply)
    await _no_job(rest, tmp_path)


# ---- (4) the magics --------------------------------------------------------------------------

def test_a_magic_submit_with_a_name_in_another_script_is_submitted(shell, user):
    shell.run_cell_magic("diamond", "submit --site alpha --name 'ジョブ-1'", SCRIPT)
    assert "ジョブ-1" in submitted_script(user)


@pytest.mark.parametrize("line,said", [
    ("submit --site alpha --partition=--wrap=id", "--partition '--wrap=id' starts with '-'"),
    ("submit --site alpha --container=-v", "--container '-v': expected an image"),
])
def test_a_magic_option_like_value_is_refused(shell, user, capsys, line, said):
    assert_magic_refused(shell, user, capsys, line, SCRIPT, said)


def test_fault_a_magic_software_of_commas_alone_is_refused(shell, user, capsys):
    assert_magic_refused(shell, user, capsys, "submit --site alpha --software ,", SCRIPT,
                         "--software ',' names no software")


def test_fault_a_magic_time_limit_too_long_is_said_in_the_minutes_given(shell, user, capsys):
    assert_magic_refused(shell, user, capsys, "submit --site alpha --time 999999999999",
                         SCRIPT, "--time 59999999999940 s (999999999999 minutes) is too long")


# ---- (5) the agent's and MCP's skills --------------------------------------------------------

@pytest.mark.parametrize("spec,said", [
    ({"metadata": {"ratio": float("nan")}}, "metadata.ratio is nan, which is no JSON number"),
    ({"metadata": {"r": [float("inf")]}}, "metadata.r[0] is inf, which is no JSON number"),
])
def test_fault_a_tool_calls_metadata_that_json_cannot_spell_is_refused(spec, said):
    with pytest.raises(BadInput) as told:
        skill_input("submit", {"spec": {"script": "echo hi\n", **spec}})
    assert said in str(told.value), told.value


async def test_an_mcp_submit_with_an_option_like_directory_is_refused(user):
    said = await sweep_helpers.mcp_refusal(user, "submit", {
        "spec": {"script": "echo hi\n", "working_directory": "--wrap=id"}, "site": "alpha"})
    assert "working_directory '--wrap=id' starts with '-'" in said, said
    assert sbatch_calls(user) == []


@pytest.mark.parametrize("spec,said", [
    ({"queue": "gpu,"}, "spec.queue 'gpu,' has an empty name in its list"),
    ({"metadata": {"ratio": float("inf")}}, "metadata.ratio is inf, which is no JSON number"),
])
async def test_fault_an_mcp_submit_with_an_empty_name_or_unspellable_number_is_refused(
        user, spec, said):
    said_back = await sweep_helpers.mcp_refusal(user, "submit", {
        "spec": {"script": "echo hi\n", **spec}, "site": "alpha"})
    assert said in said_back, said_back
    assert sbatch_calls(user) == []


async def test_an_mcp_submit_staging_from_outside_its_root_is_refused(user):
    said = await sweep_helpers.mcp_refusal(user, "submit", {
        "spec": {"script": "echo hi\n", "stage_in": [
            {"source": "../../etc/passwd", "destination": "passwd"}]}, "site": "alpha"})
    assert "'../../etc/passwd' is outside" in said, said
    assert sbatch_calls(user) == []


async def test_fault_an_agents_dependency_on_no_job_of_the_site_is_refused(engine, tmp_path):
    with pytest.raises(BadInput, match=r"'alpha:7' names no job here can wait for .* did you "
                                       r"mean 7, alpha's own id\?"):
        await run_skill(SkillContext(engine), "submit", {
            "spec": {"script": "echo hi\n", "dependencies": [{"job_ids": ["alpha:7"]}]},
            "site": "here"})
    assert here_sbatch_calls(tmp_path) == []


# ---- (6) what an approval shows is what runs -------------------------------------------------

ASKED = {"script": "#!/bin/bash\n#SBATCH -J approved\n#SBATCH --time=5\necho 'as shown'\n",
         "site": "here"}


async def _plan(engine) -> dict[str, Any]:
    with pytest.raises(NeedsApproval) as asked:
        await run_skill(SkillContext(engine, approval="ask"), "submit", ASKED)
    return asked.value.plan


async def test_the_script_sbatch_is_given_is_the_one_the_approval_showed(engine, tmp_path):
    plan = await _plan(engine)
    assert here_sbatch_calls(tmp_path) == []  # only asked
    out = await run_skill(SkillContext(engine, approved=plan), "submit", ASKED)
    [call] = here_sbatch_calls(tmp_path)
    ran = Path(call.split()[-1]).read_text()
    assert ran == plan["script"]
    assert hashlib.sha256(ran.encode()).hexdigest() == plan["script_sha256"]
    assert out.job.id == "here:4242" and f"jobs/{plan['submission']}/" in call


@pytest.mark.parametrize("edit,said", [
    (lambda p: {**p, "script": p["script"] + "echo shown but never run\n"},
     "the batch script for here that the approved plan shows is not the one it would run"),
    (lambda p: {**p, "spec": {**p["spec"], "script": "echo shown but never run\n"}},
     "the job for here that the approved plan shows (its spec) is not the one it would run"),
])
async def test_fault_an_approved_plan_showing_another_script_than_it_runs_asks_again(
        engine, tmp_path, edit, said):
    """A plan whose shown script (or job) differs from the one its script_sha256 names ran
    the named one: what was approved was not what was shown. Now asked again, nothing run."""
    plan = edit(await _plan(engine))
    with pytest.raises(NeedsApproval) as again:
        await run_skill(SkillContext(engine, approved=plan), "submit", ASKED)
    assert again.value.plan["changed"].startswith(said), again.value.plan["changed"]
    assert here_sbatch_calls(tmp_path) == []


async def test_an_approval_given_to_other_arguments_asks_again(engine, tmp_path):
    plan = await _plan(engine)
    other = {**ASKED, "script": ASKED["script"] + "rm -rf ~/results\n"}
    with pytest.raises(NeedsApproval) as again:
        await run_skill(SkillContext(engine, approved=plan), "submit", other)
    assert again.value.plan["changed"] == "the batch script for here would differ from the " \
                                          "approved one"
    assert "rm -rf ~/results" in again.value.plan["script"]  # the new one is what is shown
    assert here_sbatch_calls(tmp_path) == []

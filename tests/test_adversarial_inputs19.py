"""Sweep 19 of hostile and new-user inputs, through the faces and everyday use, without the
test bed: an SSH door that refuses the login at the moment of a submit (a real private sshd, a
real keyboard-interactive server), `diamond logs --follow --stderr`, `diamond submit`'s
resource options in forms a user may type, sites files reached through link loops, REST bodies
built to break a JSON parser, magic cells of comments alone, forged notebook outputs, and an
agent plan naming no real tool or the same submit twice.

The standard is the earlier sweeps': a hostile input is answered with an error naming what was
wrong, where, and what would be accepted, never a traceback, and nothing is lost or sent.
Tests marked `fault` failed before this sweep's fixes; the others are guards."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sweep_helpers
import yaml
from sshd_helper import MfaSshServer, keygen
from sweep_helpers import assert_magic_refused, mcp_refusal, sbatch_calls

from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput, JobSpec, JobState
from diamond_jupyter.store import Store
from diamond_jupyter.transports import AuthError, HostKeyError

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
user, shell, jp_server_config, rest = sweep_helpers.FACES_FIXTURES

# ---- (1) the SSH door refuses the login as a job is submitted: closed at once ----

def _ssh_site_fed(tmp_path: Path, *, port: int, user: str, key: Path, known_hosts: Path,
                  ssh_config: Path) -> Federation:
    site = {"name": "alpha", "scheduler": "slurm", "workdir": str(tmp_path / "wd"),
            "transport": {"kind": "ssh", "host": "127.0.0.1", "port": port, "user": user,
                          "key_file": str(key), "known_hosts": str(known_hosts),
                          "use_agent": False, "ssh_config": str(ssh_config),
                          "connect_timeout_s": 5, "reconnect_attempts": 1}}
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [site]}))
    return Federation(sites, store=Store(tmp_path / "store.sqlite"), poll_interval_s=3600,
                      min_poll_s=3600)


async def _submit_refused_at_the_door(fed: Federation, tmp_path: Path) -> Exception:
    """A forced submit to alpha, which must fail; its intent must be closed already (never
    submitted, FAILED, no native id) and nothing must have run on the site."""
    spec = JobSpec(name="door", command=f"touch {tmp_path / 'ran'}",
                   working_directory=str(tmp_path))
    with pytest.raises((AuthError, HostKeyError)) as told:
        await fed.submit(spec, "alpha", force=True)
    assert fed.store.intents_without_native_id() == []  # closed, not left to the settle time
    [job] = fed.store.list_jobs()
    assert job.state == JobState.FAILED and job.native_id is None
    assert "alpha: the submit could not be sent" in (job.reason or "")
    assert not (tmp_path / "ran").exists() and not (tmp_path / "wd").exists()
    return told.value


async def test_fault_a_key_the_site_refuses_closes_the_submit_at_once(own_sshd, tmp_path):
    d = own_sshd
    wrong = keygen(tmp_path / "not_authorized")
    fed = _ssh_site_fed(tmp_path, port=d.port, user=d.user, key=wrong,
                        known_hosts=d.base / "known_hosts",
                        ssh_config=d.base / "empty_ssh_config")
    try:
        e = await _submit_refused_at_the_door(fed, tmp_path)
        assert str(e).startswith("alpha: authentication failed for ")
        assert "(tried publickey not_authorized)" in str(e)
        assert str(e).endswith(
            "; nothing was submitted: check alpha's credentials in the sites file (key_file, "
            "cert_file, the ssh_config's IdentityFile or the agent) and that the site accepts "
            "that key, then submit again")
    finally:
        await fed.close()


async def test_fault_a_key_revoked_while_connected_closes_the_next_submit_at_once(
        own_sshd, tmp_path):
    """Connected with a good key; the site then revokes it and drops the link: the submit's
    reconnect is refused before the command goes."""
    d = own_sshd
    fed = _ssh_site_fed(tmp_path, port=d.port, user=d.user, key=d.client_key,
                        known_hosts=d.base / "known_hosts",
                        ssh_config=d.base / "empty_ssh_config")
    try:
        assert (await fed.site("alpha").run(["echo", "in"])).stdout == "in\n"
        (d.base / f"authorized_keys.{d.user}").write_text("")
        d.kill_connections()
        e = await _submit_refused_at_the_door(fed, tmp_path)
        assert "nothing was submitted: check alpha's credentials" in str(e)
    finally:
        await fed.close()


async def test_fault_a_host_key_that_changed_closes_the_submit_at_once(own_sshd, tmp_path):
    d = own_sshd
    other = keygen(tmp_path / "other_host")
    pub = Path(f"{other}.pub").read_text().split()
    (tmp_path / "known_hosts").write_text(f"[127.0.0.1]:{d.port} {pub[0]} {pub[1]}\n")
    fed = _ssh_site_fed(tmp_path, port=d.port, user=d.user, key=d.client_key,
                        known_hosts=tmp_path / "known_hosts",
                        ssh_config=d.base / "empty_ssh_config")
    try:
        e = await _submit_refused_at_the_door(fed, tmp_path)
        assert isinstance(e, HostKeyError)
        assert str(e).endswith("; nothing was submitted: check alpha's host key (known_hosts) "
                               "before submitting again")
    finally:
        await fed.close()


@pytest.mark.parametrize("answer, why", [
    ("000000", "the one-time code was not accepted"),
    (None, "no one-time code was given"),
])
async def test_fault_a_one_time_code_refused_at_submit_closes_it_and_says_log_in(
        own_sshd, tmp_path, answer, why):
    srv = MfaSshServer(tmp_path, own_sshd.client_key)
    (tmp_path / "known_hosts").write_text(srv.known_hosts_line())
    (tmp_path / "ssh_config").write_text("")
    fed = _ssh_site_fed(tmp_path, port=srv.port, user=srv.user, key=own_sshd.client_key,
                        known_hosts=tmp_path / "known_hosts", ssh_config=tmp_path / "ssh_config")
    asked: list[object] = []

    def ask(title, instructions, prompts):
        asked.append(prompts)
        if answer is None:
            raise RuntimeError("the dialog was closed")
        return [answer]

    fed.set_interactive_handler(ask)
    try:
        e = await _submit_refused_at_the_door(fed, tmp_path)
        assert isinstance(e, AuthError) and e.interactive  # the faces' "log in" cue kept
        assert why in str(e) and len(asked) == 1  # asked once, never again by itself
        assert str(e).endswith("; nothing was submitted: log in to alpha (`diamond login "
                               "alpha`, or the site's Log in button in JupyterLab), then "
                               "submit again")
        assert fed.needs_login("alpha")
        # the next submit is refused at once too, without a prompt or a connection
        connections = srv.connections
        spec = JobSpec(name="again", command="true", working_directory=str(tmp_path))
        with pytest.raises(AuthError, match="nothing was submitted: log in to alpha"):
            await fed.submit(spec, "alpha", force=True)
        assert srv.connections == connections and len(asked) == 1
        assert fed.store.intents_without_native_id() == []
        assert {j.state for j in fed.store.list_jobs()} == {JobState.FAILED}
    finally:
        await fed.close()
        srv.stop()



@pytest.mark.parametrize("status", [401, 403])
async def test_fault_a_slurmrestd_token_refused_at_submit_closes_it_at_once(tmp_path, status):
    """slurmrestd refusing the site's token at the submit (after one more try with a fresh
    token): the job was never taken, so the intent is closed at once, and the user told to
    check the token; it was a plain site failure that left the intent open."""
    from stand_in_slurmrestd import StandInSlurmrestd, jwt_file

    def answer(method: str, path: str, body: bytes):
        return status, '{"errors": [{"error": "authentication failed"}]}'

    async with StandInSlurmrestd(answer=answer) as rest:
        jwt = jwt_file(tmp_path)
        jwt.chmod(0o600)
        site = {"name": "alpha", "workdir": "/home/u/.diamond",
                "transport": {"kind": "slurmrestd", "url": rest.url, "user": "u",
                              "token_file": str(jwt)}}
        sites = tmp_path / "sites.yaml"
        sites.write_text(yaml.safe_dump({"sites": [site]}))
        fed = Federation(sites, store=Store(tmp_path / "store.sqlite"), poll_interval_s=3600,
                         min_poll_s=3600)
        try:
            spec = JobSpec(name="door", command="true", working_directory="/home/u")
            with pytest.raises(AuthError) as told:
                await fed.submit(spec, "alpha", force=True)
            assert str(told.value) == (
                f"alpha: slurmrestd refused the token for u (HTTP {status}); nothing was "
                "submitted: check the token alpha is given (token_command or token_file in "
                "its sites entry) and that slurmrestd takes it for this user, then submit "
                "again")
            assert fed.store.intents_without_native_id() == []
            [job] = fed.store.list_jobs()
            assert job.state == JobState.FAILED and job.native_id is None
            assert rest.asked.count("submit") == 2  # once, then once with a fresh token
        finally:
            await fed.close()

# ---- (3) `diamond submit` options in the forms a user types ---------------------------------

@pytest.mark.parametrize("args,said", [
    (["--time", "1-"], "argument --time: expected minutes, HH:MM:SS or D-HH[:MM[:SS]], not '1-'"),
    (["--time", "-1"], "argument --time: expected minutes, HH:MM:SS or D-HH[:MM[:SS]], not "
                       "'-1'"),
    (["--time", "1e3"], "argument --time: expected minutes, HH:MM:SS or D-HH[:MM[:SS]], not "
                        "'1e3'"),
    (["--time", "25:61"], "argument --time: 61 seconds is out of range (minutes and seconds run "
                          "0-59, hours 0-23 after a day; 00:26:01 is the same time written in "
                          "range), not '25:61'"),
    (["--nodes", "0"], "argument --nodes: expected a whole number, 1 or more, not '0'"),
    (["--gpus", "1.5"], "argument --gpus: expected a whole number, 0 or more, not '1.5'"),
    (["--mem", "10XB"], "--memory '10XB': expected a size such as 4G or 500M (a number above "
                        "0 with an optional K, M, G or T unit)"),
    (["--mem=-5G"], "--memory '-5G': expected a size such as 4G or 500M"),
    (["--array", "1-1000000"], "unknown option --array (did you mean --arch?"),
])
def test_a_submit_option_in_a_form_no_scheduler_reads_is_refused_naming_it(user, args, said):
    """(guard) Each refused on the command line, naming the option, the value and the forms
    taken; nothing reaches sbatch."""
    line = user.refused("submit", "--site", "alpha", *args, "job.sh")
    assert said in line, line
    assert sbatch_calls(user) == []


@pytest.mark.parametrize("option,value", [("--mem", "-5G"), ("--name", "-rf")])
def test_fault_a_value_starting_with_a_dash_says_how_to_give_it(user, option, value):
    """`--mem -5G` said only "expected one argument" (argparse read -5G as an option); now
    it names the value and how to write it if it is meant."""
    line = user.refused("submit", "--site", "alpha", option, value, "job.sh")
    assert line.endswith(f"expected one argument ({value!r} after {option} starts with '-', "
                         f"so it was read as an option; if it is the value, write "
                         f"{option}={value})"), line
    assert sbatch_calls(user) == []


def _site_with_max_array_size(user, size: int = 1001) -> None:
    """alpha's fake Slurm on PATH (every command a site runs, `sh -c` lines too), whose
    `scontrol show config` says MaxArraySize."""
    scontrol = user.fake / "scontrol"
    scontrol.unlink()
    scontrol.write_text(f'#!/bin/sh\necho "scontrol $*" >> {user.fake}/calls\n'
                        f'[ "$1 $2" = "show config" ] && echo "MaxArraySize            = '
                        f'{size}"\nexit 0\n')
    scontrol.chmod(0o755)
    user.write("sites.yaml", f"sites:\n  - name: alpha\n    transport: {{kind: local}}\n"
                             f"    preamble: 'PATH={user.fake}:\"$PATH\"; export PATH'\n"
                             f"store: {user.store_path}\n")


@pytest.mark.parametrize("site", [["--site", "alpha"], []], ids=["explicit", "placed"])
def test_fault_an_array_past_the_sites_max_array_size_is_refused_before_sbatch(user, site):
    """`#SBATCH --array=1-1000000` on a site whose MaxArraySize is 1001 went to sbatch, which
    refuses it; now it is refused first, naming the limit, where it was read and what to do."""
    _site_with_max_array_size(user)
    user.write("big.sh", "#!/bin/bash\n#SBATCH --array=1-1000000\necho $SLURM_ARRAY_TASK_ID\n")
    line = user.refused("submit", *site, "big.sh")
    assert ("alpha: array index 1000000 (--array=1-1000000) is above this site's largest, 1000 "
            "(MaxArraySize=1001 in `scontrol show config`): sbatch refuses it; keep its "
            "indexes within 0-1000 (several arrays, each job adding its own offset to "
            "$SLURM_ARRAY_TASK_ID)").removeprefix("alpha: ") in line, line
    assert sbatch_calls(user) == []


def test_an_array_within_the_sites_max_array_size_is_submitted(user):
    """(guard) 0-1000%10 on a site whose MaxArraySize is 1001: its largest index, 1000, fits."""
    _site_with_max_array_size(user)
    user.write("ok.sh", "#!/bin/bash\n#SBATCH --array=0-1000%10\necho $SLURM_ARRAY_TASK_ID\n")
    assert user.run("submit", "--site", "alpha", "ok.sh", code=0).stdout == "alpha:4242\n"
    [call] = sbatch_calls(user)
    assert "#SBATCH --array=0-1000%10\n" in Path(call.split()[-1]).read_text()


def test_fault_max_array_size_is_read_from_scontrol_show_config():
    from diamond_jupyter.dialects.slurm_commands import SlurmCommands

    read = SlurmCommands.parse_max_array_size
    assert read("ClusterName = a\nMaxArraySize            = 40001\nMaxJobCount = 1\n") == 40001
    assert read("MaxArraySize = 0\n") is None  # arrays off: left to sbatch, which says so
    assert read("MaxArraySize = lots\n") is None and read("") is None


@pytest.mark.parametrize("links", [("a.yaml", "b.yaml"), ("self.yaml",)])
def test_a_sites_file_reached_only_through_a_link_loop_is_refused_naming_it(user, links):
    """(guard) A sites file that is a loop of links (two pointing at each other, or one at
    itself): refused naming the file and the loop, nothing started."""
    for name, target in zip(links, links[1:] + links[:1], strict=True):
        (user.root / name).symlink_to(target)
    path = user.root / links[0]
    line = user.refused("jobs", "--config", str(path))
    assert line == (f"diamond: sites file {path} cannot be read: Too many levels of symbolic "
                    "links"), line


# ---- (3) a job id of 10 kB, through every face --------------------------------------------

LONG_ID = "alpha:" + "1" * 10_000
SHOWN_LONG = "'alpha:1111111111111111111111111111111111'... (10006 characters)"


def test_fault_a_10_kb_job_id_is_named_by_its_start_and_length_on_the_command_line(user):
    """A pasted 10 kB id was echoed whole in its error (a 10 kB line); now its start and
    length."""
    user.job("alpha:7")
    line = user.refused("status", LONG_ID)
    assert line == (f"diamond: no job {SHOWN_LONG} in the store (`diamond jobs` lists the "
                    "known ones)"), line
    line = user.refused("logs", "x" * 10_000)
    assert line == ("diamond: job ID 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'... (10000 "
                    "characters) is malformed: expected SITE:NUMBER, e.g. alpha:42 (or a job's "
                    "submission token)"), line


def test_fault_a_10_kb_job_id_in_a_magic_is_named_by_its_start_and_length(shell, user, capsys):
    assert_magic_refused(shell, user, capsys, f"status {LONG_ID}", None, SHOWN_LONG)


async def test_fault_a_10_kb_job_id_over_mcp_is_named_by_its_start_and_length(user):
    said = await mcp_refusal(user, "status", {"job_id": LONG_ID})
    assert SHOWN_LONG in said and len(said) < 300, said


@pytest.mark.parametrize("method,path", [("GET", "jobs/{id}"), ("GET", "jobs/{id}/logs"),
                                         ("POST", "jobs/{id}/cancel")])
async def test_fault_a_10_kb_job_id_in_a_rest_path_is_a_short_404(rest, method, path):
    long_id = "here:" + "1" * 10_000
    code, reply = await rest(method, path.format(id=long_id),
                             b"{}" if method == "POST" else None)
    assert (code, reply) == (404, {"reason": "not-found", "message": (
        "no job 'here:11111111111111111111111111111111111'... (10005 characters) in the store "
        "(`diamond jobs` lists the known ones)")}), (code, str(reply)[:300])


@pytest.mark.parametrize("auth,xsrf", [(False, False), (False, True)])
async def test_a_rest_submit_without_the_token_is_refused_and_runs_nothing(rest, auth, xsrf):
    """(guard) POST jobs without the token (with or without an XSRF header and cookie of
    one's own making): 403, no job."""
    headers = {"X-XSRFToken": "forged", "Cookie": "_xsrf=forged"} if xsrf else {}
    code, reply = await rest("POST", "jobs", b'{"script": "echo hi", "site": "here"}',
                             auth=auth, headers=headers)
    assert code == 403, (code, reply)
    assert (await rest("GET", "jobs"))[1]["jobs"] == []


@pytest.mark.parametrize("body,said", [
    (b'{"spec": {"script": "echo hi", "resources": {"nodes": 1e309}}, "site": "here"}',
     "spec.resources.nodes: the number is out of range (beyond what a JSON number holds, it "
     "reads as infinity); give a whole number from 0 to 9007199254740992"),
    (b'{"spec": {"script": "echo hi", "resources": {"walltime_s": -1e400}}, "site": "here"}',
     "spec.resources.walltime_s: the number is out of range (beyond what a JSON number holds, "
     "it reads as infinity); give a whole number from 1 to 257698037640"),
    (b'{"spec": {"script": "echo hi", "components": [{"nodes": 1}, {"gpus_per_node": 1e309}]}}',
     "spec.components.1.gpus_per_node: the number is out of range (beyond what a JSON number "
     "holds, it reads as infinity); give a whole number from 0 to 9007199254740992"),
    (b'{"script": "echo hi", "hedge": 1e309}', "hedge: the number is out of range (beyond "
     "what a JSON number holds, it reads as infinity); give a whole number from 1 to 8"),
    (b'{"spec": {"script": "echo hi", "resources": {"nodes": 1.5}}, "site": "here"}',
     "spec.resources.nodes: Input should be a valid integer, got a number with a fractional "
     "part"),
    (b'{"script": "echo hi", "site": "here", "site": "auto"}',
     "the request body gives the key 'site' twice in one object; give each key once"),
    (b'{"script": "echo hi", "origin": ' + b'{"a":' * 10_000 + b"1" + b"}" * 10_000 + b"}",
     "the request body nests lists or objects too deeply to read; give it a flatter shape"),
])
async def test_a_rest_body_built_to_break_the_json_reader_is_a_400_naming_it(rest, body, said):
    """(guard) 1e309 (infinity to Python's reader), a fraction for a count, a key given
    twice, objects nested 10,000 deep: 400 naming the field, no job."""
    code, reply = await rest("POST", "jobs", body)
    assert (code, reply) == (400, {"reason": "bad-input", "message": said}), (code, reply)
    assert (await rest("GET", "jobs"))[1]["jobs"] == []


@pytest.mark.parametrize("args,said", [
    ({"script": "echo hi", "hedge": float("inf")}, "hedge: the number is out of range (beyond "
     "what a JSON number holds, it reads as infinity); give a whole number from 1 to 8"),
    ({"spec": {"script": "echo hi", "resources": {"memory_mb": float("-inf")}}},
     "spec.resources.memory_mb: the number is out of range (beyond what a JSON number holds, "
     "it reads as infinity); give a whole number from 0 to 9007199254740992"),
])
def test_an_agent_or_mcp_submit_with_an_infinite_number_says_the_range(args, said):
    """The agent's and the MCP server's submit tool read 1e309 as the REST API does."""
    from diamond_jupyter.skills import skill_input

    with pytest.raises(BadInput) as told:
        skill_input("submit", args)
    assert str(told.value) == f"submit: {said}"


# ---- (3) a magic cell of comments alone -----------------------------------------------------

@pytest.mark.parametrize("cell", ["# only a comment\n", "#!/bin/bash\n# a\n\n   # b\n",
                                  "#SBATCH -n 1\n#SBATCH -t 5\n"])
def test_a_submit_cell_of_comments_alone_is_refused_saying_it_runs_nothing(shell, user, capsys,
                                                                           cell):
    """(guard) `%%diamond submit` with a body of comments (or directives) alone."""
    assert_magic_refused(shell, user, capsys, "submit --site alpha", cell,
                         "the job has no script body or command: a script of only directives "
                         "and comments runs nothing; write the commands the job runs after "
                         "its directives")


async def test_a_submit_tool_call_of_comments_alone_is_refused_over_mcp(user):
    said = await mcp_refusal(user, "submit", {"script": "# only\n# comments\n",
                                              "site": "alpha"})
    assert "a script of only directives and comments runs nothing" in said, said


# ---- (3) the agent: a tool that does not exist, the same submit twice in one reply ----------

async def _agent_turn(user, fake_llm, calls: list[Any]) -> tuple[list[dict], list, Any]:
    """The model answers "go" with `calls` in one reply (approval "ask"); every approval asked
    is approved. The approvals shown (pending, in order), the tool results the model was
    sent, and the ended task."""
    from fake_llm import text, tool_results

    from diamond_jupyter.agent.service import AgentService
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.store import Store

    told: list[tuple[str, Any, bool]] = []

    def after(body):
        told.extend(tool_results(body))
        return [text("done")]

    fake_llm.script(calls, after)
    fed = Federation(user.sites, store=Store(user.store_path))
    service = AgentService(fed)
    shown: list[dict] = []
    try:
        task = await service.ask("go", approval="ask")
        while (now := await service.wait(task["id"], settled=True, timeout=60))["state"] \
                == "awaiting_approval":
            shown.append(now["pending"])
            await service.approve(task["id"], now["pending"]["plan_sha256"])
        return shown, told, now
    finally:
        await service.close()
        await fed.close()


async def test_a_tool_that_does_not_exist_is_told_to_the_model_and_the_rest_run(user,
                                                                               fake_llm):
    """(guard) A reply calling `delete_everything` then `status`: the first is an error the
    model is told (naming the tools there are), the second runs; nothing is submitted."""
    from fake_llm import tool_use

    user.job("alpha:7")
    shown, told, done = await _agent_turn(user, fake_llm, [
        tool_use("delete_everything", {"really": True}), tool_use("status",
                                                                   {"job_id": "alpha:7"})])
    assert done["state"] == "done" and shown == [], done
    [(_, said, is_error), (_, status, ok_error)] = told
    assert is_error and str(said).startswith("unknown skill 'delete_everything' (known: ")
    assert "submit" in str(said) and not ok_error and "alpha:7" in json.dumps(status)
    assert sbatch_calls(user) == []


async def test_fault_the_same_submit_twice_in_one_reply_says_so_at_its_approval(user,
                                                                              fake_llm):
    """A reply asking the same submit twice: each was shown for approval alike, so the
    second looked like the first shown again; now the second's plan warns that call 1 asked
    the same and made a job, and approving it makes a second one (both shown, both run)."""
    from fake_llm import tool_use

    from diamond_jupyter.federation_plan import describe_plan

    args = {"script": "#!/bin/sh\necho hi\n", "site": "alpha"}
    shown, told, done = await _agent_turn(user, fake_llm, [tool_use("submit", args),
                                                            tool_use("submit", args)])
    assert done["state"] == "done", done
    first, second = shown
    assert not first["plan"].get("warnings")
    warning = ("call 1 of this reply asked the same submit with the same input (it made "
               "alpha:4242): approving this one does it a second time")
    assert second["plan"]["warnings"] == [warning]
    assert f"  warning: {warning}" in describe_plan(second["plan"]).splitlines()
    assert len(sbatch_calls(user)) == 2 and [e for _, _, e in told] == [False, False]

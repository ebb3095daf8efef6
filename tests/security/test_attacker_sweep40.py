"""Security sweep 40: an attacker's inputs on every face, without the test bed.

Shell syntax, line breaks, leading dashes, NUL, over-long values and characters that do not
show as themselves in a job's name, partition, account, working directory, array spec,
dependency and a workflow step's name, through the CLI, REST, the magics, MCP and a workflow
file; a job's output file that is a link to the user's SSH key or a FIFO; secrets from the
environment echoed back by a site; REST calls with a wrong token or the token in the URL; a
sites file whose known_hosts is /dev/null. Each attack must fail safely: refused with an error
naming the field, or carried as data, and nothing runs that the user did not write."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
from pathlib import Path

import pytest
import sweep_helpers
from one_site_engine import local_home_federation
from sweep_helpers import (
    assert_magic_refused,
    mcp_refusal,
    sbatch_calls,
    submitted_script,
)

from diamond_jupyter.config import load_config
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput, JobSpec
from diamond_jupyter.store import redact
from diamond_jupyter.workflow.model import load_workflow

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
user, shell, jp_server_config, rest = sweep_helpers.FACES_FIXTURES
engine = sweep_helpers.here_engine

PWN = "touch PWNED"


def _no_pwned(*roots: Path) -> None:
    for root in roots:
        assert not list(root.rglob("PWNED")), f"a command ran under {root}"


# ---- the CLI -------------------------------------------------------------------------------

@pytest.mark.parametrize("option", ["--partition", "--account"])
def test_cli_an_option_value_that_is_an_option_is_refused(user, option):
    if option == "--account":
        user.write("acct.sh", "#!/bin/bash\n#SBATCH --account=--uid=0\necho hi\n")
        line = user.refused("submit", "--site", "alpha", "acct.sh")
        assert "account" in line and "'-" in line, line
    else:
        line = user.refused("submit", "--site", "alpha", f"{option}=-x", "job.sh")
        assert "-x" in line and "partition" in line.lower(), line
    assert sbatch_calls(user) == []


def test_cli_a_job_name_of_shell_syntax_reaches_sbatch_as_data(user):
    user.run("submit", "--site", "alpha", "--name", f"$({PWN})`{PWN}`;{PWN}", "job.sh")
    _no_pwned(user.root)
    for call in sbatch_calls(user):
        assert "$(" not in call and "`" not in call


def test_cli_an_array_spec_with_a_command_is_refused(user):
    user.write("arr.sh", f"#!/bin/bash\n#SBATCH --array=1-3;{PWN}\necho hi\n")
    res = user.run("submit", "--site", "alpha", "arr.sh")
    assert res.returncode == 2, (res.returncode, res.stderr)
    assert "array" in res.stderr.lower(), res.stderr
    assert sbatch_calls(user) == []
    _no_pwned(user.root)


def test_cli_a_dependency_with_a_command_stays_a_directive_and_never_runs(user):
    """An unreadable dependency is carried to sbatch as the directive it was (sbatch reads
    it, no shell does): never a line of its own, and running the script runs no command."""
    user.write("dep.sh", f"#!/bin/bash\n#SBATCH --dependency=afterok:1;{PWN}\necho hi\n")
    user.run("submit", "--site", "alpha", "dep.sh", code=0)
    script = submitted_script(user)
    assert [ln for ln in script.splitlines() if PWN in ln] == [
        f"#SBATCH --dependency=afterok:1;{PWN}"]
    subprocess.run(["bash", "-c", script], cwd=user.root, capture_output=True, timeout=30)
    _no_pwned(user.root)


def test_cli_an_over_long_job_name_is_cut_and_said(user):
    res = user.run("submit", "--site", "alpha", "--name", "n" * 100_000, "job.sh", code=0)
    assert "(100000 characters) is submitted to alpha as" in res.stderr
    assert len(res.stderr) < 1000
    assert "--job-name=" + "n" * 40 + "\n" in submitted_script(user)


# ---- REST ----------------------------------------------------------------------------------

@pytest.mark.parametrize("field,value", [
    ("working_directory", f"/tmp\n{PWN}"),
    ("name", "a\x00b"),
    ("queue", "debug\u202e"),
    ("account", f"-A;{PWN}"),
    ("working_directory", "-delete"),
])
async def test_rest_a_hostile_field_is_a_400_naming_it_and_no_job(rest, field, value):
    import json

    body = json.dumps({"spec": {"script": "#!/bin/bash\necho hi\n", field: value},
                       "site": "here"}).encode()
    code, reply = await rest("POST", "jobs", body)
    assert code == 400, (code, reply)
    assert reply["reason"] == "bad-input" and field in reply["message"], reply
    assert (await rest("GET", "jobs"))[1]["jobs"] == []


async def test_rest_another_users_token_is_refused(rest):
    code, _ = await rest("POST", "jobs", b'{"script": "echo hi", "site": "here"}',
                         auth=False, headers={"Authorization": "token not-this-servers"})
    assert code == 403
    code, _ = await rest("GET", "jobs", auth=False,
                         headers={"Authorization": "token not-this-servers"})
    assert code == 403


async def test_rest_a_token_in_the_query_string_is_not_logged(rest, jp_auth_header, caplog):
    token = jp_auth_header["Authorization"].split()[-1]
    caplog.set_level(logging.DEBUG)
    await rest("GET", f"jobs?token={token}", auth=False)
    await rest("GET", f"no-such-route?token={token}", auth=False)
    assert token not in caplog.text  # Tornado's error line quoted the URL whole


# ---- magics and MCP -------------------------------------------------------------------------

def test_magic_a_partition_of_shell_syntax_is_refused(shell, user, capsys):
    assert_magic_refused(shell, user, capsys, "submit --site alpha --partition '-p;id'",
                         "#!/bin/bash\necho hi\n", "partition")
    _no_pwned(user.root)


async def test_mcp_a_working_directory_that_is_an_option_is_refused(user):
    said = await mcp_refusal(user, "submit", {"spec": {
        "script": "#!/bin/bash\necho hi\n", "working_directory": "--output=/etc/passwd"},
        "site": "alpha"})
    assert "working_directory" in said and "starts with '-'" in said, said
    assert sbatch_calls(user) == []


async def test_mcp_a_module_name_with_a_newline_is_refused(user):
    said = await mcp_refusal(user, "submit", {"spec": {
        "script": "#!/bin/bash\necho hi\n", "environment": {"modules": [f"gcc\n{PWN}"]}},
        "site": "alpha"})
    assert "environment.modules[0]" in said, said
    assert sbatch_calls(user) == []


# ---- a workflow file ------------------------------------------------------------------------

@pytest.mark.parametrize("name", [f"$({PWN})", f"a\n{PWN}", "-rf", "a\u202eb", "x" * 5000])
def test_workflow_a_hostile_step_name_is_refused(tmp_path, name):
    import yaml

    path = tmp_path / "wf.yaml"
    path.write_text(yaml.safe_dump({"name": "wf", "steps": [
        {"name": name, "script": "#!/bin/bash\necho hi\n"}]}))
    with pytest.raises(BadInput) as e:
        load_workflow(path)
    assert "name" in str(e.value) and len(str(e.value)) < 1000, str(e.value)[:300]


# ---- a job's output is untrusted --------------------------------------------------------------

def _job_with_output(fed: Federation, stdout: str) -> str:
    js = JobSpec(script="true\n")
    fed.store.record_intent("here", "abc123abc123", js)
    job = fed.store.bind_native_id("abc123abc123", "41")
    fed.store.upsert_job(job.model_copy(update={"stdout_path": stdout}))
    return job.id


async def test_an_output_file_linked_to_the_ssh_key_is_not_read(tmp_path):
    fed = local_home_federation(tmp_path)
    key = tmp_path / "home" / ".ssh" / "id_rsa"
    key.parent.mkdir(parents=True)
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nSECRETKEYMATERIAL\n")
    out = tmp_path / "home" / "job.out"
    out.symlink_to(key)
    job_id = _job_with_output(fed, str(out))
    try:
        logs = await fed.logs(job_id)
    finally:
        await fed.close()
    assert "SECRETKEYMATERIAL" not in str(logs)
    assert logs["stdout"] == ""
    assert f"stdout log: here: {out} is a symbolic link, not the file the job wrote: not " \
           "read" in logs["missing"]


async def test_an_output_file_that_is_a_fifo_never_hangs_the_reader(tmp_path):
    fed = local_home_federation(tmp_path)
    out = tmp_path / "home" / "job.out"
    os.mkfifo(out)
    job_id = _job_with_output(fed, str(out))
    try:
        logs = await asyncio.wait_for(fed.logs(job_id), 30)
    finally:
        await fed.close()
    assert logs["stdout"] == ""


# ---- secrets ------------------------------------------------------------------------------------

GLOBUS_TOKEN = "AgV8xq2Pz0Jm7bWkLr4nYt9sHc3dEf6gUi1oKa5vNw8yZe2Ql"


def _store_bytes(folder: Path) -> bytes:
    """What every store file under `folder` holds (the database, its WAL, its shared memory)."""
    found = [p for p in folder.rglob("*.sqlite3*") if p.is_file()]
    assert found, f"no store under {folder}"
    return b"".join(p.read_bytes() for p in found)


def _sbatch_echoing_the_token(fake: Path) -> None:
    (fake / "sbatch").unlink()
    (fake / "sbatch").write_text('#!/bin/sh\necho "sbatch: error: transfer refused for '
                                 '$GLOBUS_ACCESS_TOKEN" >&2\nexit 1\n')
    (fake / "sbatch").chmod(0o755)


async def test_a_secret_from_the_environment_echoed_by_sbatch_never_reaches_the_store(
        tmp_path, monkeypatch):
    """sbatch failing with the user's Globus token (from the environment) in its message: the
    job's reason and its events keep it out of the store."""
    monkeypatch.setenv("GLOBUS_ACCESS_TOKEN", GLOBUS_TOKEN)
    sites = sweep_helpers.here_sites_file(tmp_path, tmp_path / "work")
    _sbatch_echoing_the_token(tmp_path / "here-slurm")
    fed = Federation(sites, store=sweep_helpers.Store(tmp_path / "store.sqlite3"),
                     poll_interval_s=3600, min_poll_s=3600)
    await fed.start(recover=False)
    try:
        with pytest.raises(Exception, match="transfer refused for"):
            await fed.submit(JobSpec(script="#!/bin/bash\necho hi\n"), "here")
        assert "transfer refused for ***" in str(fed.store.list_jobs()[0].reason)
    finally:
        await fed.close()
    assert GLOBUS_TOKEN.encode() not in _store_bytes(tmp_path)


async def test_a_secret_echoed_by_a_site_never_reaches_a_rest_answer_or_the_log(
        rest, tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("GLOBUS_ACCESS_TOKEN", GLOBUS_TOKEN)
    _sbatch_echoing_the_token(tmp_path / "here-slurm")
    caplog.set_level(logging.DEBUG)
    code, reply = await rest("POST", "jobs", b'{"script": "#!/bin/bash\\necho hi\\n", '
                                             b'"site": "here"}')
    assert code == 400 and "transfer refused for ***" in reply["message"], (code, reply)
    assert GLOBUS_TOKEN not in str(await rest("GET", "jobs"))
    assert GLOBUS_TOKEN not in caplog.text
    assert GLOBUS_TOKEN.encode() not in _store_bytes(tmp_path)


@pytest.mark.parametrize("name", ["ANTHROPIC_API_KEY", "DIAMOND_SLURMRESTD_TOKEN",
                                  "GLOBUS_REFRESH_TOKEN"])
def test_a_secret_environment_value_is_redacted_wherever_it_appears(monkeypatch, name):
    value = "Zq7" + "x9Lm" * 8
    monkeypatch.setenv(name, value)
    assert value not in redact(f"failed: {value} was refused")
    assert value not in str(redact({"error": [f"at {value}."]}))


# ---- host keys ----------------------------------------------------------------------------------

def test_a_sites_file_pointing_known_hosts_at_dev_null_is_refused(tmp_path):
    path = tmp_path / "sites.yaml"
    path.write_text("sites:\n  - name: a\n    transport:\n      host: hpc.example.org\n"
                    "      known_hosts: /dev/null\n")
    with pytest.raises(BadInput) as e:
        load_config(path)
    assert "known_hosts" in str(e.value) and "/dev/null" in str(e.value), str(e.value)


# ---- the agent: what was approved is what runs --------------------------------------------------

async def test_a_tool_call_changed_after_its_plan_was_shown_does_not_run(user, fake_llm):
    """The plan shown and approved is `echo A`; between the showing and the run, the call's
    input in the store becomes `echo EVIL` (the plan, and so its plan_sha256, untouched): the
    approval runs the approved plan or nothing, never the changed call."""
    from agents import engine_and_agent
    from fake_llm import text, tool_use

    fake_llm.script([tool_use("submit", {"script": "#!/bin/sh\necho A\n", "site": "alpha"})],
                    [text("done")], [text("done")])
    async with engine_and_agent(user.sites, user.store_path) as (fed, service):
        task = await service.ask("submit A", approval="ask")
        shown = await service.wait(task["id"], settled=True, timeout=60)
        assert shown["state"] == "awaiting_approval", shown
        data = fed.store.task_data_to_run(task["id"])
        turn = data["turn"]
        turn["calls"][-1]["input"]["script"] = "#!/bin/sh\necho EVIL\n"
        data["pending"]["input"] = turn["calls"][-1]["input"]
        fed.store.update_task(task["id"], data={"turn": turn, "pending": data["pending"]})
        await service.approve(task["id"], shown["pending"]["plan_sha256"])
        after = await service.wait(task["id"], settled=True, timeout=60)
    # the changed call did not run: it is shown as a plan of its own, to be approved anew
    assert sbatch_calls(user) == []
    assert after["state"] == "awaiting_approval", after["state"]
    assert "echo EVIL" in after["pending"]["plan"]["script"]
    assert after["pending"]["plan_sha256"] != shown["pending"]["plan_sha256"]


async def test_a_slurmrestd_sites_output_linked_to_the_ssh_key_is_not_read(tmp_path):
    """The same link read through a slurmrestd site's file door (no shell: SFTP-like reads)."""
    from diamond_jupyter.config import SiteConfig
    from diamond_jupyter.sites import NotARegularFile
    from diamond_jupyter.sites_rest import RestSite
    from diamond_jupyter.transports.local import LocalTransport

    key = tmp_path / "id_rsa"
    key.write_text("SECRETKEYMATERIAL\n")
    (tmp_path / "job.out").symlink_to(key)
    (tmp_path / "plain.out").write_text("hello\n")
    site = RestSite(SiteConfig(name="beta-rest", workdir=str(tmp_path), transport={
        "kind": "slurmrestd", "url": "http://127.0.0.1:9", "user": "me",
        "token_file": "/nonexistent"}), files=LocalTransport("beta-rest", workdir=str(tmp_path)))
    assert await site.tail(str(tmp_path / "plain.out")) == "hello\n"
    with pytest.raises(NotARegularFile, match="is a symbolic link, not the file the job wrote"):
        await site.tail(str(tmp_path / "job.out"))


# ---- look-alikes, the store's own file, a secret in a refused body -------------------------------

def test_a_site_name_with_a_look_alike_letter_never_reaches_another_site(user):
    """`аlpha` with a Cyrillic а: refused as no site of the file, nothing submitted."""
    res = user.run("submit", "--site", "\u0430lpha", "job.sh")
    assert res.returncode == 2, (res.returncode, res.stderr)
    assert "\u0430lpha" in res.stderr or "\\u0430" in res.stderr, res.stderr
    assert sbatch_calls(user) == []


async def test_mcp_a_job_id_of_shell_syntax_is_refused(user):
    said = await mcp_refusal(user, "logs", {"job_id": f"alpha:$({PWN})"})
    assert "job" in said.lower(), said
    _no_pwned(user.root)
    assert sbatch_calls(user) == []


async def test_the_store_file_is_private_to_its_user(engine, tmp_path):
    await engine.submit(JobSpec(script="#!/bin/bash\necho hi\n"), "here")
    for p in tmp_path.glob("store.sqlite3*"):
        assert p.stat().st_mode & 0o077 == 0, (p, oct(p.stat().st_mode))


async def test_a_secret_in_a_refused_rest_body_is_not_in_the_server_log(rest, caplog):
    key = "sk-ant-api03-" + "Q" * 40
    caplog.set_level(logging.DEBUG)
    body = ('{"spec": {"script": "#!/bin/bash\\nexport ANTHROPIC_API_KEY=' + key
            + '\\n", "queue": "-x"}, "site": "here"}').encode()
    code, reply = await rest("POST", "jobs", body)
    assert code == 400 and "queue" in reply["message"], (code, reply)
    assert key not in caplog.text

"""Follow-ups of faces sweep 21: (1) a bad need (software, memory, arch, gpu_type, container)
is named as each face's user wrote it: the JSON field over REST, MCP and the agent's tools,
the option on the command line and in the magics; (2) a relative working directory (a job's,
or the sites file's workdir) may not climb with '..' (as a stage path may not), an absolute
one is taken as written, and where the job runs is shown resolved in the plan and the
approval text.

Tests named `fault` failed before these fixes; the others are guards."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sweep_helpers
import yaml
from sweep_helpers import assert_magic_refused, here_sbatch_calls, sbatch_calls

from diamond_jupyter.config import load_config
from diamond_jupyter.federation_plan import describe_plan
from diamond_jupyter.model import BadInput, JobSpec
from diamond_jupyter.skills import SkillContext, run_skill

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
user, shell, jp_server_config, rest = sweep_helpers.FACES_FIXTURES
engine = sweep_helpers.here_engine

SCRIPT = sweep_helpers.FACES_SCRIPT

# (the body's field, its bad value, what the refusal starts with as a JSON field says it)
BAD_NEEDS = [
    ("memory", "lots", "memory 'lots': expected a size such as 4G"),
    ("software", ["gcc", "a b"], "software[1] 'a b': expected NAME or NAME/VERSION"),
    ("software", [","], "software[0] ',' names no software"),
    ("gpu_type", "a 1", "gpu_type 'a 1': expected a GPU model"),
    ("arch", "x86;rm", "arch 'x86;rm': expected an architecture"),
    ("container", "-v", "container '-v': expected an image"),
]


# ---- (1) a bad need, named as each face's user wrote it ------------------------------------

@pytest.mark.parametrize("field,value,said", BAD_NEEDS)
async def test_fault_a_rest_bad_need_is_a_400_naming_its_json_field(rest, tmp_path, field,
                                                                    value, said):
    body = json.dumps({"script": SCRIPT, "site": "here", field: value}).encode()
    code, reply = await rest("POST", "jobs", body)
    assert code == 400 and reply["message"].startswith(said), (code, reply)
    assert "--" not in reply["message"].split(":")[0]
    assert here_sbatch_calls(tmp_path) == []


async def test_fault_a_rest_bad_need_beside_a_spec_names_its_json_field(rest, tmp_path):
    body = json.dumps({"spec": {"script": "echo hi\n"}, "memory": "-5G"}).encode()
    code, reply = await rest("POST", "place", body)
    assert code == 400 and reply["message"].startswith("memory '-5G': expected a size"), reply


@pytest.mark.parametrize("field,value,said", BAD_NEEDS[:3])
async def test_fault_an_mcp_bad_need_names_its_json_field(user, field, value, said):
    told = await sweep_helpers.mcp_refusal(user, "submit", {"script": SCRIPT, "site": "alpha",
                                                            field: value})
    assert said in told and f"--{field}" not in told, told
    assert sbatch_calls(user) == []


@pytest.mark.parametrize("field,value,said", BAD_NEEDS[:2])
async def test_fault_an_agents_bad_need_names_its_json_field(engine, tmp_path, field, value,
                                                             said):
    with pytest.raises(BadInput) as told:
        await run_skill(SkillContext(engine), "submit",
                        {"script": SCRIPT, "site": "here", field: value})
    assert str(told.value).startswith(said), told.value
    assert here_sbatch_calls(tmp_path) == []


@pytest.mark.parametrize("option,said", [
    ("--memory lots", "--memory 'lots': expected a size"),
    ("--software 'a b'", "--software 'a b': expected NAME or NAME/VERSION"),
])
def test_a_magics_bad_need_names_its_option(shell, user, capsys, option, said):
    assert_magic_refused(shell, user, capsys, f"submit --site alpha {option}", SCRIPT, said)


@pytest.mark.parametrize("args,said", [
    (["--memory", "lots"], "--memory 'lots': expected a size"),
    (["--software", "a b"], "--software 'a b': expected NAME or NAME/VERSION"),
])
def test_a_command_lines_bad_need_names_its_option(user, args, said):
    assert said in user.refused("submit", "--site", "alpha", *args, str(user.script))
    assert sbatch_calls(user) == []


# ---- (2) a working directory: no '..' when relative, resolved and shown ----------------------

@pytest.mark.parametrize("wd", ["../elsewhere", "runs/../../up", "~/../other", ".."])
async def test_fault_a_rest_relative_working_directory_climbing_is_a_400(rest, tmp_path, wd):
    body = json.dumps({"spec": {"script": "echo hi\n", "working_directory": wd},
                       "site": "here"}).encode()
    code, reply = await rest("POST", "jobs", body)
    assert code == 400, reply
    assert f"spec.working_directory {wd!r} climbs with '..'" in reply["message"], reply
    assert "give an absolute path" in reply["message"]
    assert here_sbatch_calls(tmp_path) == []


async def test_fault_an_mcp_relative_working_directory_climbing_is_refused(user):
    told = await sweep_helpers.mcp_refusal(user, "submit", {
        "spec": {"script": "echo hi\n", "working_directory": "../x"}, "site": "alpha"})
    assert "working_directory '../x' climbs with '..'" in told, told
    assert sbatch_calls(user) == []


def test_fault_a_scripts_relative_chdir_climbing_is_refused_on_the_command_line(user):
    script = user.write("up.sh", "#!/bin/bash\n#SBATCH -D ../shared\necho hi\n")
    said = user.refused("submit", "--site", "alpha", str(script))
    assert "'../shared' climbs with '..'" in said and "absolute path" in said, said
    assert sbatch_calls(user) == []


def test_fault_a_magics_relative_chdir_climbing_is_refused(shell, user, capsys):
    assert_magic_refused(shell, user, capsys, "submit --site alpha",
                         "#!/bin/bash\n#SBATCH --chdir=a/../../b\necho hi\n",
                         "'a/../../b' climbs with '..'")


@pytest.mark.parametrize("workdir", ["../diamond", "work/../../x", "~/../x", "$SCRATCH/../x"])
def test_fault_a_sites_files_relative_workdir_climbing_is_refused(tmp_path, workdir):
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [{
        "name": "here", "transport": {"kind": "local"}, "workdir": workdir}]}))
    with pytest.raises(BadInput) as told:
        load_config(sites)
    assert "climbs with '..'" in str(told.value) and "absolute path" in str(told.value), \
        told.value


def test_a_sites_files_absolute_workdir_with_dots_is_kept(tmp_path):
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [{
        "name": "here", "transport": {"kind": "local"}, "workdir": "/scratch/a/../b"}]}))
    assert load_config(sites).sites[0].workdir == "/scratch/a/../b"


async def test_fault_a_relative_working_directory_is_resolved_in_the_home_and_shown(engine):
    home = await engine.site("here").home()
    plan = await engine.plan_submit(JobSpec(script="echo hi\n", working_directory="./run/a"),
                                    "here")
    assert plan["working_directory"] == f"{home}/run/a"
    assert f"#SBATCH --chdir={home}/run/a\n" in plan["script"]
    assert f"\n  runs in: {home}/run/a\n" in describe_plan(plan)


@pytest.mark.parametrize("wd", ["/scratch/-x", "/scratch/a b/../-c"])
async def test_fault_an_absolute_working_directory_is_taken_as_written_and_quoted(engine, wd):
    plan = await engine.plan_submit(JobSpec(script="echo hi\n", working_directory=wd), "here")
    assert plan["working_directory"] == wd
    assert f"runs in: {wd}\n" in describe_plan(plan)
    [line] = [ln for ln in plan["script"].splitlines() if "chdir" in ln]
    assert wd in line and not line.split("=", 1)[1].startswith("-"), line


async def test_fault_an_unset_working_directory_is_the_jobs_own_directory_and_shown(
        engine, tmp_path):
    plan = await engine.plan_submit(JobSpec(script="echo hi\n"), "here")
    wd = plan["working_directory"]
    assert wd.startswith(f"{tmp_path / 'work'}/jobs/") and f"runs in: {wd}" in \
        describe_plan(plan)


async def test_fault_a_submit_runs_in_the_resolved_directory(engine, tmp_path):
    home = await engine.site("here").home()
    job = await engine.submit(JobSpec(script="echo hi\n", working_directory="run"), "here")
    assert job.spec is not None and job.spec.working_directory == f"{home}/run"
    [call] = here_sbatch_calls(tmp_path)
    script = Path(call.split()[-1]).read_text()
    assert f"#SBATCH --chdir={home}/run\n" in script


async def test_fault_a_rest_transfer_by_an_unknown_way_names_its_json_field(rest, tmp_path):
    body = json.dumps({"src": "here:in.dat", "dst": "here:out.dat", "via": "ftp"}).encode()
    code, reply = await rest("POST", "transfers", body)
    assert code == 400 and reply["message"].startswith("via 'ftp': expected sftp or globus"), \
        (code, reply)
    assert (await rest("GET", "transfers"))[1]["transfers"] == []

"""Security sweep 42: a GPU type that is a request of its own, a job of components given
without the shape they make, stage paths climbing out of the job's directory on the site, the
job's free-text fields run by a real bash, look-alike dashes, dependency ids that add a
dependency, a crafted workflow's names and paths, and a REST body built to exhaust.

A GPU type of `h100:4,a100` with one GPU asked reached `--gpus-per-node=h100:4,a100:1`: five
GPUs of two models, while the job shown asked one. Components given over the API without the
job's resources were dropped without a word (the script rendered components only beside the
shape they make), so an approved hetjob ran as one node of one task. `stage_in`'s destination
and `stage_out`'s source, relative to the job's directory on the site, could climb with `..`
(to the site's `~/.bashrc`), which a script's staging directive and a workflow may not.

Tests marked `fault` failed before this sweep's fixes; the others are guards."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest
import sweep_helpers
from sweep_helpers import here_spec, mcp_refusal, rest_refused, sbatch_calls

from diamond_jupyter.model import MAX_COMPONENTS, BadInput, JobSpec

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
user, shell, jp_server_config, rest = sweep_helpers.FACES_FIXTURES
engine = sweep_helpers.here_engine
SCRIPT = sweep_helpers.FACES_SCRIPT
JSON = {"Content-Type": "application/json"}
PWN = "touch PWNED"
HETJOB = [{"nodes": 1, "tasks_per_node": 4}, {"nodes": 2, "gpus_per_node": 1, "queue": "gpu",
                                              "features": ["a100"]}]


def _sent_script(tmp_path: Path) -> str:
    """The one script the `here` site's fake sbatch was given."""
    [call] = sweep_helpers.here_sbatch_calls(tmp_path)
    return Path(call.split()[-1]).read_text()


def _directives(script: str) -> list[str]:
    return [ln for ln in script.splitlines() if ln.startswith("#SBATCH")]


# ---- (1) a GPU type that is a request of its own ----------------------------------------------

@pytest.mark.parametrize("gpu_type", ["h100:4,a100", "a100:mem=1tb", "v100;a100", "a100=8"])
async def test_fault_a_gpu_type_holding_a_request_separator_is_refused_over_rest(rest,
                                                                                 gpu_type):
    """`h100:4,a100` with one GPU asked reached `--gpus-per-node=h100:4,a100:1` (and PBS's
    `ngpus=1:gpu_model=a100:mem=1tb` a chunk resource): other GPUs than the count shown."""
    said = await rest_refused(rest, here_spec({"resources": {"gpus_per_node": 1,
                                                            "gpu_type": gpu_type}}),
                              "resources.gpu_type")
    assert "separates the entries of a scheduler's GPU request" in said, said
    assert "a GPU type is one name" in said, said


async def test_fault_a_gpu_type_holding_a_second_request_is_refused_by_mcp(user):
    said = await mcp_refusal(user, "submit", {"spec": {"script": SCRIPT, "resources": {
        "gpus_per_node": 1, "gpu_type": "a100,h100:8"}}, "site": "alpha"})
    assert "resources.gpu_type 'a100,h100:8' holds ','" in said, said
    assert sbatch_calls(user) == []


def test_fault_a_components_gpu_type_is_checked_as_the_jobs():
    with pytest.raises(BadInput, match=r"components\[1\]\.gpu_type 'a100:4' holds ':'"):
        JobSpec.model_validate({"script": "echo hi\n", "components": [
            {"nodes": 1}, {"nodes": 1, "gpus_per_node": 1, "gpu_type": "a100:4"}]})


@pytest.mark.parametrize("gpu_type", ["a100_1g.5gb", "tesla-v100", "A100-SXM4-80GB"])
async def test_a_gpu_model_name_still_reaches_the_script(engine, tmp_path, gpu_type):
    """(guard) real model names (a MIG slice's among them) are one name each, rendered."""
    await engine.submit(JobSpec(script="echo hi\n", resources={
        "gpus_per_node": 2, "gpu_type": gpu_type}), "here")
    assert f"#SBATCH --gpus-per-node={gpu_type}:2" in _directives(_sent_script(tmp_path))


# ---- (2) a job of components without the shape they make --------------------------------------

async def test_fault_a_hetjob_given_as_components_over_rest_runs_as_its_components(
        rest, tmp_path):
    """Two components and no resources: sbatch got one job of one node (no `hetjob`, no
    `gpu` partition, no GPU), while the job recorded and shown had both components."""
    body = json.dumps({"spec": {"script": SCRIPT, "components": HETJOB}, "site": "here"})
    code, reply = await rest("POST", "jobs", body.encode(), headers=JSON)
    assert code in (200, 201), (code, reply)
    script = _sent_script(tmp_path)
    first, _, later = "\n".join(_directives(script)).partition("#SBATCH hetjob")
    assert later, script
    assert "--ntasks-per-node=4" in first and "--nodes=1" in first, first
    for said in ("--partition=gpu", "--constraint=a100", "--nodes=2", "--gpus-per-node=1"):
        assert said in later, (said, later)


async def test_fault_an_approved_hetjob_plan_is_the_script_that_runs(engine, tmp_path):
    """What the approval shows (its script and sha256) is a hetjob, and the submit with the
    approved token and sha256 uploads that same script."""
    spec = JobSpec.model_validate({"script": "echo hi\n", "components": HETJOB})
    plan = await engine.plan_submit(spec, "here")
    assert "#SBATCH hetjob" in plan["script"], plan["script"]
    spec = JobSpec.model_validate({"script": "echo hi\n", "components": HETJOB})
    job = await engine.submit(spec, "here", token=plan["submission"],
                              script_sha256=plan["script_sha256"])
    sent = _sent_script(tmp_path)
    assert hashlib.sha256(sent.encode()).hexdigest() == plan["script_sha256"]
    assert job.token == plan["submission"]


async def test_a_hetjob_with_the_jobs_own_resources_changed_is_one_shape_as_shown(engine,
                                                                                   tmp_path):
    """(guard) a face's own size (`--memory` over a script's hetjob) makes the job one
    shape: the components are not filled back over it."""
    spec = JobSpec.model_validate({"script": "echo hi\n", "components": HETJOB,
                                   "resources": {"nodes": 3, "memory_mb": 4096}})
    await engine.submit(spec, "here")
    directives = _directives(_sent_script(tmp_path))
    assert "#SBATCH hetjob" not in directives and "#SBATCH --nodes=3" in directives


def _components_and_size_said(said: str, given: str) -> None:
    """The refusal of components beside a size: both named, and the two ways accepted."""
    assert f"{given} given beside spec.components" in said, said
    assert "give the sizes in spec.components alone" in said, said
    assert "or a size in spec.resources alone without components" in said, said


async def test_fault_components_beside_a_size_of_the_job_are_refused_over_rest(rest):
    """Components and `resources.nodes`/`memory_mb` in one REST body: the job ran as one
    shape of 3 nodes, its components dropped without a word."""
    said = await rest_refused(rest, here_spec({"components": HETJOB, "resources": {
        "nodes": 5, "memory_mb": 4096, "walltime_s": 600}}), "spec.components")
    _components_and_size_said(said, "spec.resources.nodes=5, spec.resources.memory_mb=4096")
    assert "(they make nodes=3, memory_mb=unset)" in said, said


async def test_fault_components_beside_a_size_of_the_job_are_refused_by_mcp(user):
    said = await mcp_refusal(user, "submit", {"spec": {
        "script": SCRIPT, "components": HETJOB, "resources": {"gpus_per_node": 2}},
        "site": "alpha"})
    _components_and_size_said(said, "spec.resources.gpus_per_node=2")
    assert sbatch_calls(user) == []


async def test_components_beside_the_shape_they_make_and_a_walltime_run_as_a_hetjob(
        rest, tmp_path):
    """(guard) a spec sent back as shown (its resources the shape its components make)
    and a walltime beside components are taken: the job is still the hetjob."""
    body = json.dumps({"spec": {"script": SCRIPT, "components": HETJOB, "resources": {
        "nodes": 3, "tasks_per_node": 4, "walltime_s": 600}}, "site": "here"})
    code, reply = await rest("POST", "jobs", body.encode(), headers=JSON)
    assert code in (200, 201), (code, reply)
    directives = _directives(_sent_script(tmp_path))
    assert "#SBATCH hetjob" in directives and "#SBATCH --time=00:10:00" in directives, directives


# ---- (3) stage paths climbing out of the job's directory on the site ---------------------------

async def test_fault_a_stage_in_destination_climbing_to_the_sites_home_is_refused(rest):
    said = await rest_refused(rest, here_spec({"stage_in": [
        {"source": "/etc/hostname", "destination": "../../../.bashrc"}]}),
        "stage_in[0].destination")
    assert "climbs with '..' out of the job's directory on the site" in said, said


async def test_fault_a_stage_out_source_climbing_out_is_refused_by_mcp(user):
    said = await mcp_refusal(user, "submit", {"spec": {"script": SCRIPT, "stage_out": [
        {"source": "out/../../../.ssh/id_ed25519", "destination": "key"}]}, "site": "alpha"})
    assert "stage_out[0].source 'out/../../../.ssh/id_ed25519' climbs with '..'" in said, said
    assert sbatch_calls(user) == []


async def test_a_stage_path_inside_the_job_or_absolute_is_still_taken(engine, tmp_path):
    """(guard) a destination inside the job's directory and an absolute one are copied."""
    src = tmp_path / "in.dat"
    src.write_text("data\n")
    job = await engine.submit(JobSpec(script="echo hi\n", stage_in=[
        {"source": str(src), "destination": "inputs/in.dat"},
        {"source": str(src), "destination": str(tmp_path / "abs.dat")}]), "here")
    assert job.native_id == "4242", job
    assert sweep_helpers.here_sbatch_calls(tmp_path)[0].startswith("sbatch --parsable --hold")


# ---- (4) the free-text fields, run by a real bash ---------------------------------------------

@pytest.mark.parametrize("spec", [
    {"name": f"$({PWN})"}, {"account": f"`{PWN}`"}, {"mail_user": f"me@x;{PWN}"},
    {"stdout": f"out$({PWN}).log"}, {"comment": f"'; {PWN}; '"},
    {"resources": {"cpu_bind": f"$({PWN})"}}, {"resources": {"gpu_bind": f"`{PWN}`"}},
    {"resources": {"distribution": f"block;{PWN}"}},
    {"environment": {"variables": {"X": f"$({PWN})"}}},
])
async def test_shell_syntax_in_a_free_text_field_never_runs(engine, tmp_path, spec):
    """(guard) the rendered script, run by bash as the job's shell would, makes no file of
    the value: it is a directive's value or a quoted word."""
    await engine.submit(JobSpec.model_validate({"script": "echo hi\n", **spec}), "here")
    script = _sent_script(tmp_path)
    run = tmp_path / "run"
    run.mkdir()
    res = subprocess.run(["bash", "-c", script], cwd=run, capture_output=True, text=True,
                         timeout=60)
    assert "hi" in res.stdout, (res.stdout, res.stderr)
    assert not list(tmp_path.rglob("PWNED")), script


@pytest.mark.parametrize("field", ["queue", "account", "qos", "reservation"])
async def test_a_look_alike_dash_is_one_quoted_directive_value(engine, tmp_path, field):
    """(guard) U+2010 hyphens are no option to sbatch: the value stays after `=`, quoted,
    on its one directive line."""
    value = "\u2010\u2010uid=0"
    await engine.submit(JobSpec.model_validate({"script": "echo hi\n", field: value}), "here")
    lines = [ln for ln in _sent_script(tmp_path).splitlines() if value in ln]
    assert len(lines) == 1 and lines[0].endswith(f'="{value}"'), lines
    assert lines[0].startswith("#SBATCH --"), lines


@pytest.mark.parametrize("job_id", ["1:2", "1?afterany:2", "1,2"])
async def test_a_dependency_id_that_adds_another_dependency_is_refused(rest, job_id):
    """(guard) `afterok:1:2` waits on two jobs, `1?afterany:2` on either: one id is one id."""
    said = await rest_refused(rest, here_spec({"dependencies": [{"job_ids": [job_id]}]}),
                              "dependencies[0].job_ids[0]")
    assert "names no job here can wait for" in said, said


# ---- (5) a crafted workflow file -----------------------------------------------------------------

@pytest.mark.parametrize("text,said", [
    ("name: wf\nsteps:\n  - {name: ../x, site: alpha, script: 'echo hi'}\n",
     "'../x' is not a valid name"),
    ("name: ../../x\nsteps:\n  - {name: s, site: alpha, script: 'echo hi'}\n",
     "'../../x' is not a valid name"),
    ("name: wf\nsteps:\n  - {name: s, site: alpha, script: 'echo hi', "
     "outputs: ['../../.bashrc']}\n", "no '..'"),
    ("name: wf\nsteps:\n  - {name: s, site: alpha, script: 'echo hi', resources: "
     "{gpus_per_node: 1, gpu_type: 'a100:8'}}\n", "are its script's own directives"),
])
def test_a_workflows_names_and_paths_cannot_climb_or_add_requests(text, said):
    """(guard) a step or workflow named as a path, an output climbing out of the step's
    directory, a step's resources given as fields: each refused with its line."""
    msg = sweep_helpers.refused(text)
    assert said in msg and "(line " in msg, msg


# ---- (6) a REST body built to exhaust ------------------------------------------------------------

async def test_a_rest_body_nested_thousands_deep_is_a_400_not_a_crash(rest):
    """(guard) 20000 nested lists in a spec's metadata: refused as bad input, the server
    answering the next request."""
    body = ('{"site": "here", "spec": {"script": "echo hi", "metadata": {"x": '
            + "[" * 20000 + "]" * 20000 + "}}}").encode()
    code, reply = await rest("POST", "jobs", body, headers=JSON)
    assert code == 400 and reply["reason"] == "bad-input", (code, str(reply)[:300])
    assert (await rest("GET", "jobs"))[1]["jobs"] == []


async def test_fault_a_components_list_of_thousands_is_refused_without_a_submit(rest):
    """5000 components (a 100 kB body) were checked, placed, rendered and submitted: 16 s of
    the server's loop for a job no scheduler takes (Slurm's hetjob has 128 at most)."""
    said = await rest_refused(rest, here_spec({"components": [{"nodes": 1}] * 5000}), "components")
    assert f"5000 entries, more than the {MAX_COMPONENTS} a job may have" in said, said


# ---- (7) a hostile site's answer, a link out of the server's root --------------------------------

def _sbatch_answering(tmp_path: Path, body: str) -> None:
    fake = tmp_path / "here-slurm"
    (fake / "sbatch").unlink()
    (fake / "sbatch").write_text("#!/bin/sh\n" + body)
    (fake / "sbatch").chmod(0o755)


async def test_a_sites_refusal_of_30_megabytes_is_one_bounded_line(engine, tmp_path):
    """(guard) sbatch writing 30 MB to stderr and failing: the refusal and the job's reason
    are a bounded line, and the store does not keep the flood."""
    _sbatch_answering(tmp_path, "head -c 30000000 /dev/zero | tr '\\0' 'A' >&2; exit 1\n")
    with pytest.raises(BadInput) as e:
        await engine.submit(JobSpec(script="echo hi\n"), "here")
    assert str(e.value).startswith("here refused the job: AAAA") and len(str(e.value)) < 4096
    [job] = engine.store.list_jobs()
    assert len(job.reason or "") < 4096
    assert len(sweep_helpers.store_files(tmp_path)) < 8 << 20


async def test_a_flood_before_the_job_id_still_records_the_id_alone(engine, tmp_path):
    """(guard) 30 MB of noise on stderr, then the id: the job is 4242, nothing else kept."""
    _sbatch_answering(tmp_path, "head -c 30000000 /dev/zero | tr '\\0' 'A' >&2; echo 4242\n")
    job = await engine.submit(JobSpec(script="echo hi\n"), "here")
    assert job.native_id == "4242" and not job.reason, job
    assert len(sweep_helpers.store_files(tmp_path)) < 8 << 20


async def test_a_stage_out_through_a_link_leaving_the_server_root_is_refused(rest, jp_root_dir,
                                                                           tmp_path):
    """(guard) `results` in the server's root is a link to a directory outside it: a job's
    stage-out there is refused before anything is submitted, naming the entry."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (jp_root_dir / "results").symlink_to(outside)
    body = json.dumps({"spec": {"script": SCRIPT, "stage_out": [
        {"source": "out.txt", "destination": "results/out.txt"}]}, "site": "here"}).encode()
    code, reply = await rest("POST", "jobs", body, headers=JSON)
    assert code in (400, 403) and "stage_out[0].destination" in reply["message"], (code, reply)
    assert (await rest("GET", "jobs"))[1]["jobs"] == []

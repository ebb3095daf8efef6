"""slurmrestd's submit body follows the OpenAPI plugin version the site names
(`transport.api_version`): v0.0.38's flat "job" (what the test bed's Slurm 22.05 serves),
and from v0.0.39 on the shapes of its documented `job_desc_msg` (a list environment,
wrapped numbers, GPUs as TRES, flag lists; from v0.0.40 the script inside the job). Sent
through a `RestSite` to a slurmrestd stand-in at the wire (an HTTP server on a local port
that records each request), not the test bed."""

from __future__ import annotations

import json

import pytest
from stand_in_slurmrestd import StandInSlurmrestd

from diamond_jupyter.dialects import slurm_rest
from diamond_jupyter.model import (
    ArraySpec,
    BadInput,
    Constraints,
    Environment,
    JobSpec,
    Resources,
)
from diamond_jupyter.sites import token_tag

TOKEN = "abc123"


def _spec(**resources) -> JobSpec:
    return JobSpec(
        name="sim", script="#!/bin/bash\nsrun ./sim\n", working_directory="/home/u/run",
        queue="gpu", stdout="/home/u/run/o.log",
        resources=Resources(**{"nodes": 2, "tasks": 8, "cpus_per_task": 2, "memory_mb": 4000,
                               "walltime_s": 3600, **resources}),
        constraints=Constraints(features=["ib"], exclusive=True),
        environment=Environment(variables={"OMP_NUM_THREADS": "2"}),
        array=ArraySpec(expression="1-4%2"), mail_events=["begin", "end"],
        mail_user="u@x.org")


async def _submit(tmp_path, version: str, reply: dict, spec: JobSpec):
    async with StandInSlurmrestd({"submit": reply}) as rest:
        site = rest.site(tmp_path, api_version=version)
        try:
            submitted = await site.submit(spec, TOKEN)
        finally:
            await site.close()
    ((path, body),) = rest.bodies()
    return submitted, path, body


def _reply(version: str, **extra) -> dict:
    return {"meta": {"plugin": {"type": "openapi/slurmctld", "name": "Slurm OpenAPI slurmctld",
                                "data_parser": f"data_parser/{version}"}},
            "errors": [], "warnings": [], "job_id": 4242, "step_id": "batch",
            "job_submit_user_msg": "", **extra}


async def test_v0041_submit_body_takes_the_documented_job_shapes(tmp_path):
    # before: v0.0.38's body at every version: slurmrestd 23.02+ reads `environment` as a
    # list and the numbers wrapped, so the job was refused or its limits ignored (a 1-hour
    # job at the partition's default time), and its GPUs (`gpus_per_node`, `gres`:
    # unknown fields there) dropped with only a warning nobody read
    spec = _spec(gpus_per_node=2, gpu_type="a100")
    submitted, path, body = await _submit(tmp_path, "v0.0.41", _reply("v0.0.41"), spec)
    assert path == "/slurm/v0.0.41/job/submit"
    assert set(body) == {"job"}  # v0.0.41: the top-level script is deprecated
    job = body["job"]
    assert job["script"].startswith("#!/bin/bash\n") and "srun ./sim" in job["script"]
    assert job["environment"] == ["PATH=/usr/local/bin:/usr/bin:/bin", "OMP_NUM_THREADS=2"]
    assert job["time_limit"] == {"set": True, "infinite": False, "number": 60}
    assert job["memory_per_node"] == {"set": True, "infinite": False, "number": 4000}
    assert (job["nodes"], job["tasks"], job["cpus_per_task"]) == ("2", 8, 2)
    assert job["tres_per_node"] == "gres/gpu:a100:2"
    assert not {"gres", "gpus_per_node", "gpus_per_task"} & set(job)
    assert job["exclusive"] == ["true"] and job["mail_type"] == ["BEGIN", "END"]
    assert (job["array"], job["constraints"], job["partition"]) == ("1-4%2", "ib", "gpu")
    assert token_tag(TOKEN) in job["comment"]  # the idempotency token travels there
    assert submitted.native_id == "4242"


async def test_v0039_keeps_the_script_beside_the_job(tmp_path):
    spec = _spec(gpus_per_task=1)
    _, path, body = await _submit(tmp_path, "v0.0.39", _reply("v0.0.39"), spec)
    assert path == "/slurm/v0.0.39/job/submit"
    assert set(body) == {"script", "job"} and "script" not in body["job"]
    assert body["job"]["tres_per_task"] == "gres/gpu:1"
    assert isinstance(body["job"]["environment"], list)


async def test_v0038_body_is_unchanged(tmp_path):
    # the test bed's shape: a flat job, an environment object, plain numbers
    _, path, body = await _submit(tmp_path, "v0.0.38", _reply("v0.0.38"),
                                  _spec(gpus_per_node=1))
    assert path == "/slurm/v0.0.38/job/submit" and set(body) == {"script", "job"}
    job = body["job"]
    assert job["environment"] == {"PATH": "/usr/local/bin:/usr/bin:/bin",
                                  "OMP_NUM_THREADS": "2"}
    assert (job["time_limit"], job["nodes"], job["gpus_per_node"]) == (60, 2, 1)
    assert (job["exclusive"], job["mail_type"]) == ("exclusive", "BEGIN,END")


async def test_what_slurmrestd_ignored_of_the_job_is_said(tmp_path):
    # v0.0.39 on: an unknown field is ignored with a warning in the reply; before, the
    # submit said nothing of it
    reply = _reply("v0.0.40", warnings=[{
        "description": 'Ignoring unknown field "cpu_binding" of type string in '
                       "DATA_PARSER_JOB_DESC_MSG", "source": "#/job/cpu_binding/"}])
    submitted, _, _ = await _submit(tmp_path, "v0.0.40", reply, _spec())
    assert submitted.native_id == "4242"
    assert any('Ignoring unknown field "cpu_binding"' in w and "#/job/cpu_binding/" in w
               for w in submitted.warnings), submitted.warnings


def test_v0041_reply_with_the_id_only_in_result():
    reply = json.dumps({"result": {"job_id": 77, "step_id": "batch", "error_code": 0,
                                   "error": "No error", "job_submit_user_msg": "ok, QOS x"},
                        "errors": [], "warnings": []})
    assert slurm_rest.parse_submit(reply) == ("77", ["ok, QOS x"])


def test_a_held_job_on_v0040_is_no_failure_and_errors_still_refuse():
    held = {"job_id": 12, "errors": [{"description": "Job is in held state, pending "
                                      "scheduler release", "error_number": 2042,
                                      "error": "", "source": "slurm_submit_batch_job()"}],
            "warnings": []}
    assert slurm_rest.parse_submit(json.dumps(held))[0] == "12"
    bad = {"errors": [{"description": "Invalid partition name specified",
                       "error_number": 2000, "error": "Invalid partition name specified",
                       "source": "slurm_submit_batch_job()"}], "warnings": []}
    with pytest.raises(Exception, match=r"Invalid partition name specified.*\(2000\)"):
        slurm_rest.parse_submit(json.dumps(bad))


def test_version_names_that_are_not_versions_are_refused():
    with pytest.raises(BadInput, match=r"api_version 'latest': expected v0\.0\.N"):
        slurm_rest.job_description(JobSpec(working_directory="/w"), api_version="latest")
    assert slurm_rest.api_number("v0.0.42") == 42

"""What each listed job waits for, through the server (no test bed): GET jobs and GET
state carry every job's `depends_on` (as server/openapi.yaml says a Job is), and a
subscribed browser gets a `job-dependency` event when the job waited for ends. The site is
`test_job_dependencies.Bed`'s local fake Slurm; the server a real Jupyter server."""

from __future__ import annotations

import pytest
from test_events_stream import next_message
from test_job_dependencies import Bed, _job

from diamond_jupyter.model import Dependency, JobState
from diamond_jupyter.server.events import JOB_DEPENDENCY
from diamond_jupyter.store import Store

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")


@pytest.fixture
def bed(tmp_path, data_dir) -> Bed:
    return Bed(tmp_path)


@pytest.fixture
def jp_server_config(bed):
    from server_conftest import diamond_config

    return diamond_config(str(bed.sites), str(bed.store_path))


async def test_get_jobs_and_state_list_what_each_job_waits_for(api):
    listed = {j["id"]: j for j in (await api.get("jobs"))["jobs"]}
    state = {j["id"]: j for j in (await api.get("state", params={"max_age": 86400}))["jobs"]}
    for jobs in (listed, state):
        assert [(d["job"], d["type"], d["never"]) for d in jobs["alpha:11"]["depends_on"]] \
            == [("alpha:10", "afterok", True)]
        assert jobs["alpha:12"]["depends_on"] == []


async def test_a_job_waited_for_ending_is_a_job_dependency_event(bed, api, jp_serverapp,
                                                                   jp_ws_fetch):
    Store(bed.store_path).upsert_job(_job(
        "13", deps=[Dependency(kind="afterany", job_ids=["14"])], later_s=7, token="dn0002"))
    Store(bed.store_path).upsert_job(_job("14", JobState.RUNNING, later_s=6, token="up0002"))
    await api.get("jobs")  # the engine started, its events followed
    fed = jp_serverapp.web_app.settings["diamond_federation"]
    ws = await jp_ws_fetch("api", "events", "subscribe")
    try:
        fed.journal.apply("alpha:14", JobState.FAILED, exit_code=1, source="poll")
        msg = await next_message(ws, JOB_DEPENDENCY)
        assert (msg["job_id"], msg["outcome"], msg["upstream_state"]) == (
            "alpha:13", "satisfied", "FAILED")
        assert msg["dependency"]["job"] == "alpha:14"
    finally:
        ws.close()

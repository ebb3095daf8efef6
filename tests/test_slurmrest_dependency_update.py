"""A slurmrestd site changes a queued job's dependency by the update call (`POST job/ID`
with `dependency`, v0.0.38 on), as an SSH Slurm site runs `scontrol update`: a workflow step
kept behind a retried same-site parent keeps its place there. Sent through the federation's
workflow operations and a `RestSite` to a slurmrestd stand-in at the wire (an HTTP server on
a local port that records each request), not the test bed."""

from __future__ import annotations

import json

import pytest
import yaml
from stand_in_slurmrestd import StandInSlurmrestd, jwt_file

from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput, Dependency, Job, SiteError
from diamond_jupyter.store import Store

DEPS = [Dependency(kind="afterok", job_ids=["4250", "4251"]),
        Dependency(kind="afterany", job_ids=["4243"])]
# what slurmrestd 22.05 (v0.0.38) answers an update Slurm took, and one it refused
TAKEN = {"meta": {"plugin": {"type": "openapi/v0.0.38", "name": "Slurm OpenAPI v0.0.38"}},
         "errors": [], "warnings": []}
REFUSED = {**TAKEN, "errors": [{"error_code": 2072,
                                "error": "Job dependency problem"}]}


def _sites(tmp_path, url: str) -> Federation:
    token = jwt_file(tmp_path)
    token.chmod(0o600)

    def rest(name: str, version: str) -> dict:
        return {"name": name, "workdir": "/home/u/.diamond", "transport": {
            "kind": "slurmrestd", "url": url, "user": "u", "token_file": str(token),
            "api_version": version}}
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [rest("new", "v0.0.38"), rest("v41", "v0.0.41"),
                                               rest("old", "v0.0.37")]}))
    return Federation(sites, store=Store(tmp_path / "store.sqlite3"))


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()


async def test_the_workflow_moves_a_rest_jobs_dependency_by_the_update_call(tmp_path, home):
    # before: a slurmrestd site was never asked (supports_dependency_update False): the
    # kept child was cancelled and submitted again behind the new run
    async with StandInSlurmrestd(answer=lambda m, p, b: (200, json.dumps(TAKEN))) as rest:
        fed = _sites(tmp_path, rest.url)
        try:
            ops = fed.workflow_engine.ops
            assert [ops.supports_dependency_update(s) for s in ("new", "v41", "old")] == [
                True, True, False]
            for site in ("new", "v41"):
                await ops.update_dependencies(
                    Job(id=f"{site}:4242", site=site, native_id="4242", name="join"), DEPS)
        finally:
            await fed.close()
    assert [(m, p, json.loads(b)) for m, p, b in rest.requests] == [
        ("POST", f"/slurm/{v}/job/4242", {"dependency": "afterok:4250:4251,afterany:4243"})
        for v in ("v0.0.38", "v0.0.41")]


async def test_a_refused_update_names_the_job_and_slurms_reason(tmp_path):
    async with StandInSlurmrestd(answer=lambda m, p, b: (500, json.dumps(REFUSED))) as rest:
        site = rest.site(tmp_path, api_version="v0.0.38")
        try:
            with pytest.raises(SiteError, match=r"^rest: changing the dependency of 4242 "
                                                r"failed: .*Job dependency problem"):
                await site.update_dependencies("4242", DEPS)
        finally:
            await site.close()


async def test_an_older_door_is_not_asked_and_says_the_job_is_submitted_again(tmp_path):
    async with StandInSlurmrestd() as rest:
        site = rest.site(tmp_path, api_version="v0.0.37")
        try:
            assert not site.updates_dependencies
            with pytest.raises(BadInput, match=r"slurmrestd v0.0.37 is not asked .* "
                                               r"submitted again instead"):
                await site.update_dependencies("4242", DEPS)
            with pytest.raises(BadInput, match="whole-job kinds"):  # before any request
                await rest.site(tmp_path, name="r2").update_dependencies("4242", [])
        finally:
            await site.close()
    assert rest.requests == []

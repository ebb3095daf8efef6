"""REST round trips against the real local Slurm test bed (no mocks).

Every response is checked against server/openapi.yaml by the `api` fixture.
"""

from __future__ import annotations

import pytest
import yaml
from server_conftest import diamond_config, job_path

from diamond_jupyter.model import JobState

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
pytestmark = pytest.mark.testbed

HELLO = "#!/bin/bash\necho hi\n"


@pytest.fixture
def fed(jp_serverapp):
    """The server's Federation (used only to *wait* for events, never to act)."""
    return jp_serverapp.web_app.settings["diamond_federation"]


async def submit(api, script: str = HELLO, site: str = "alpha", **extra) -> dict:
    job = await api.post("jobs", {"script": script, "site": site, **extra}, expect=201)
    assert job["id"] == f"{site}:{job['native_id']}"
    return job


async def test_state_describes_the_federation(api, tb):
    state = await api.get("state")
    assert state["error"] is None
    assert set(state) >= {"sites", "jobs", "tasks", "transfers", "events", "last_seq"}
    rows = {r["name"]: r for r in state["sites"]}
    assert set(rows) == set(tb.sites)
    a, g = rows["alpha"], rows["gamma"]
    assert a["reachable"] and a["scheduler"] == "slurm"
    assert a["nodes_total"] == 4 and a["gpus_total"] == 0 and a["cpus_total"] >= 4
    assert 0 <= a["cpus_free"] <= a["cpus_total"] and 0 <= a["nodes_free"] <= 4
    assert g["gpus_total"] == 4 and {p["name"] for p in g["partitions"]} == {"short", "long"}
    assert [p["default"] for p in g["partitions"] if p["name"] == "short"] == [True]
    assert a["my_jobs"] == 0
    assert all(r["typical_start_s"] is not None for r in rows.values())  # an idle test bed
    assert a["metadata"]["architecture"] == "x86_64"


async def test_sites_site_and_snapshot(api, tb):
    sites = (await api.get("sites"))["sites"]
    assert [s["name"] for s in sites] == tb.sites
    assert all("key_file" not in s["transport"] for s in sites)
    one = await api.get("sites/beta")
    assert one["name"] == "beta" and one["snapshot"]["nodes"] == 2
    snap = await api.get("sites/gamma/snapshot", params={"max_age": 0})
    assert snap["site"] == "gamma" and snap["reachable"]
    assert sum(n["gpus"] for n in snap["nodes"]) == 4
    err = await api.get("sites/nowhere", expect=404)
    assert err["reason"] == "not-found" and "nowhere" in err["message"]
    await api.get("sites/nowhere/snapshot", expect=404)
    await api.get("sites/alpha/snapshot", params={"max_age": "soon"}, expect=400)


async def test_place_explains_an_infeasible_gpu_request(api):
    script = "#!/bin/bash\n#SBATCH --gres=gpu:1\n#SBATCH --time=00:10:00\nnvidia-smi\n"
    pl = await api.post("place", {"script": script})
    assert pl["choice"] == "gamma"
    alpha = next(v for v in pl["ranked"] if v["site"] == "alpha")
    assert not alpha["feasible"]
    assert any("gpu" in r.lower() for r in alpha["reasons"]), alpha["reasons"]
    spec = await api.post("place", {"spec": {"command": "true",
                                             "resources": {"gpus_per_node": 1}}})
    assert spec["choice"] == "gamma"


async def test_submit_get_logs_files_fetch(api, fed, jp_root_dir):
    job = await submit(api, origin={"path": "work.ipynb", "cell_id": "c1"}, name="hello")
    assert job["state"] == "PENDING" and job["origin"]["cell_id"] == "c1"
    assert job["name"].startswith("hello") and "spec" not in job
    got = await api.get(job_path(job["id"]))
    assert got["id"] == job["id"] and got["site"] == "alpha"
    done = await fed.wait(job["id"], timeout=120)
    assert done.state == JobState.COMPLETED
    got = await api.get(job_path(job["id"]))
    assert got["state"] == "COMPLETED" and got["exit_code"] == 0
    logs = await api.get(job_path(job["id"], "logs"), params={"lines": 10})
    assert logs["stdout"].strip().endswith("hi")
    files = (await api.get(job_path(job["id"], "files")))["files"]
    assert any(f.endswith("stdout.log") for f in files)
    fetched = await api.post(job_path(job["id"], "fetch"), {"dest": "results"})
    assert fetched["dest"] == "results" and fetched["paths"]
    assert all((jp_root_dir / p).is_file() for p in fetched["paths"])
    assert any((jp_root_dir / p).read_text().strip().endswith("hi") for p in fetched["paths"])
    for outside in ("/etc", "../escape"):
        err = await api.post(job_path(job["id"], "fetch"), {"dest": outside}, expect=400)
        assert err["reason"] == "bad-input" and "outside" in err["message"]
    mine = await api.get("state")
    assert job["id"] in {j["id"] for j in mine["jobs"]}
    assert mine["last_seq"] >= max(e["seq"] for e in mine["events"])


async def test_rest_site_logs_files_fetch_through_its_file_door(api, fed, jp_root_dir, tb):
    """beta-rest schedules over slurmrestd; the routes read its files through its file door."""
    assert "beta-rest" in tb.sites
    job = await submit(api, "#!/bin/bash\necho over-rest > made.txt\necho rest-hi\n",
                       site="beta-rest")
    assert (await fed.wait(job["id"], timeout=300)).state == JobState.COMPLETED
    logs = await api.get(job_path(job["id"], "logs"), params={"lines": 10})
    assert logs["stdout"] == "rest-hi\n" and logs["missing"] == ""
    files = (await api.get(job_path(job["id"], "files")))["files"]
    assert sorted(f.rsplit("/", 1)[-1] for f in files) == ["made.txt", "stderr.log",
                                                           "stdout.log"]
    fetched = await api.post(job_path(job["id"], "fetch"), {"dest": "rest-results"})
    assert (jp_root_dir / "rest-results" / "made.txt").read_text() == "over-rest\n", fetched


async def test_cancel_a_running_job(api, fed):
    job = await submit(api, "#!/bin/bash\nsleep 300\n")
    running = await fed.wait(job["id"], until=[JobState.RUNNING], timeout=300)
    assert running.state == JobState.RUNNING
    state = await api.get("state")
    assert {r["name"]: r for r in state["sites"]}["alpha"]["my_jobs"] == 1
    after = await api.post(job_path(job["id"], "cancel"))
    assert after["id"] == job["id"]
    final = await fed.wait(job["id"], timeout=300)  # long before the 300 s are up
    got = await api.get(job_path(job["id"]))
    assert got["state"] == final.state.value and final.state.terminal
    again = await api.post(job_path(job["id"], "cancel"))  # a finished job: unchanged
    assert again["state"] == got["state"]
    kinds = [e["kind"] for e in (await api.get("events", params={"job_id": job["id"]}))["events"]]
    assert "job.cancel-requested" in kinds
    assert final.state == JobState.CANCELLED


async def test_translate(api):
    script = ("#!/bin/bash\n#SBATCH -N 2\n#SBATCH --time=01:00:00\n#SBATCH --mail-type=END\n"
              "hostname\n")
    out = await api.post("translate", {"script": script, "to": "pbs"})
    assert "#PBS" in out["script"] and "hostname" in out["script"]
    assert out["spec"]["resources"]["nodes"] == 2
    assert isinstance(out["warnings"], list)
    err = await api.post("translate", {"script": script, "to": "cobol"}, expect=400)
    assert err["reason"] == "bad-input" and "cobol" in err["message"]
    await api.post("translate", {"script": script}, expect=400)


async def test_jobs_pagination_and_filters(api, fed):
    ids = [(await submit(api, f"#!/bin/bash\necho {i}\n", site, name=f"page{i}"))["id"]
           for i, site in enumerate(["alpha", "beta", "alpha"])]
    for i in ids:
        await fed.wait(i, timeout=120)
    page = await api.get("jobs", params={"limit": 2})
    assert page["total"] == 3 and page["limit"] == 2 and page["offset"] == 0
    assert [j["id"] for j in page["jobs"]] == ids[::-1][:2]  # newest first
    rest = await api.get("jobs", params={"limit": 2, "offset": 2})
    assert [j["id"] for j in rest["jobs"]] == [ids[0]]
    beta = await api.get("jobs", params={"site": "beta"})
    assert beta["total"] == 1 and beta["jobs"][0]["id"] == ids[1]
    named = await api.get("jobs", params={"name": "PAGE2"})
    assert [j["id"] for j in named["jobs"]] == [ids[2]]
    done = await api.get("jobs", params={"state": "completed,failed"})
    assert done["total"] == 3
    assert (await api.get("jobs", params={"state": "RUNNING"}))["total"] == 0
    ev = await api.get("events", params={"since": 0, "job_id": ids[1], "kinds": "job.*"})
    kinds = [e["kind"] for e in ev["events"]]
    assert "job.submitted" in kinds and kinds.count("job.state") >= 2
    assert all(e["job_id"] == ids[1] for e in ev["events"])
    assert ev["last_seq"] >= ev["events"][-1]["seq"]
    tail = await api.get("events", params={"since": ev["last_seq"]})
    assert tail["events"] == [] and tail["last_seq"] == ev["last_seq"]


async def test_unknown_job_is_404(api):
    for path in ("jobs/alpha:999999", "jobs/alpha:999999/logs", "jobs/alpha:999999/files"):
        err = await api.get(path, expect=404)
        assert err["reason"] == "not-found" and "alpha:999999" in err["message"]
    await api.post("jobs/alpha:999999/cancel", expect=404)
    await api.post("jobs/alpha:999999/fetch", expect=404)


async def test_bad_input_is_400_with_a_json_reason(api):
    cases = [
        ("POST", "jobs", {}, None),
        ("POST", "jobs", {"script": "echo hi", "site": "nowhere"}, None),
        ("POST", "jobs", {"spec": {"command": "true", "no_such_field": 1}}, None),
        ("POST", "jobs", {"script": "#!/bin/bash\n#SBATCH --gres=gpu:8\nx\n"}, None),
        ("POST", "jobs", None, b"{not json"),
        ("POST", "jobs", None, b"[1, 2]"),
        ("POST", "place", {"script": 42}, None),
        ("GET", "jobs?limit=abc", None, None),
        ("GET", "jobs?state=BOGUS", None, None),
        ("GET", "jobs?limit=100000", None, None),
        ("GET", "events?since=-1", None, None),
    ]
    for method, path, body, raw in cases:
        path, _, query = path.partition("?")
        params = dict([query.split("=")]) if query else None
        r = await api.call(method, path, body, raw=raw, params=params, expect=400,
                           validate=raw is None)
        assert r.body["reason"] == "bad-input" and r.body["message"], (path, r.body)
    assert (await api.get("jobs"))["total"] == 0  # nothing was recorded


async def test_impossible_job_names_every_sites_reason(api):
    """The REST face (and so the notebook through a server): one line, each site's reason."""
    r = await api.call("POST", "jobs", {"script": "#!/bin/bash\n#SBATCH --gres=gpu:64\nx\n"},
                       expect=400)
    msg = r.body["message"]
    assert msg.startswith("no site can run this job: ") and "\n" not in msg, msg
    for site in ("alpha", "beta", "gamma"):
        assert f"{site}: " in msg and "GPU" in msg.split(f"{site}: ", 1)[1], msg


async def test_transfers_tasks_and_openapi(api):
    assert await api.get("transfers") == {"transfers": []}
    assert await api.get("tasks") == {"tasks": []}
    doc = yaml.safe_load(await api.get("openapi.yaml", validate=False))
    assert doc["openapi"].startswith("3.1")
    assert "/diamond/api/jobs/{job_id}/logs" in doc["paths"]


class TestNotConfigured:
    @pytest.fixture
    def jp_server_config(self, tmp_path, data_dir):
        return diamond_config(str(tmp_path / "missing.yaml"), str(tmp_path / "s.sqlite3"))

    async def test_state_reports_the_reason_and_the_rest_is_503(self, api):
        state = await api.get("state")
        assert "missing.yaml" in state["error"] and state["sites"] == []
        for method, path in [("GET", "sites"), ("GET", "jobs"), ("POST", "place"),
                             ("GET", "jobs/alpha:1"), ("POST", "translate"),
                             ("GET", "events")]:
            r = await api.call(method, path, expect=503, validate=method == "GET")
            assert r.body["reason"] == "not-configured" and "missing.yaml" in r.body["message"]


class TestAdminRestrictions:
    @pytest.fixture
    def jp_server_config(self, tb, tmp_path, data_dir, monkeypatch):
        monkeypatch.setenv("DIAMOND_TEST_LLM_KEY", "sk-never-in-a-payload-0123")
        cfg = diamond_config(str(tb.config_path), str(tmp_path / "store.sqlite3"))
        cfg["DiamondApp"].update(allowed_sites=["beta"], llm_api_key_env="DIAMOND_TEST_LLM_KEY",
                                 llm_model="test-model")
        return cfg

    async def test_allowed_sites_and_the_llm_key_stays_on_the_server(self, api, jp_serverapp):
        state = await api.call("GET", "state")
        assert [r["name"] for r in state.body["sites"]] == ["beta"]
        assert [s["name"] for s in (await api.get("sites"))["sites"]] == ["beta"]
        await api.get("sites/alpha", expect=404)
        err = await api.post("jobs", {"script": HELLO, "site": "alpha"}, expect=400)
        assert "alpha" in err["message"]
        app = jp_serverapp.web_app.settings["diamond_app"]
        assert app.llm_api_key == "sk-never-in-a-payload-0123"
        assert app.agent_settings()["model"] == "test-model"
        for path in ("state", "sites", "sites/beta", "events", "jobs"):
            raw = await api.call("GET", path)
            assert "sk-never" not in str(raw.body)


async def test_transfer_between_sites(api, fed):
    site = fed.site("alpha")
    await site.transport.put_bytes(b"payload\n", "rest-src.txt")
    rec = await api.post("transfers", {"src": "alpha:rest-src.txt", "dst": "gamma:rest-dst.txt",
                                       "wait": True})
    assert rec["state"] == "SUCCEEDED" and rec["bytes"] == 8
    got = await fed.site("gamma").transport.get_bytes("rest-dst.txt")
    assert got == b"payload\n"
    listed = (await api.get("transfers"))["transfers"]
    assert rec["id"] in [t["id"] for t in listed]
    bad = await api.post("transfers", {"src": "alpha:x"}, expect=400, validate=False)
    assert "dst" in bad["message"]

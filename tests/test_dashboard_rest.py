"""GET dashboard and GET sites/NAME/usage through a real Jupyter server (answers checked
against openapi.yaml). The site is a local Slurm site whose `scontrol` prints recorded real
outputs and whose `squeue` prints a queue of three users written here (the wire level of a
scheduler; the test bed's own queues are checked in test_dashboard_testbed)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from local_slurm import recorded_sites_file

from diamond_jupyter.store import Store

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")

OUTPUTS = Path(__file__).parent / "fixtures" / "outputs" / "slurm"


def _stamp(t: datetime) -> str:
    return t.astimezone(timezone.utc).replace(tzinfo=None).isoformat(timespec="seconds")


def _queue(now: datetime) -> str:
    """%i|%T|%S|%e|%V|%l|%D|%C|%u|%P|%b|%N|%r|%k|%j (SQUEUE_FIELDS) for three users."""
    started, sub = _stamp(now - timedelta(minutes=30)), _stamp(now - timedelta(hours=1))
    est = _stamp(now + timedelta(hours=2))
    return "\n".join([
        f"40|RUNNING|{started}|N/A|{sub}|2:00:00|1|8|ann|debug|N/A|c1|None|(null)|sim",
        f"41|PENDING|{est}|N/A|{sub}|1:00:00|1|4|me|debug|N/A||Resources|(null)|mine",
        f"42|PENDING|N/A|N/A|{sub}|1:00:00|2|8|bob|debug|N/A|(null)|Priority|(null)|big",
    ]) + "\n"


@pytest.fixture
def sites_file(tmp_path) -> Path:
    (tmp_path / "queue.txt").write_text(_queue(datetime.now(timezone.utc)))
    return recorded_sites_file(tmp_path, OUTPUTS / "scontrol_node.txt", tmp_path / "queue.txt")


@pytest.fixture
def jp_server_config(sites_file, tmp_path, data_dir):
    from server_conftest import diamond_config

    store = tmp_path / "store.sqlite3"
    with Store(store) as st:  # this user's diamond job, native id 41, on the site
        st.record_intent("rec", "a1b2c3d4e5f6", None)
        st.bind_native_id("a1b2c3d4e5f6", "41")
    return diamond_config(str(sites_file), str(store))


def finished_jobs(store: Path, n: int, share: float) -> None:
    """`n` of this user's jobs on the site that ran `share` of their hour's request and
    ended within the hour (what calibrates runtimes, with the site's accounting)."""
    now = datetime.now(timezone.utc)
    with Store(store) as st:
        for i in range(n):
            tok = f"cal{i:09d}"
            st.record_intent("rec", tok, {"command": "true",
                                          "resources": {"walltime_s": 3600, "nodes": 1}})
            job = st.bind_native_id(tok, str(900 + i))
            end = now - timedelta(minutes=i)
            st.apply_state(job.id, "RUNNING", started_at=end - timedelta(hours=share))
            st.apply_state(job.id, "COMPLETED", exit_code=0, ended_at=end)


async def test_the_dashboard_lists_every_users_jobs_and_marks_this_users(api):
    d = await api.get("dashboard")
    assert d["user"] and datetime.fromisoformat(d["generated"])
    (site,) = d["sites"]
    assert site["name"] == "rec" and site["scheduler"] == "slurm" and site["reachable"]
    assert site["totals"]["nodes"] >= 1 and site["totals"]["cpus"] > 0
    rows = {r["id"]: r for r in site["queue"]}
    assert list(rows) == ["40", "41", "42"]
    assert {r["user"] for r in rows.values()} == {"ann", "me", "bob"}
    assert [(r["mine"], r["job"]) for r in rows.values()] == [
        (False, None), (True, "rec:41"), (False, None)]
    run, mine, big = rows["40"], rows["41"], rows["42"]
    assert run["state"] == "RUNNING" and run["predicted_start"] is None
    assert 29 * 60 <= run["running_s"] <= 40 * 60 and 29 * 60 <= run["waited_s"] <= 40 * 60
    # no calibration samples here: the scheduler's own estimate, unbounded
    p = mine["predicted_start"]
    assert p["source"] == "scheduler" and p["p90_s"] is None
    assert 1.8 * 3600 <= p["median_s"] <= 2 * 3600
    assert big["predicted_start"] is None  # the scheduler planned no start
    assert (big["nodes"], big["cpus"], big["gpus"]) == (2, 8, None)


async def test_each_snapshot_adds_a_usage_point_kept_in_the_store(api, tmp_path):
    assert (await api.get("sites/rec/usage"))["points"] == []
    await api.get("dashboard", params={"max_age": 0})
    (point,) = (await api.get("sites/rec/usage", params={"hours": 1}))["points"]
    assert (point["pending"], point["running"]) == (2, 1)
    assert point["busy_cpus"] > 0 and point["t"] > 0
    # a second snapshot within the same minute replaces it (one point per minute)
    await api.get("dashboard", params={"max_age": 0})
    (again,) = (await api.get("sites/rec/usage", params={"hours": 0.5}))["points"]
    assert again["t"] >= point["t"]
    with Store(tmp_path / "store.sqlite3") as st:  # on disk, where a restart reads it
        assert st.usage("rec") == [again]


@pytest.mark.parametrize("hours, says", [("0", "above 0"), ("200", "at most 168"),
                                         ("soon", "number of hours"), ("nan", "number")])
async def test_usage_refuses_bad_hours(api, hours, says):
    r = await api.call("GET", "sites/rec/usage", params={"hours": hours}, expect=400,
                       validate=False)
    assert r.body["reason"] == "bad-input" and says in r.body["message"]


async def test_usage_of_an_unknown_site_is_404(api):
    r = await api.call("GET", "sites/nope/usage", expect=404)
    assert "nope" in r.body["message"]


async def test_with_runtime_samples_a_job_without_an_estimate_gets_the_simulated_start(
        api, tmp_path):
    finished_jobs(tmp_path / "store.sqlite3", 8, 0.25)
    d = await api.get("dashboard", params={"max_age": 0})
    rows = {r["id"]: r for r in d["sites"][0]["queue"]}
    big, mine = rows["42"]["predicted_start"], rows["41"]["predicted_start"]
    assert big is not None and big["source"] == "calibrated", rows["42"]
    assert 0 <= big["median_s"] <= big["p90_s"]
    # one with the scheduler's estimate, no wait samples: the simulation's, calibrated
    assert mine["source"] == "calibrated" and mine["median_s"] <= mine["p90_s"]


HOSTILE_NAMES = {"43": "evil\u202etxt.exe", "44": "a\u200bb\x1b]52;c;aWQ=\x07",
                 "45": "<img src=x onerror=alert(1)>"}


@pytest.mark.parametrize("route", ["dashboard", "sites/rec/snapshot"])
async def test_other_users_job_names_come_back_raw_as_json_that_nothing_runs(
        api, tmp_path, route):
    """Names other users gave their jobs are theirs: the JSON keeps them as they are (a
    client decides how to show them), served as JSON only (never sniffed as a page)."""
    sub = _stamp(datetime.now(timezone.utc) - timedelta(hours=1))
    (tmp_path / "queue.txt").write_text("".join(
        f"{i}|PENDING|N/A|N/A|{sub}|1:00:00|1|1|eve|debug|N/A||Priority|(null)|{n}\n"
        for i, n in HOSTILE_NAMES.items()))
    reply = await api.call("GET", route)
    assert reply.headers["Content-Type"].split(";")[0] == "application/json"
    assert reply.headers["X-Content-Type-Options"] == "nosniff"
    assert "default-src 'none'" in reply.headers["Content-Security-Policy"]
    if route == "dashboard":
        names = {r["id"]: r["name"] for r in reply.body["sites"][0]["queue"]}
    else:
        names = {j["native_id"]: j["name"] for j in reply.body["jobs"]}
    assert names == HOSTILE_NAMES

"""Wake on what matters, below the facade: which job events call for a `job.attention`
event (start, a pending reason that means "never", a failure), and the timer that says a
running job nears its time limit. A real store on disk, no test bed."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from diamond_jupyter.attention import never_reason, walltime_margin_s
from diamond_jupyter.journal import Journal
from diamond_jupyter.model import JobSpec, JobState, Resources, utcnow
from diamond_jupyter.store import Store


@pytest.fixture
def journal(tmp_path):
    return Journal(Store(tmp_path / "s.sqlite"), {})


def _job(journal: Journal, token: str = "tok1", walltime_s: int | None = 3600) -> str:
    spec = JobSpec(name="j", command="true", resources=Resources(walltime_s=walltime_s))
    journal.store.record_intent("alpha", token, spec)
    return journal.store.bind_native_id(token, "100").id


def _attention(journal: Journal) -> list[dict]:
    return [e.data for e in journal.store.events_since(0, kinds=["job.attention"])]


@pytest.mark.parametrize("reason,never", [
    ("PartitionTimeLimit", "PartitionTimeLimit"),
    ("ReqNodeNotAvail, UnavailableNodes:an1", "ReqNodeNotAvail"),
    # reached by the account's running jobs: free as they end (sweep 19 of outputs)
    ("AssocGrpCpuLimit", None),
    ("AssocGrpGRES", None),
    ("AssocGrpCPUMinutesLimit", "AssocGrpCPUMinutesLimit"),
    ("QOSMaxWallDurationPerJobLimit", "QOSMaxWallDurationPerJobLimit"),
    ("QOSMaxGRESPerJob", "QOSMaxGRESPerJob"),
    ("BadConstraints", "BadConstraints"),
    ("Resources", None), ("Priority", None), ("Dependency", None),
    ("AssocMaxJobsLimit", None), ("QOSMaxJobsPerUserLimit", None), (None, None),
])
def test_which_pending_reasons_mean_never(reason, never):
    assert never_reason(reason) == never


async def test_a_never_reason_wakes_once_and_an_ordinary_one_not(journal):
    jid = _job(journal)
    journal.apply(jid, JobState.PENDING, reason="Priority", source="poll")
    assert _attention(journal) == []
    journal.apply(jid, JobState.PENDING, reason="PartitionTimeLimit", source="poll")
    journal.apply(jid, JobState.PENDING, reason="PartitionTimeLimit", source="poll")  # again
    [att] = _attention(journal)
    assert att["attention"] == "stuck" and att["reason"] == "PartitionTimeLimit"
    assert att["version"] == "1" and "partition allows" in att["explanation"]


async def test_start_and_failure_with_its_reason(journal):
    jid = _job(journal, walltime_s=None)
    journal.apply(jid, JobState.RUNNING, started_at=utcnow(), source="wrapper")
    journal.apply(jid, JobState.FAILED, exit_code=3, reason="exit code 3", source="wrapper")
    kinds = [(a["attention"], a["reason"]) for a in _attention(journal)]
    assert kinds == [("started", None), ("failed", "exit code 3")]
    # the attention event follows the state change it came from, in store order
    seqs = [(e.kind, e.data.get("state")) for e in journal.store.events_since(0)
            if e.kind in ("job.state", "job.attention")]
    assert seqs[-4:] == [("job.state", "RUNNING"), ("job.attention", "RUNNING"),
                         ("job.state", "FAILED"), ("job.attention", "FAILED")]


async def test_a_completed_job_needs_no_attention(journal):
    jid = _job(journal, walltime_s=None)
    journal.apply(jid, JobState.COMPLETED, exit_code=0, source="poll")
    assert _attention(journal) == []


async def test_nearing_the_time_limit(journal):
    journal.attention.margin = lambda wall: wall - 0.3  # warn 0.3 s after the start
    seen = asyncio.Event()
    journal.subscribe(lambda ev: ev.kind == "job.attention"
                      and ev.data["attention"] == "walltime" and seen.set())
    jid = _job(journal, walltime_s=60)
    journal.apply(jid, JobState.RUNNING, started_at=utcnow(), source="wrapper")
    await asyncio.wait_for(seen.wait(), 10)
    att = [a for a in _attention(journal) if a["attention"] == "walltime"]
    assert len(att) == 1 and att[0]["walltime_s"] == 60 and 55 <= att[0]["remaining_s"] <= 60
    await journal.stop()


async def test_a_job_that_ends_first_is_not_warned(journal):
    journal.attention.margin = lambda wall: wall - 0.5
    jid = _job(journal, walltime_s=60)
    journal.apply(jid, JobState.RUNNING, started_at=utcnow(), source="wrapper")
    journal.apply(jid, JobState.COMPLETED, exit_code=0, source="wrapper")
    assert jid not in journal.attention._timers
    assert [a["attention"] for a in _attention(journal)] == ["started"]


async def test_timers_are_rearmed_after_a_restart(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    first = Journal(store, {})
    jid = _job(first, walltime_s=100)
    first.apply(jid, JobState.RUNNING, started_at=utcnow() - timedelta(seconds=95),
                source="wrapper")
    await first.stop()  # the engine stops: its timer goes with it
    second = Journal(store, {})
    seen = asyncio.Event()
    second.subscribe(lambda ev: ev.kind == "job.attention" and ev.data["attention"] ==
                     "walltime" and seen.set())
    second.attention.rearm()
    await asyncio.wait_for(seen.wait(), 10)  # already inside the margin: at once
    await second.stop()


def test_margin_is_a_tenth_between_30s_and_15min():
    assert (walltime_margin_s(60), walltime_margin_s(3600), walltime_margin_s(86400)) == (
        30.0, 360.0, 900.0)


async def test_attention_reaches_the_browser_under_its_own_versioned_schema(journal):
    import jsonschema
    import yaml

    from diamond_jupyter.server.events import JOB_ATTENTION, SCHEMA_DIR, to_emission

    jid = _job(journal)
    journal.apply(jid, JobState.PENDING, reason="ReqNodeNotAvail, UnavailableNodes:gn1",
                  source="poll")
    [ev] = journal.store.events_since(0, kinds=["job.attention"])
    schema_id, payload = to_emission(ev, None)
    assert schema_id == JOB_ATTENTION
    schema = yaml.safe_load((SCHEMA_DIR / "job-attention.yaml").read_text())
    assert schema["$id"] == JOB_ATTENTION and schema["version"] == "1"
    jsonschema.validate(payload, schema)
    assert payload["never"] == "ReqNodeNotAvail" and payload["seq"] == ev.seq


def test_the_job_as_its_user_gave_it(tmp_path):
    """What a resubmission sends elsewhere: no wrapper, token, job-directory paths or
    site-bound names; what the user chose is kept."""
    from diamond_jupyter.config import FederationConfig, SiteConfig
    from diamond_jupyter.federation import Federation

    local = {"kind": "local"}
    cfg = FederationConfig(sites=[SiteConfig(name="a", workdir="/w", transport=local,
                                             default_account="acct-a"),
                                  SiteConfig(name="b", workdir="/w", transport=local)])
    fed = Federation(cfg, store=Store(tmp_path / "s.sqlite"))
    spec = JobSpec(name="x", script="echo hi\n", queue="short", stderr="/data/err.log",
                   resources=Resources(walltime_s=3600, nodes=2))
    prepared = fed.site("a").prepare(spec, "abcdef123456")
    assert prepared.script != spec.script and prepared.account == "acct-a"
    fed.store.record_intent("a", "abcdef123456", prepared)
    job = fed.store.bind_native_id("abcdef123456", "5")
    again = fed.original_spec(fed.job(job.id))
    assert again.script == "echo hi\n" and again.name == "x"
    assert (again.queue, again.account, again.comment) == (None, None, None)
    assert again.stdout is None and again.working_directory is None
    assert again.stderr == "/data/err.log" and again.resources == spec.resources

"""A slurmrestd submit (POST job/submit) whose connection dropped after the request went
out goes the lost-answer way, as sbatch's timeouts do: the job is looked up by its token,
bound when it is there, the intent kept open otherwise (never sent again: a second job);
a connection refused before anything was sent is CommandNotSent, the intent closed at once
as never submitted. Through a real engine and store to the slurmrestd stand-in at the wire
(`stand_in_slurmrestd`), no test bed.

Before: a dropped POST was sent once more on a fresh connection (slurmrestd, which had
queued the job, queued a second), and a POST whose second try dropped too, or a refused
connection, was a plain SiteError that left the intent open without saying why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from stand_in_slurmrestd import StandInSlurmrestd, jwt_file

from diamond_jupyter.federation import Federation
from diamond_jupyter.model import JobSpec, JobState, SiteError
from diamond_jupyter.store import Store
from diamond_jupyter.transports import CommandNotSent, ConnectionLost
from diamond_jupyter.transports import slurmrestd as rest_transport

JOB = json.loads((Path(__file__).parent / "fixtures" / "outputs" / "slurmrestd" /
                  "jobs.json").read_text())["jobs"][0]


class Slurmctld:
    """What the stand-in answers: `GET jobs` lists the jobs taken; a submit is taken
    (when `takes`) and its connection then dropped before any answer."""

    def __init__(self, takes: bool) -> None:
        self.takes = takes
        self.jobs: list[dict] = []

    def answer(self, method: str, path: str, body: bytes) -> tuple[int, str]:
        if path.endswith("/job/submit"):
            job = json.loads(body)["job"]
            if self.takes:
                self.jobs.append({**JOB, "job_id": 4243 + len(self.jobs),
                                  "name": job.get("name"), "comment": job.get("comment"),
                                  "job_state": "PENDING", "user_name": "u",
                                  "start_time": 0})
            raise ConnectionResetError  # the stand-in closes the connection, no answer
        if path.endswith("/jobs"):
            return 200, json.dumps({"meta": {}, "errors": [], "jobs": self.jobs})
        return 500, json.dumps({"errors": [{"error": f"no {path} here"}]})


async def _fed(tmp_path: Path, url: str) -> Federation:
    jwt_file(tmp_path).chmod(0o600)  # a JWT others can read is refused in a sites file
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [{
        "name": "rest", "scheduler": "slurm", "workdir": "/home/u/.diamond",
        "transport": {"kind": "slurmrestd", "url": url, "user": "u", "connect_timeout_s": 2,
                      "token_file": str(tmp_path / "jwt")}}]}))
    return Federation(sites, store=Store(tmp_path / "store.sqlite"), poll_interval_s=3600,
                      min_poll_s=3600, unsure_submit_settle_s=0.5)


def _spec(tmp_path: Path) -> JobSpec:
    return JobSpec(name="lost", command="true", working_directory="/home/u/run")


def _posts(rest: StandInSlurmrestd) -> int:
    return sum(1 for method, _, _ in rest.requests if method == "POST")


async def test_a_submit_whose_connection_dropped_is_found_by_its_token(tmp_path):
    ctld = Slurmctld(takes=True)
    async with StandInSlurmrestd(answer=ctld.answer) as rest:
        fed = await _fed(tmp_path, rest.url)
        try:
            job = await fed.submit(_spec(tmp_path), "rest", force=True)
            assert job.native_id == "4243" and not job.state.terminal
            assert _posts(rest) == 1  # not sent again: one job
            assert fed.store.intents_without_native_id() == []
            [note] = fed.submit_notes(job.id)
            assert note.startswith("rest: the submit's answer did not come (rest: the "
                                   f"connection to slurmrestd at {rest.url} dropped after "
                                   "POST job/submit was sent ("), note
            assert note.endswith("); the job was found in the queue by its token"), note
        finally:
            await fed.close()


async def test_a_dropped_submit_not_taken_keeps_the_intent_open_then_closes_it(tmp_path):
    ctld = Slurmctld(takes=False)
    async with StandInSlurmrestd(answer=ctld.answer) as rest:
        fed = await _fed(tmp_path, rest.url)
        try:
            with pytest.raises(SiteError, match="may have taken the job; diamond is "
                                                "checking by its token") as told:
                await fed.submit(_spec(tmp_path), "rest", force=True)
            assert "dropped after POST job/submit was sent" in str(told.value)
            assert _posts(rest) == 1
            [intent] = fed.store.intents_without_native_id()
            assert not intent.state.terminal  # open, not "never submitted"
            job = await fed.journal.recover_intent_settled(intent)
            assert job.state == JobState.FAILED and job.native_id is None
            assert job.reason == "the submit did not reach the scheduler"
        finally:
            await fed.close()


async def test_a_refused_connection_is_not_sent_and_closed_at_once(tmp_path, monkeypatch):
    monkeypatch.setattr(rest_transport, "REFUSED_PAUSE_S", 0.0)
    async with StandInSlurmrestd(answer=Slurmctld(takes=True).answer) as rest:
        url = rest.url
    # the stand-in is gone: its port refuses every connection
    fed = await _fed(tmp_path, url)
    try:
        with pytest.raises(SiteError, match=r"rest: the submit could not be sent \(rest: "
                                            r"cannot connect to slurmrestd .*connection "
                                            r"refused.*\); nothing was submitted"):
            await fed.submit(_spec(tmp_path), "rest", force=True)
        assert fed.store.intents_without_native_id() == []
        [job] = fed.store.list_jobs()
        assert job.state == JobState.FAILED and job.native_id is None
    finally:
        await fed.close()


async def test_the_transport_tells_a_drop_after_a_post_from_one_before_it(tmp_path,
                                                                         monkeypatch):
    monkeypatch.setattr(rest_transport, "REFUSED_PAUSE_S", 0.0)
    ctld = Slurmctld(takes=True)
    async with StandInSlurmrestd(answer=ctld.answer) as rest:
        site = rest.site(tmp_path)
        try:
            with pytest.raises(ConnectionLost):
                await site.rest.request("POST", "job/submit", body={"job": {"name": "x"}})
            assert _posts(rest) == 1 and len(ctld.jobs) == 1
            # a GET whose connection drops is asked once more, then said, as before
            with pytest.raises(SiteError, match="cannot reach slurmrestd") as got:
                await site.rest.request("GET", "job/submit")
            assert not isinstance(got.value, (ConnectionLost, CommandNotSent))
            assert [m for m, p, _ in rest.requests if m == "GET"] == ["GET", "GET"]
        finally:
            await site.close()
    with pytest.raises(CommandNotSent, match="connection refused"):
        await site.rest.request("POST", "job/submit", body={"job": {}})
    await site.close()


async def test_an_update_post_whose_connection_dropped_is_asked_once_more(tmp_path):
    """A POST other than a submit (a hold or release: the same twice is no harm) keeps
    the retry on a fresh connection that a kept-alive one the server closed needs."""
    def answer(method: str, path: str, body: bytes) -> tuple[int, str]:
        raise ConnectionResetError

    async with StandInSlurmrestd(answer=answer) as rest:
        site = rest.site(tmp_path)
        try:
            with pytest.raises(SiteError, match="cannot reach slurmrestd") as got:
                await site.rest.request("POST", "job/4243", body={"hold": False})
            assert not isinstance(got.value, ConnectionLost)
            assert _posts(rest) == 2
        finally:
            await site.close()

"""PBS Pro's `qstat -f -F json` prints string values as they are: a value holding a raw
newline and raw quotes (a job name qsub would refuse, a `-v` value, a comment, or any text a
hostile server sends) made the whole listing unreadable, so the site read as failed. Now the
listing is read job by job where it does not read whole: every other job is kept, and only
the malformed job's record is kept as UNKNOWN, saying why (pure dialect; no I/O)."""

from __future__ import annotations

import pytest

from diamond_jupyter.dialects import get_commands
from diamond_jupyter.model import JobState, SiteError

LISTING = """{
    "timestamp":1479277336,
    "pbs_version":"19.1.3",
    "pbs_server":"srv",
    "Jobs":{
        "41.srv":{
            "Job_Name":"NAME41",
            "Job_Owner":"me@srv",
            "job_state":"R",
            "queue":"workq",
            "Resource_List":{
                "ncpus":4,
                "walltime":"01:00:00"
            },
            "comment":"Job run at Fri"
        },
        "42.srv":{
            "Job_Name":"NAME42",
            "Job_Owner":"eve@srv",
            "job_state":"Q",
            "queue":"workq",
            "Variable_List":{
                "X":"plain"
            }
        },
        "43.srv":{
            "Job_Name":"NAME43",
            "Job_Owner":"bob@srv",
            "job_state":"H",
            "Hold_Types":"u",
            "queue":"workq"
        }
    }
}
"""
NAMES = {"41.srv": "train", "42.srv": "eves", "43.srv": "held"}
BAD = 'say "hi"\nto "all"'  # raw quotes and a raw newline: no JSON reader takes it


def listing(bad: str | None = None) -> str:
    text = LISTING
    for jid, name in NAMES.items():
        text = text.replace(f"NAME{jid.split('.')[0]}", bad if jid == "42.srv" and bad
                            else name)
    return text


def test_the_listing_reads_whole_when_nothing_is_malformed():
    jobs = get_commands("pbs").parse_status(listing())
    assert [(j.native_id, j.name) for j in jobs] == list(NAMES.items())


@pytest.mark.parametrize("where", ["41.srv", "42.srv", "43.srv"])
def test_a_raw_newline_in_one_jobs_value_spoils_only_that_job(where):
    text = LISTING
    for jid, name in NAMES.items():
        text = text.replace(f"NAME{jid.split('.')[0]}", BAD if jid == where else name)
    jobs = {j.native_id: j for j in get_commands("pbs").parse_status(text)}
    assert list(jobs) == list(NAMES)  # every job, in the listing's order
    bad = jobs.pop(where)
    assert bad.state == JobState.UNKNOWN and bad.name is None
    assert bad.reason.startswith("the scheduler's record of this job could not be read")
    assert "invalid JSON" in bad.reason and "raw newline" in bad.reason
    for jid, job in jobs.items():  # the others as the scheduler gave them
        assert job.name == NAMES[jid] and job.state != JobState.UNKNOWN
    if where != "41.srv":
        assert (jobs["41.srv"].state, jobs["41.srv"].cpus, jobs["41.srv"].walltime_s) == (
            JobState.RUNNING, 4, 3600)


def test_the_snapshot_keeps_the_sites_other_jobs():
    snap = get_commands("pbs").parse_snapshot("pbs", {"queue": listing(BAD)})
    states = {j.native_id: j.state for j in snap.jobs}
    assert states == {"41.srv": JobState.RUNNING, "42.srv": JobState.UNKNOWN,
                      "43.srv": JobState.PENDING}


def test_a_raw_newline_without_quotes_still_reads_whole():
    jobs = get_commands("pbs").parse_status(listing("two\nlines"))
    assert [j.name for j in jobs] == ["train", "two\nlines", "held"]


def test_a_forged_record_of_a_real_id_makes_neither_believed():
    """The malformed value writes a whole record of job 41 (running -> finished): the id
    has two records, and which is the scheduler's cannot be told."""
    forged = ('x"\n        },\n        "41.srv":{\n            "job_state":"F",\n'
              '            "Exit_status":0,\n            "Job_Name":"y')
    jobs = {j.native_id: j for j in get_commands("pbs").parse_status(listing(forged))}
    assert jobs["41.srv"].state == JobState.UNKNOWN
    assert "two records" in jobs["41.srv"].reason
    assert jobs["43.srv"].state == JobState.PENDING


def test_a_listing_with_no_job_record_at_all_is_still_a_clear_error():
    with pytest.raises(SiteError, match="cannot parse qstat -F json"):
        get_commands("pbs").parse_status('{"Jobs": {"a": "b\n"c""}')

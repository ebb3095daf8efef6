"""A site whose wrapper or locale prints a warning on every command still gets its jobs
followed: the job poll and the lookup by name read the records between the messages (before
and after them, or the JSON/XML document), and say each distinct message once as the site's
warning, not once per poll. A line that looks like a record but cannot be read still fails
the poll, so a job whose record is garbled keeps its last known state, never read as gone
(then COMPLETED, or lost).

A real `Site` (and `Journal` with its monitor) on each scheduler's own dialect, its status
commands answered from recorded outputs by a transport that only hands them back (no test
bed)."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from typing import Any

import pytest
from one_site_engine import one_followed_job

from diamond_jupyter.config import SiteConfig, TransportConfig
from diamond_jupyter.dialects.outputs_common import MessagesOnly
from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.model import JobState, SiteError
from diamond_jupyter.sites import Site
from diamond_jupyter.transports.base import CommandResult

LOCALE = ("perl: warning: Setting locale failed.\n"
          "perl: warning: Falling back to the standard locale (\"C\").\n")
WRAPPER_NOTE = "NOTE: this cluster is scheduled for maintenance on Friday\n"

Answer = Callable[[str], str]  # the command's stdin (a private format) -> its stdout


class RecordedTransport:
    """Hands each command the recorded stdout of the scheduler program it runs (named by
    `answers`); keeps the programs asked, in order."""

    def __init__(self, answers: dict[str, str | Answer]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    async def run(self, argv: list[str], *, stdin: bytes | None = None, **_: Any
                  ) -> CommandResult:
        program = next(a for a in argv if a in self.answers)
        self.asked.append(program)
        answer = self.answers[program]
        out = answer((stdin or b"").decode()) if callable(answer) else answer
        return CommandResult(list(argv), 0, out, "", 0.0)

    async def close(self) -> None:
        pass


def _site(scheduler: str, answers: dict[str, str | Answer], tmp_path, **cfg: Any
          ) -> tuple[Site, RecordedTransport]:
    transport = RecordedTransport(answers)
    site = Site(SiteConfig(name="wren", scheduler=scheduler, workdir=str(tmp_path / "w"),
                           transport=TransportConfig(kind="local"), **cfg),
                transport=transport)
    return site, transport


def _said(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "diamond_jupyter.sites"]


# -- Slurm: squeue with its private separator, sacct -P ------------------------------------

def squeue_record(jid: str, state: str = "RUNNING", name: str = "sim") -> Answer:
    """squeue's record of SQUEUE_FIELDS for the separator the query sent on stdin."""
    def answer(stdin: str) -> str:
        sep = re.search(r"#dj-[0-9a-f]{16}#", stdin).group(0)
        fields = [jid, state, "2026-12-06T10:00:00", "2026-12-06T11:00:00",
                  "2026-12-06T09:59:00", "1:00:00", "1", "4", "me", "batch", "N/A", "c1",
                  "None", "(null)", "5:00", name]
        return "".join(f + sep for f in fields) + "\n"
    return answer


def around(answer: Answer, before: str = LOCALE, after: str = WRAPPER_NOTE) -> Answer:
    return lambda stdin: before + answer(stdin) + after


SACCT_ENDED = "500|COMPLETED|0:0|2026-12-06T10:00:00|2026-12-06T10:30:00|c1|sim|500\n"


async def test_slurm_poll_reads_the_job_between_messages_and_says_each_once(tmp_path, caplog):
    site, _ = _site("slurm", {"squeue": around(squeue_record("500")), "sacct": ""}, tmp_path)
    caplog.set_level(logging.WARNING)
    for _ in range(3):
        (job,) = await site.statuses(["500"])
        assert (job.native_id, job.state) == ("500", JobState.RUNNING)
    said = _said(caplog)
    assert len(said) == 3, said  # two locale lines and the note, each once in three polls
    assert said[0] == ("wren: slurm: cannot parse squeue line 1: not a record (got 'perl: "
                       "warning: Setting locale failed.')")
    assert "squeue line 4: not a record" in said[2] and "maintenance" in said[2]


async def test_slurm_job_gone_from_the_queue_is_read_from_sacct_between_messages(tmp_path):
    site, transport = _site("slurm", {"squeue": LOCALE,
                                      "sacct": LOCALE + SACCT_ENDED + WRAPPER_NOTE}, tmp_path)
    (job,) = await site.statuses(["500"])
    assert (job.state, job.exit_code) == (JobState.COMPLETED, 0)
    assert transport.asked == ["squeue", "sacct"]


async def test_slurm_lookup_by_name_reads_the_job_between_messages(tmp_path, caplog):
    site, _ = _site("slurm", {"squeue": around(squeue_record("501", name="sim.dmd-t1"))},
                    tmp_path)
    caplog.set_level(logging.WARNING)
    (found,) = await site.find_by_name("sim.dmd-t1")
    assert (found.native_id, found.name) == ("501", "sim.dmd-t1")
    assert len(_said(caplog)) == 3


@pytest.mark.parametrize("garbled", [
    # a whole record whose id is no job id (the separator there: the scheduler's record)
    lambda stdin: squeue_record("5x0")(stdin),
    # a record cut short after the messages
    lambda stdin: LOCALE + squeue_record("500")(stdin)[:60],
], ids=["no job id", "cut short"])
async def test_a_garbled_squeue_record_fails_the_poll_and_asks_no_accounting(
        tmp_path, garbled):
    site, transport = _site("slurm", {"squeue": garbled, "sacct": SACCT_ENDED}, tmp_path)
    with pytest.raises(SiteError, match="cannot parse squeue"):
        await site.statuses(["500"])
    assert transport.asked == ["squeue"]  # not taken as gone from the queue


async def test_a_line_of_sacct_that_looks_like_a_record_still_fails(tmp_path):
    site, _ = _site("slurm", {"squeue": "", "sacct": LOCALE + SACCT_ENDED + "501|FAIL\n"},
                    tmp_path)
    with pytest.raises(SiteError, match="sacct line 4"):
        await site.statuses(["500"])


async def test_a_followed_job_with_a_garbled_record_keeps_its_last_known_state(tmp_path):
    """The monitor's poll: the record garbled five polls in a row (more than the misses
    that make a job lost), the job stays RUNNING; once the record reads, it ends as
    accounting says."""
    answers: dict[str, str | Answer] = {"squeue": around(squeue_record("5x0")),
                                        "sacct": SACCT_ENDED}
    site, _ = _site("slurm", answers, tmp_path)
    async with one_followed_job(site, tmp_path / "store.sqlite", "500") as (store, mon):
        for _ in range(5):
            with pytest.raises(SiteError, match="squeue record 1: no job id"):
                await mon.poll_once()
            assert store.get_job("wren:500").state == JobState.RUNNING
        answers["squeue"] = LOCALE  # gone from the queue, the messages still there
        assert await mon.poll_once() == 1
        assert store.get_job("wren:500").state == JobState.COMPLETED


def squeue_json(*jobs: dict[str, Any]) -> str:
    return json.dumps({"errors": [], "jobs": list(jobs)}, indent=2)


def test_squeue_json_takes_messages_around_the_document_but_not_a_job_without_id():
    job = {"job_id": 500, "job_state": "RUNNING", "name": "sim", "user_name": "me"}
    messages = MessagesOnly()
    jobs = SlurmCommands().parse_status_json(LOCALE + squeue_json(job) + "\n" + WRAPPER_NOTE,
                                             messages)
    assert [(j.native_id, j.state) for j in jobs] == [("500", JobState.RUNNING)]
    assert [m.split(": ", 2)[1] for m in messages] == [
        "cannot parse squeue --json line 1", "cannot parse squeue --json line 2",
        "cannot parse squeue --json line 14"]
    with pytest.raises(SiteError, match="squeue --json job 2: no job_id"):
        SlurmCommands().parse_status_json(LOCALE + squeue_json(job, {"name": "x"}),
                                          MessagesOnly())
    # a list that takes records too (a snapshot's) leaves that job out, as before
    said: list[str] = []
    assert len(SlurmCommands().parse_status_json(squeue_json(job, {"name": "x"}), said)) == 1
    assert said and "no job_id" in said[0]


# -- PBS Pro, LSF, Grid Engine, Flux: their status commands' documents --------------------

def pbs_jobs(**jobs: Any) -> str:
    return json.dumps({"timestamp": 1765015200, "pbs_version": "2024.1.0",
                       "pbs_server": "srv", "Jobs": jobs}, indent=4) + "\n"


PBS_RUNNING = {"Job_Name": "sim", "Job_Owner": "me@login", "job_state": "R",
               "queue": "workq", "Resource_List": {"walltime": "01:00:00"}}


def lsf_jobs(*records: dict[str, str]) -> str:
    return json.dumps({"COMMAND": "bjobs", "JOBS": len(records), "RECORDS": list(records)},
                      indent=2) + "\n"


LSF_RUNNING = {"JOBID": "71", "STAT": "RUN", "USER": "me", "QUEUE": "normal",
               "JOB_NAME": "sim", "SUBMIT_TIME": "Dec  6 10:00"}


def sge_jobs(number: str) -> str:
    return f"""<?xml version='1.0'?>
<job_info>
  <queue_info>
    <job_list state="running">
      <JB_job_number>{number}</JB_job_number>
      <JB_name>sim</JB_name>
      <JB_owner>me</JB_owner>
      <state>r</state>
      <JAT_start_time>2026-12-06T10:00:00</JAT_start_time>
      <queue_name>all.q@node-001</queue_name>
      <slots>1</slots>
    </job_list>
  </queue_info>
  <job_info>
  </job_info>
</job_info>
"""


def flux_jobs(*jobs: dict[str, Any]) -> str:
    return json.dumps({"jobs": list(jobs)}) + "\n"


FLUX_RUNNING = {"id": 11, "userid": 1000, "state": "RUN", "name": "sim", "nnodes": 1}

# scheduler, its status program, the followed job's id, a readable answer, a garbled one
OTHERS = [
    ("pbs", "qstat", "12.srv", pbs_jobs(**{"12.srv": PBS_RUNNING}),
     pbs_jobs(**{"12.srv": "R"}), "qstat -F json: Jobs entry '12.srv'"),
    ("lsf", "bjobs", "71", lsf_jobs(LSF_RUNNING),
     lsf_jobs({k: v for k, v in LSF_RUNNING.items() if k != "JOBID"}),
     "bjobs -json record 1: no JOBID"),
    ("sge", "qstat", "501", sge_jobs("501"), sge_jobs("5x1"), "qstat -xml"),
    ("flux", "flux", "11", flux_jobs(FLUX_RUNNING),
     flux_jobs({k: v for k, v in FLUX_RUNNING.items() if k != "id"}),
     "flux jobs --json job 1: not a job with an id"),
]


@pytest.mark.parametrize("scheduler,program,native,readable,garbled,why", OTHERS,
                         ids=[o[0] for o in OTHERS])
async def test_each_scheduler_polls_between_messages_and_fails_on_a_garbled_record(
        tmp_path, caplog, scheduler, program, native, readable, garbled, why):
    after = WRAPPER_NOTE  # after the document too, Grid Engine's XML as the JSON
    answers: dict[str, str | Answer] = {program: LOCALE + readable + after}
    site, transport = _site(scheduler, answers, tmp_path)
    caplog.set_level(logging.WARNING)
    for _ in range(2):
        (job,) = await site.statuses([native])
        assert (job.native_id, job.state, job.name) == (native, JobState.RUNNING, "sim")
    said = _said(caplog)
    assert len(said) == 3, said
    assert all(s.startswith(f"wren: {scheduler}: cannot parse ") for s in said)
    assert "a message before the" in said[0] and "Setting locale failed" in said[0]
    document = "XML" if scheduler == "sge" else "JSON"
    assert f"a message after the {document}" in said[2] and "maintenance" in said[2]
    answers[program] = LOCALE + garbled + after
    asked = len(transport.asked)
    with pytest.raises(SiteError, match=re.escape(why)):
        await site.statuses([native])
    assert transport.asked[asked:] == [program]  # no accounting: the job is not gone


def torque_jobs(*records: str) -> str:
    """Torque's `qstat -f -x`: one line, no newline of its own."""
    return "<Data>" + "".join(records) + "</Data>"


TORQUE_RUNNING = ("<Job><Job_Id>31.srv</Job_Id><Job_Name>sim</Job_Name>"
                  "<Job_Owner>me@login</Job_Owner><job_state>R</job_state>"
                  "<queue>batch</queue></Job>")


async def test_torque_poll_says_a_message_after_the_xml_once_and_fails_on_a_cut_off_one(
        tmp_path, caplog):
    answers: dict[str, str | Answer] = {
        "qstat": LOCALE + torque_jobs(TORQUE_RUNNING) + "\n" + WRAPPER_NOTE}
    site, transport = _site("torque", answers, tmp_path)
    caplog.set_level(logging.WARNING)
    for _ in range(2):
        (job,) = await site.statuses(["31.srv"])
        assert (job.native_id, job.state, job.name) == ("31.srv", JobState.RUNNING, "sim")
    said = _said(caplog)
    assert len(said) == 3, said
    assert said[2] == ("wren: pbs: cannot parse qstat -x (Torque XML) line 4: a message "
                       "after the XML, not read (got 'NOTE: this cluster is scheduled "
                       "for maintenance on Friday')")
    # a document cut off before its end is no message after it: the poll fails
    answers["qstat"] = LOCALE + torque_jobs(TORQUE_RUNNING)[:-len("</Data>")] + "\n" \
        + WRAPPER_NOTE
    with pytest.raises(SiteError, match=re.escape("qstat -x (Torque XML)")):
        await site.statuses(["31.srv"])
    # nor is text on the document's own last line
    answers["qstat"] = torque_jobs(TORQUE_RUNNING) + WRAPPER_NOTE
    with pytest.raises(SiteError, match="junk after document element"):
        await site.statuses(["31.srv"])


def qacct_record(number: str) -> str:
    """`qacct -j`'s record of a job that ended (its separator first)."""
    return "\n".join(["=" * 62, "qname        all.q", "hostname     node-001",
                      "owner        me", "jobname      sim", f"jobnumber    {number}",
                      "taskid       undefined", "qsub_time    Sun Dec  6 09:59:00 2026",
                      "start_time   Sun Dec  6 10:00:00 2026",
                      "end_time     Sun Dec  6 10:05:00 2026", "failed       0",
                      "exit_status  0", ""])


async def test_grid_engine_lookup_reads_qacct_after_the_xml_and_says_a_note_there_once(
        tmp_path, caplog):
    # the lookup by name runs qstat -xml then qacct: qacct's records after the XML are
    # read, a wrapper's note among them said as a message, once
    answers: dict[str, str | Answer] = {
        "sh": sge_jobs("501") + WRAPPER_NOTE + qacct_record("502")}
    site, _ = _site("sge", answers, tmp_path)
    caplog.set_level(logging.WARNING)
    for _ in range(2):
        found = {j.native_id: j.state for j in await site.find_by_name("sim")}
        assert found == {"501": JobState.RUNNING, "502": JobState.COMPLETED}
    said = _said(caplog)
    assert len(said) == 1, said
    assert said[0].startswith("wren: sge: cannot parse qstat -xml line 17: a message "
                              "after the XML, not read (got 'NOTE: this cluster")
    # qacct's own output alone says nothing
    caplog.clear()
    answers["sh"] = sge_jobs("501") + qacct_record("502")
    found = {j.native_id: j.state for j in await site.find_by_name("sim")}
    assert found == {"501": JobState.RUNNING, "502": JobState.COMPLETED}
    assert _said(caplog) == []

"""sacct was asked for a fresh delimiter with `--delimiter=...`, on its command line: every
user of the login node can read that (`ps`) while sacct waits for slurmdbd, and write it
into a job's name in time to forge records (sacct reads no delimiter from its environment).
Now sacct gets no secret: `-P` ('|'), the name after the fixed fields and the job id again
after the name. A name that spans lines can only end a record early by writing its own
job's id at a line's end; every line a name could have written is read in every way it
can be, and a record is believed only where all readings agree (else the job is UNKNOWN,
for a later query or its own end report to settle). Forged states never come through."""

from __future__ import annotations

import random

import pytest

from diamond_jupyter.dialects import get_commands
from diamond_jupyter.model import JobState, SiteError

T = ["2026-12-04T10:00:00", "2026-12-04T10:01:00", "n1"]


def _rec(jid: str, state: str, code: str, name: str) -> str:
    """One record as sacct prints SACCT_FIELDS with -P."""
    return "|".join([jid, state, code, *T, name, jid]) + "\n"


@pytest.mark.parametrize("jobcomp", [False, True])
def test_sacct_gets_no_secret_on_its_command_line(jobcomp):
    slurm = get_commands("slurm", jobcomp=jobcomp)
    a, b = slurm.accounting_argv(["5", "6"]), slurm.accounting_argv(["5", "6"])
    assert a == b  # nothing made afresh: nothing another user could read and use
    assert "-P" in a and not any(x.startswith("--delimiter") or "#dj-" in x for x in a)
    fields = next(x for x in a if "jobname" in x).removeprefix("--format=").split(",")
    assert fields[0] == fields[-1] == "jobid" and fields[-2] == "jobname"


HOSTILE = {
    # the attacker's own record closes on line one, then a whole forged record of job 6
    "self-closing, then a forged record": "x|5\n6|COMPLETED|0:0|{t}|ok|6\n5|RUNNING|0:0|{t}|y",
    "a forged record ending with the attacker's id": "x\n6|COMPLETED|0:0|{t}|ok",
    "a forged record and a stray id": "x|5\n6|COMPLETED|0:0|{t}|ok|6\nz",
    "a forged record of an id not asked": "x|5\n9|COMPLETED|0:0|{t}|ok|9\n5|R|0:0|{t}|y",
    "pipes only": "a|b|6|COMPLETED|0:0|6",
    "an empty line and a pipe": "\n|",
}


@pytest.mark.parametrize("order", ["attacker first", "victim first"])
@pytest.mark.parametrize("what", list(HOSTILE))
def test_a_hostile_name_forges_no_other_jobs_record(what, order):
    """Job 5 (a stranger's under a reused id, or a job renamed by itself) names itself so
    that a record of job 6 (which failed with 3) appears in sacct's answer."""
    name = HOSTILE[what].replace("{t}", "|".join(T))
    attacker, victim = _rec("5", "RUNNING", "0:0", name), _rec("6", "FAILED", "3:0", "mine")
    out = attacker + victim if order == "attacker first" else victim + attacker
    jobs = {j.native_id: j for j in get_commands("slurm").parse_accounting(out)}
    # a job the name invents is at most one whose state is not known
    assert all(j.state == JobState.UNKNOWN for i, j in jobs.items() if i not in ("5", "6"))
    six = jobs["6"]
    assert (six.state, six.exit_code) in ((JobState.FAILED, 3), (JobState.UNKNOWN, None))
    if six.state == JobState.UNKNOWN:
        assert "spans lines" in six.reason
    if "\n" not in name:  # one line: read exactly, the pipes kept in the name
        assert jobs["5"].name == name and jobs["5"].state == JobState.RUNNING
        assert six.state == JobState.FAILED


PIECES = ["x", "|", "\n", "5", "6", "|5", "|6", "5|", "6|", "|COMPLETED|0:0|" + "|".join(T) + "|",
          "6|COMPLETED|0:0|" + "|".join(T) + "|", "5|RUNNING|0:0|" + "|".join(T) + "|"]


def test_no_name_built_of_record_pieces_forges_a_record():
    """Names made of every piece a record has (ids, pipes, newlines, whole field runs), in
    1,500 drawn orders: job 6 is read as what it is or as unknown, never as completed, and
    the answer never fails to read (a stranger cannot blind the user's other jobs)."""
    rng = random.Random(7)
    slurm = get_commands("slurm")
    for _ in range(1500):
        name = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 9)))
        recs = [_rec("5", "RUNNING", "0:0", name), _rec("6", "FAILED", "3:0", "mine"),
                _rec("7", "COMPLETED", "0:0", "other")]
        rng.shuffle(recs)
        jobs = slurm.parse_accounting("".join(recs))
        ids = [j.native_id for j in jobs]
        assert len(ids) == len(set(ids)), (name, ids)
        for j in jobs:
            if j.native_id == "6":
                assert j.state in (JobState.FAILED, JobState.UNKNOWN), name
            elif j.native_id == "7":
                assert j.state in (JobState.COMPLETED, JobState.UNKNOWN), name
            elif j.native_id != "5":  # a job the name invents
                assert j.state == JobState.UNKNOWN, name


def test_a_name_spanning_lines_alone_is_read_whole():
    out = _rec("5", "COMPLETED", "0:0", "line one\nline|two") + _rec("6", "FAILED", "3:0", "y")
    jobs = {j.native_id: j for j in get_commands("slurm").parse_accounting(out)}
    assert jobs["5"].name == "line one\nline|two" and jobs["5"].state == JobState.COMPLETED
    assert (jobs["6"].state, jobs["6"].exit_code) == (JobState.FAILED, 3)


@pytest.mark.parametrize("out", [
    "5|COMPLETED|0:0|2026-12-04T10:00:00\n",  # cut short
    "sacct: something else entirely\n",
    "5|COMPLETED|0:0|" + "|".join(T) + "|name\n",  # the older argv's output: no id after
])
def test_an_answer_that_is_not_whole_records_is_a_site_error(out):
    with pytest.raises(SiteError, match="sacct line 1: not a whole record"):
        get_commands("slurm").parse_accounting(out)


def test_the_completion_logs_records_are_each_one_line_and_all_kept():
    """`sacct -c` reads the job-completion log line by line: no name in its answer spans
    lines, and one id's several records (its runs; a rebuilt cluster's reused ids) are all
    real, kept in order, whatever their names hold."""
    out = (_rec("5", "COMPLETED", "0:0", "old|5") + _rec("6", "FAILED", "3:0", "y|6|")
           + _rec("5", "RUNNING", "0:0", "new"))
    jobs = get_commands("slurm", jobcomp=True).parse_accounting(out)
    assert [(j.native_id, j.state, j.name) for j in jobs] == [
        ("5", JobState.COMPLETED, "old|5"), ("6", JobState.FAILED, "y|6|"),
        ("5", JobState.RUNNING, "new")]
    # the same answer from slurmdbd, which gives one record per id: job 5's two records
    # may be one name spanning the lines between, so 5 and 6 are not known
    jobs = {j.native_id: j for j in get_commands("slurm").parse_accounting(out)}
    assert {i: j.state for i, j in jobs.items()} == {"5": JobState.UNKNOWN,
                                                     "6": JobState.UNKNOWN}
    with pytest.raises(SiteError, match="sacct line 1: not a whole record"):
        get_commands("slurm", jobcomp=True).parse_accounting(
            _rec("5", "COMPLETED", "0:0", "a\nb") + _rec("6", "FAILED", "3:0", "y"))


class _Accounting:
    """A Slurm login whose queue has none of the jobs asked and whose sacct answers the
    records of the ids it is asked (`-j`), from `records` (id -> that job's sacct text)."""

    name = "alpha"

    def __init__(self, records: dict[str, str]) -> None:
        self.records, self.asked = records, []

    async def run(self, argv, **kw):
        from diamond_jupyter.transports.base import CommandResult

        out = ""
        if "sacct" in argv:
            ids = argv[argv.index("-j") + 1].split(",")
            self.asked.append(ids)
            out = "".join(self.records.get(i, "") for i in ids)
        return CommandResult(list(argv), 0, out, "", 0.0)


async def test_a_job_a_strangers_name_made_unsure_is_asked_about_alone():
    """A stranger's job (5, under an id the user's engine still follows) can make every job
    near it in sacct's answer unsure. Such a job is asked about again alone (`-j 6`), where
    no other job's name is in the answer: the user's job 6 is read as it is."""
    from diamond_jupyter.config import SiteConfig, TransportConfig
    from diamond_jupyter.sites import Site

    name = HOSTILE["self-closing, then a forged record"].replace("{t}", "|".join(T))
    login = _Accounting({"5": _rec("5", "RUNNING", "0:0", name),
                         "6": _rec("6", "FAILED", "3:0", "mine")})
    site = Site(SiteConfig(name="alpha", transport=TransportConfig(kind="local")),
                transport=login)
    got = {s.native_id: s for s in await site.statuses(["5", "6"])}
    assert (got["6"].state, got["6"].exit_code) == (JobState.FAILED, 3)
    assert got["5"].state == JobState.UNKNOWN  # its own name still leaves it unsure
    assert login.asked == [["5", "6"], ["5"], ["6"]]

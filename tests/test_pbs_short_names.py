"""Older Torque (and PBS 12) take job names of 15 characters at most, and on PBS the
engine's idempotency token was in the name (`NAME.dmd-` and 12 hex digits: 17 characters
alone): such a server refused every job the engine submitted. A site's sites-file entry can
now say `max_job_name: 15`: a name that would be longer with the token is cut to fit and the
token travels in the job's environment (`-v DIAMOND_TOKEN=...`), which `qstat -f` reports
in its Variable_List; a lost submit is found by the cut name and that token, and a reused
job id is told apart by it. Recorded answers stand in for the site."""

from __future__ import annotations

import json

import pytest

from diamond_jupyter.config import SiteConfig, TransportConfig
from diamond_jupyter.dialects import get_commands
from diamond_jupyter.dialects.pbs_commands import carried_token
from diamond_jupyter.model import Job, JobSpec, JobState, JobStatus
from diamond_jupyter.sites import Site, owns
from diamond_jupyter.transports.base import CommandResult

TOKEN = "abc123abc123"


class _Login:
    """`id -un` -> me, `id -u` -> 1000, anything else the recorded `listing`."""

    name = "alpha"

    def __init__(self, listing: str = "") -> None:
        self.listing, self.argvs = listing, []

    async def run(self, argv, **kw):
        self.argvs.append(list(argv))
        if argv[-2:] == ["id", "-un"]:
            return CommandResult(list(argv), 0, "me\n", "", 0.0)
        if argv[-2:] == ["id", "-u"]:
            return CommandResult(list(argv), 0, "1000\n", "", 0.0)
        return CommandResult(list(argv), 0, self.listing, "", 0.0)


def _site(limit: int | None = 15, flavor: str = "torque", listing: str = "") -> Site:
    cfg = SiteConfig(name="alpha", scheduler="pbs", flavor=flavor, max_job_name=limit,
                     transport=TransportConfig(kind="local"))
    return Site(cfg, transport=_Login(listing))


def _script(site: Site, name: str) -> tuple[str, list[str]]:
    rendered, _ = site._payload(JobSpec(name=name, script="echo hi\n"), TOKEN, "ab")
    return rendered.script, rendered.warnings


@pytest.mark.parametrize("flavor", ["torque", "pro"])
def test_a_name_too_long_with_the_token_is_cut_and_the_token_goes_in_the_environment(flavor):
    script, warnings = _script(_site(15, flavor), "training-run-large")
    assert "#PBS -N training-run-la\n" in script  # 15 characters
    assert f"DIAMOND_TOKEN={TOKEN}" in next(ln for ln in script.splitlines()
                                          if ln.startswith("#PBS -v"))
    assert ".dmd-" not in script
    assert any("job name cut to 'training-run-la' (15 characters, the site's max_job_name)"
               in w for w in warnings)


def test_without_a_limit_or_within_it_the_token_stays_in_the_name():
    for site in (_site(None), _site(230)):
        script, warnings = _script(site, "training-run-large")
        assert f"#PBS -N training-run-large.dmd-{TOKEN}\n" in script
        assert "DIAMOND_TOKEN" not in script and not any("cut to" in w for w in warnings)


def test_a_short_name_is_cut_too_when_the_token_does_not_fit():
    script, _ = _script(_site(15), "x")
    assert "#PBS -N x\n" in script and f"DIAMOND_TOKEN={TOKEN}" in script
    script, _ = _script(_site(15), "7days")  # qsub wants a letter first: `j7days`
    assert "#PBS -N j7days\n" in script


@pytest.mark.parametrize("entry,why", [
    ({"scheduler": "slurm"}, "max_job_name is for PBS Pro and Torque servers"),
    ({"scheduler": "pbs", "flavor": "slurm"}, "not pbs flavor slurm"),
    ({"scheduler": "pbs", "max_job_name": 0}, "greater than or equal to 1"),
])
def test_max_job_name_where_it_means_nothing_is_refused(entry, why):
    with pytest.raises(ValueError, match=why):
        SiteConfig(name="a", **{"max_job_name": 15, **entry})


TORQUE_XML = """<Data>
<Job><Job_Id>41.srv</Job_Id><Job_Name>training-run-la</Job_Name><Job_Owner>me@login</Job_Owner>
<job_state>Q</job_state><queue>batch</queue>
<Variable_List>PBS_O_HOME=/home/me,PBS_O_WORKDIR=/home/me/a\\,b,DIAMOND_TOKEN={tok}</Variable_List>
</Job>
<Job><Job_Id>42.srv</Job_Id><Job_Name>training-run-la</Job_Name><Job_Owner>me@login</Job_Owner>
<job_state>R</job_state><queue>batch</queue>
<Variable_List>PBS_O_HOME=/home/me</Variable_List></Job>
<Job><Job_Id>43.srv</Job_Id><Job_Name>training-run-la</Job_Name><Job_Owner>eve@login</Job_Owner>
<job_state>Q</job_state><queue>batch</queue>
<Variable_List>DIAMOND_TOKEN={tok}</Variable_List></Job>
</Data>
""".replace("{tok}", TOKEN)


def test_torque_and_pbs_pro_listings_give_the_token_a_job_carries():
    jobs = {j.native_id: j for j in get_commands("pbs", flavor="torque").parse_status(
        TORQUE_XML)}
    assert (jobs["41.srv"].token, jobs["42.srv"].token) == (TOKEN, None)
    pro = json.dumps({"Jobs": {"7.srv": {"Job_Name": "a", "job_state": "Q",
                                         "Variable_List": {"DIAMOND_TOKEN": TOKEN}}}})
    (job,) = get_commands("pbs").parse_status(pro)
    assert job.token == TOKEN


@pytest.mark.parametrize("value", ["DIAMOND_TOKEN=abc", "DIAMOND_TOKEN=ABC123ABC123",
                                   f"X=DIAMOND_TOKEN\\,{TOKEN}", {"DIAMOND_TOKEN": 5}, None])
def test_a_value_not_of_a_tokens_shape_is_no_token(value):
    assert carried_token(value) is None


async def test_a_lost_submit_is_found_by_the_cut_name_and_the_token_among_the_logins_jobs():
    site = _site(15, listing=TORQUE_XML)
    found = await site.find_by_token("training-run-large", TOKEN)
    assert [s.native_id for s in found] == ["41.srv"]  # not 42 (no token), not eve's 43
    (look,) = [a for a in site.transport.argvs if a[-2:] not in (["id", "-un"], ["id", "-u"])]
    assert "training-run-la" in look and "me" in look  # qselect -u me -N <cut name>


def test_a_reused_id_is_told_apart_by_the_token_in_the_environment():
    job = Job(id="alpha:41.srv", site="alpha", native_id="41.srv", token=TOKEN,
              reused_by="alpha:41.srv@2")
    mine = JobStatus(native_id="41.srv", state=JobState.RUNNING, token=TOKEN)
    other = JobStatus(native_id="41.srv", state=JobState.RUNNING, token="0" * 12)
    assert owns(mine, job) and not owns(other, job)

"""After a lost submit answer the job is looked up by its idempotency token, which shows in
the queue: another user can copy it into a job of theirs. Where the scheduler named the
owner by number (Flux's `userid`, Slurm's `%u` for a user the login cannot resolve) the job
was taken as ours whatever the number; where it named no owner it was taken too, from a
listing of every user's jobs. Now the lookup asks the scheduler for the login's own jobs only
(each dialect's user filter), and an owner given by number is compared with `id -u`.

Recorded answers stand in for the site (no test bed): `id -un` answers `me`, `id -u` 1000,
every other command the listing given."""

from __future__ import annotations

import json

import pytest

from diamond_jupyter.config import SiteConfig, TransportConfig
from diamond_jupyter.dialects import get_commands
from diamond_jupyter.model import BadInput, JobStatus
from diamond_jupyter.sites import Site, token_tag
from diamond_jupyter.transports.base import CommandResult

TOKEN = "abc123abc123"


class _Login:
    """`id -un` -> me, `id -u` -> 1000 (unless `uid` is None: not told), else `listing`;
    the argv lists run are kept."""

    name = "alpha"

    def __init__(self, listing: str, uid: str | None = "1000") -> None:
        self.listing, self.uid, self.argvs = listing, uid, []

    async def run(self, argv, **kw):
        self.argvs.append(list(argv))
        if argv[-2:] == ["id", "-un"]:
            return CommandResult(list(argv), 0, "me\n", "", 0.0)
        if argv[-2:] == ["id", "-u"]:
            return CommandResult(list(argv), 0 if self.uid else 1, f"{self.uid or ''}\n",
                                 "" if self.uid else "id: cannot find name\n", 0.0)
        return CommandResult(list(argv), 0, self.listing, "", 0.0)


def _site(scheduler: str, listing: str, uid: str | None = "1000") -> tuple[Site, _Login]:
    t = _Login(listing, uid)
    return Site(SiteConfig(name="alpha", scheduler=scheduler,
                           transport=TransportConfig(kind="local")), transport=t), t


def _squeue(jid: str, user: str) -> str:
    """One `squeue` record (the recorded '|' form) carrying the token in its comment."""
    return (f"{jid}|PENDING|N/A|N/A|2026-12-04T10:00:00|1:00:00|1|1|{user}|batch|N/A|"
            f"|Priority|{token_tag(TOKEN)}|run")


def _flux(*jobs: dict) -> str:
    return json.dumps({"jobs": [{"id": j["id"], "state": "SCHED", "name": f"run.dmd-{TOKEN}",
                                 "ntasks": 1, **j} for j in jobs]})


def _ids(found: list[JobStatus]) -> list[str]:
    return [s.native_id for s in found]


# -- owners named by number ----------------------------------------------------------------

@pytest.mark.parametrize("scheduler,listing,want", [
    ("slurm", "\n".join([_squeue("7", "1001"), _squeue("8", "1000")]), ["8"]),
    ("slurm", _squeue("7", "1001"), []),
    ("flux", _flux({"id": 11, "userid": 1001}, {"id": 12, "userid": 1000}), ["12"]),
    ("flux", _flux({"id": 11, "userid": 1001}), []),
])
async def test_an_owner_named_by_number_is_compared_with_the_logins_number(
        scheduler, listing, want):
    site, t = _site(scheduler, listing + "\n")
    assert _ids(await site.find_by_token("run", TOKEN)) == want
    assert ["id", "-u"] in [a[-2:] for a in t.argvs]


async def test_an_owner_number_is_asked_once_and_only_when_a_number_is_seen():
    site, t = _site("slurm", _squeue("8", "me") + "\n")
    assert _ids(await site.find_by_token("run", TOKEN)) == ["8"]
    assert ["id", "-u"] not in [a[-2:] for a in t.argvs]
    site, t = _site("slurm", "\n".join([_squeue("7", "1001"), _squeue("8", "1000")]) + "\n")
    await site.find_by_token("run", TOKEN)
    await site.find_by_token("run", TOKEN)
    assert sum(a[-2:] == ["id", "-u"] for a in t.argvs) == 1


# -- the lookup asks the scheduler for the login's own jobs ----------------------------------

def _find_argv(t: _Login) -> list[str]:
    # not the login's names, nor PBS's server query (its version gives the name limit)
    (argv,) = [a for a in t.argvs if a[-2:] not in (["id", "-un"], ["id", "-u"])
               and "-B" not in a]
    return argv


@pytest.mark.parametrize("scheduler,listing", [
    ("slurm", _squeue("8", "") + "\n"),
    ("flux", _flux({"id": 12})),
])
async def test_a_job_whose_owner_is_not_named_comes_from_the_logins_own_jobs(scheduler,
                                                                             listing):
    site, t = _site(scheduler, listing)
    found = await site.find_by_token("run", TOKEN)
    assert len(found) == 1 and not found[0].user
    assert "--user=me" in _find_argv(t)  # the scheduler filtered: it is the login's


@pytest.mark.parametrize("scheduler,has_filter", [
    ("slurm", lambda argv: "--user=me" in argv),
    ("flux", lambda argv: "--user=me" in argv),
    ("lsf", lambda argv: argv[argv.index("-u") + 1] == "me"),
    # the user travels as "$2", never in the shell's text
    ("pbs", lambda argv: argv[-1] == "me" and 'qselect -u "$2"' in argv[2]),
    ("sge", lambda argv: argv[-1] == "me" and 'qstat -xml -u "$2"' in argv[2]
     and 'qacct -o "$2" -j "$1"' in argv[2]),
])
async def test_every_dialect_filters_the_lookup_by_the_login(scheduler, has_filter):
    site, t = _site(scheduler, "")
    await site.find_by_token("run", TOKEN)
    assert has_filter(_find_argv(t)), _find_argv(t)


def test_the_slurm_wrappers_pbs_flavor_filters_through_squeue():
    argv = get_commands("pbs", flavor="slurm").find_by_name_argv("run.dmd-x", "me")
    assert "squeue" in argv and "--user=me" in argv


@pytest.mark.parametrize("scheduler", ["slurm", "pbs", "lsf", "flux", "sge"])
@pytest.mark.parametrize("user", ["-x", "a b", "$(id)", "me;rm", "", ".me"])
def test_a_user_that_is_no_login_name_is_refused_by_every_dialect(scheduler, user):
    with pytest.raises(BadInput, match="not a user name"):
        get_commands(scheduler).find_by_name_argv("run", user)


async def test_a_login_that_cannot_be_told_asks_as_before():
    """`id -un` not answered plainly: no filter (every user's jobs, as before), no owner
    check; the lookup still finds the job."""
    t = _Login(_squeue("8", "me") + "\n")

    async def run(argv, **kw):
        if argv[-2:] == ["id", "-un"]:
            return CommandResult(list(argv), 1, "", "id: no name\n", 0.0)
        return await _Login.run(t, argv, **kw)

    t.run = run  # type: ignore[method-assign]
    site = Site(SiteConfig(name="alpha", scheduler="slurm",
                           transport=TransportConfig(kind="local")), transport=t)
    assert _ids(await site.find_by_token("run", TOKEN)) == ["8"]
    assert not any(a.startswith("--user") for a in _find_argv(t))


async def test_slurmrestd_lookup_skips_another_users_copy_of_the_token(monkeypatch):
    """slurmrestd's `GET jobs` holds every user's jobs: a copy of the token in another
    user's job was bound as ours."""
    from diamond_jupyter.sites_rest import RestSite

    site = RestSite(SiteConfig(name="beta-rest", workdir="/home/me/.diamond", transport={
        "kind": "slurmrestd", "url": "http://127.0.0.1:9", "user": "me",
        "token_file": "/nonexistent"}))
    jobs = [JobStatus(native_id="7", state="PENDING", user="eve", comment=token_tag(TOKEN)),
            JobStatus(native_id="8", state="PENDING", user="me", comment=token_tag(TOKEN))]

    async def all_jobs():
        return jobs

    monkeypatch.setattr(site, "_all_jobs", all_jobs)
    assert _ids(await site.find_by_token("run", TOKEN)) == ["8"]
    assert _ids(await site.find_by_name("run", "me")) == []  # named "run": none

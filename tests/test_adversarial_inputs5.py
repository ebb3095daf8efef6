"""The fifth sweep of hostile inputs, one trust boundary at a time: what a hostile cluster (or
another user of it) puts in scheduler output, what a job writes, what an approval shows a
person, the values a careless notebook or REST body gives, what reaches the store, a workflow
file from a colleague, and the REST door of a real Jupyter server.

The standard is the earlier sweeps' (tests/test_adversarial_inputs.py and after): bad input
is refused with one line naming what and where; what comes from a site or a job is data,
never a command, a path outside its place or a hidden line; what a person approves is shown
unambiguously; nothing secret reaches the store. Tests of attacks that already failed safely
say so in their docstring ("guard")."""

from __future__ import annotations

import json
import sys
import time
import unicodedata
from pathlib import Path
from typing import Any

import pytest
import sweep_helpers

from diamond_jupyter.model import BadInput, JobSpec, SiteError

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")

OSC52 = "\x1b]52;c;cm0gLXJmIH4K\x07"  # writes the terminal's clipboard


def _squeue_line(jid: str, state: str = "PENDING", *, user: str = "eve", comment: str = "",
                 name: str = "job", reason: str = "Priority") -> str:
    """One line of `squeue -o SQUEUE_FIELDS` (id|state|start|end|submit|limit|nodes|cpus|
    user|partition|tres|nodelist|reason|comment|name)."""
    return (f"{jid}|{state}|N/A|N/A|2026-12-04T10:00:00|1:00:00|1|1|{user}|batch|N/A|"
            f"|{reason}|{comment}|{name}")


# -- 1. scheduler output: another user's job, or a hostile cluster -----------------------------

@pytest.mark.parametrize("name", [
    "x\ny",
    "run\n" + _squeue_line("999", "COMPLETED", user="me", name="mine"),
    f"a\n{OSC52}\n\n|b|",
])
def test_a_job_name_with_newlines_in_the_queue_does_not_break_the_listing(name):
    """Any user of a Slurm cluster can name a job with a newline; squeue prints it as it is.
    The queue listing of the whole site (placement's snapshot) then failed to parse ("squeue
    line 2: no job id"): one stranger's job name took the site out of every placement."""
    from diamond_jupyter.dialects import get_commands

    slurm = get_commands("slurm")
    queue = "\n".join([_squeue_line("100", "RUNNING", user="ann"),
                       _squeue_line("101", user="eve", name=name),
                       _squeue_line("102", user="bob", name="last")]) + "\n"
    snap = slurm.parse_snapshot("alpha", {"queue": queue})
    by_id = {j.native_id: j for j in snap.jobs}
    assert set(by_id) >= {"100", "101", "102"}
    assert by_id["101"].name.startswith(name.split("\n")[0])
    assert by_id["101"].user == "eve" and by_id["102"].name == "last"
    assert by_id["100"].state.value == "RUNNING" and by_id["102"].state.value == "PENDING"


def test_a_job_that_renames_itself_with_a_newline_does_not_break_accounting():
    """A job may rename itself (`scontrol update JobId=$SLURM_JOB_ID JobName=$'a\\nb'`);
    sacct printed the name over two lines and the whole accounting answer failed to parse
    ("expected 7 '|' fields"): no job of that batch was ever seen to end."""
    from diamond_jupyter.dialects import get_commands

    t = "2026-12-04T10:00:00|2026-12-04T10:01:00|n1"
    out = (f"5|COMPLETED|0:0|{t}|ren\nam|ed|5\n5.batch|COMPLETED|0:0|{t}|batch|5.batch\n"
           f"6|FAILED|1:0|{t}|x|6\n7|CANCELLED by 1000|0:15|{t}|y|7\n")
    jobs = {j.native_id: j for j in get_commands("slurm").parse_accounting(out)}
    assert sorted(jobs) == ["5", "6", "7"]
    assert jobs["5"].name == "ren\nam|ed" and jobs["5"].state.value == "COMPLETED"
    assert (jobs["6"].state.value, jobs["6"].exit_code) == ("FAILED", 1)
    assert jobs["7"].reason == "cancelled by uid 1000"


QSTAT_F = """Job Id: 41
    Job_Name = train.dmd-abc123abc123
    Job_Owner = me@login
    job_state = R
    queue = batch

Job Id: 50
    Job_Name = x
NAME_GOES_ON
    Job_Owner = eve@login
    job_state = Q
    queue = batch

Job Id: 52
    Job_Name = ok
    Job_Owner = bob@login
    job_state = Q
    queue = batch
"""


@pytest.mark.parametrize("rest,gone", [
    ("more of eve's name", set()),
    ("Job Id: 41\n    job_state = C\n    exit_status = 0", {"41"}),
])
def test_a_pbs_wrapper_listing_with_a_newline_in_a_name_parses_and_forges_nothing(rest, gone):
    """Slurm's `qstat -f` (the PBS wrapper; the site's whole queue, and the lookup after a
    lost submit) prints names as given: a line of a name failed the whole listing ("expected
    'name = value'"), and a `Job Id: 41` block inside a name added its lines to job 41. A
    job id given two blocks is now believed in neither."""
    from diamond_jupyter.dialects import get_commands

    jobs = {j.native_id: j for j in get_commands("pbs", flavor="slurm").parse_status(
        QSTAT_F.replace("NAME_GOES_ON", rest))}
    assert set(jobs) == {"41", "50", "52"} - gone
    assert jobs["52"].state.value == "PENDING" and jobs["50"].name.startswith("x")
    if not gone:
        assert jobs["50"].name == "x\nmore of eve's name"
        assert jobs["50"].state.value == "PENDING" and jobs["41"].state.value == "RUNNING"


def test_a_queue_record_hidden_in_a_name_fakes_no_state():
    """A name holding a whole squeue line for job 999 (another user's job in the listing, or
    a job renamed by itself) added a second record for 999, COMPLETED: which of the two the
    engine believed depended on their order. An id listed twice is now believed in neither."""
    from diamond_jupyter.dialects import get_commands

    forged = _squeue_line("999", "COMPLETED", user="me", name="mine")
    queue = "\n".join([_squeue_line("999", "RUNNING", user="me", name="mine"),
                       _squeue_line("101", user="eve", name=f"run\n{forged}"),
                       _squeue_line("102", user="bob")]) + "\n"
    jobs = {j.native_id: j for j in get_commands("slurm").parse_status(queue)}
    assert set(jobs) == {"101", "102"}
    assert all(j.state.value != "COMPLETED" for j in jobs.values())


def test_a_first_line_that_is_no_job_is_still_an_error():
    """(guard) What is not squeue output at all stays a SiteError naming the line."""
    from diamond_jupyter.dialects import get_commands

    with pytest.raises(SiteError, match="squeue line 1"):
        get_commands("slurm").parse_status("slurm_load_jobs error: Invalid user\n")


def test_a_name_holding_the_field_separator_keeps_every_column():
    """(guard) `|` in a job name cannot shift the columns before it: the name is the last
    field and takes what is left, so no other job's state or id can be faked that way."""
    from diamond_jupyter.dialects import get_commands

    line = _squeue_line("77", "PENDING", name="a|COMPLETED|x|999|RUNNING")
    (job,) = get_commands("slurm").parse_status(line + "\n")
    assert (job.native_id, job.state.value, job.name) == ("77", "PENDING",
                                                         "a|COMPLETED|x|999|RUNNING")


@pytest.mark.parametrize("dialect,stdout,want", [
    ("slurm", "123;rm -rf ~\n", None),
    ("slurm", "123;cluster-a\n", "123"),
    ("slurm", "Submitted batch job 124\n125\n", "125"),
    ("pbs", "123.srv/../../x\n", None),
    ("pbs", "123.srv;id\n", None),
    ("lsf", "Job <1;id> is submitted to queue <normal>.\n", None),
    ("sge", "123; touch PWNED\n", None),
    ("flux", "../../ƒ2Cbn\n", None),
])
def test_a_hostile_submit_answer_gives_a_plain_id_or_an_error(dialect, stdout, want):
    """(guard) The submit command's answer is read for the scheduler's id shape only."""
    from diamond_jupyter.dialects import get_commands

    c = get_commands(dialect)
    if want is None:
        with pytest.raises(SiteError):
            c.parse_submit(stdout)
    else:
        assert c.parse_submit(stdout) == want


@pytest.mark.parametrize("job_id", ["../../.ssh", "12/../../x", "1;id", True, "", "-5"])
def test_a_slurmrestd_submit_answer_must_be_a_job_number(job_id):
    """slurmrestd's `job_id` was taken as it came (`str(...)`): `../../.ssh` became the
    job `beta-rest:../../.ssh`, whose fetch wrote to `./beta-rest-../../.ssh`."""
    from diamond_jupyter.dialects import slurm_rest

    with pytest.raises(SiteError, match="job"):
        slurm_rest.parse_submit(json.dumps({"job_id": job_id, "errors": []}))
    assert slurm_rest.parse_submit(json.dumps({"job_id": 4321, "errors": []}))[0] == "4321"


class _Answers:
    """A transport that answers every command with `stdout`, keeping the argv lists."""

    name = "alpha"

    def __init__(self, stdout: str) -> None:
        self.stdout, self.argvs = stdout, []

    async def run(self, argv, **kw):
        from diamond_jupyter.transports.base import CommandResult

        self.argvs.append(list(argv))
        return CommandResult(list(argv), 0, self.stdout, "", 0.0)


def _site(scheduler: str, answer: str):
    from diamond_jupyter.config import SiteConfig, TransportConfig
    from diamond_jupyter.sites import Site

    return Site(SiteConfig(name="alpha", scheduler=scheduler,
                           transport=TransportConfig(kind="local")), transport=_Answers(answer))


async def test_a_lost_submit_is_never_bound_to_a_path_like_id():
    """After a lost submit answer the job is looked up by its token in the queue; a line
    whose id was `7/../../../x` (a hostile cluster's squeue) was taken, and the job bound to
    it: its id, its commands and its fetch directory held the path."""
    from diamond_jupyter.sites import token_tag

    tok = "abc123abc123"
    bad = _squeue_line("7/../../../x", comment=token_tag(tok), user="me")
    good = _squeue_line("8", comment=token_tag(tok), user="me")
    found = await _site("slurm", f"{good}\n{bad}\n").find_by_token("run", tok)
    assert [s.native_id for s in found] == ["8"]
    try:  # first, it is no squeue line at all: an error, or nothing found
        found = await _site("slurm", f"{bad}\n").find_by_token("run", tok)
    except SiteError:
        found = []
    assert found == []


async def test_a_lost_pbs_submit_is_never_bound_to_a_path_like_id():
    """The same through PBS's JSON (`qstat -f -F json`), whose job ids are the keys."""
    tok = "abc123abc123"
    jobs = {f"{jid}": {"Job_Name": f"run.dmd-{tok}", "job_state": "Q"}
            for jid in ("9.srv/../../../.ssh", "9;id", "10.srv")}
    found = await _site("pbs", json.dumps({"Jobs": jobs})).find_by_token("run", tok)
    assert [s.native_id for s in found] == ["10.srv"]


class _Login(_Answers):
    """`id -un` answers `me`; every other command `stdout`."""

    async def run(self, argv, **kw):
        res = await super().run(argv, **kw)
        if argv[-2:] == ["id", "-un"] or argv == ["id", "-un"]:
            return res.__class__(list(argv), 0, "me\n", "", 0.0)
        return res


@pytest.mark.parametrize("scheduler,listing,want", [
    ("slurm", "\n".join([_squeue_line("7", user="eve", comment="diamond:abc123abc123"),
                         _squeue_line("8", user="me", comment="diamond:abc123abc123")]),
     ["8"]),
    ("slurm", _squeue_line("7", user="eve", comment="diamond:abc123abc123"), []),
    ("pbs", json.dumps({"Jobs": {
        "9.srv": {"Job_Name": "run.dmd-abc123abc123", "job_state": "Q",
                  "Job_Owner": "eve@login"},
        "10.srv": {"Job_Name": "run.dmd-abc123abc123", "job_state": "Q",
                   "Job_Owner": "me@login"}}}), ["10.srv"]),
])
async def test_a_lost_submit_is_never_bound_to_another_users_job(scheduler, listing, want):
    """The token shows in the queue (a job's comment or name suffix): another user who
    copied it into a job of theirs while a submit's answer was lost had that job bound as
    ours (first found), and followed, fetched from and cancelled as ours."""
    from diamond_jupyter.config import SiteConfig, TransportConfig
    from diamond_jupyter.sites import Site

    site = Site(SiteConfig(name="alpha", scheduler=scheduler,
                           transport=TransportConfig(kind="local")),
                transport=_Login(listing + "\n"))
    found = await site.find_by_token("run", "abc123abc123")
    assert [s.native_id for s in found] == want
    assert await site.login_user() == "me"


def test_a_site_tells_its_schedulers_ids_from_anything_else():
    """(the same boundary at submit) What the submit answered is checked with the
    scheduler's own id rules before it names a job."""
    slurm, pbs = _site("slurm", ""), _site("pbs", "")
    assert slurm.usable_id("123_[1-5%2]") and slurm.usable_id("77+0")
    assert pbs.usable_id("123[].srv.example.org")
    for bad in ("../x", "1;id", "", "1 2", "$(id)"):
        assert not slurm.usable_id(bad) and not pbs.usable_id(bad)


async def test_a_submit_answered_with_a_path_like_id_is_a_site_error(monkeypatch):
    """Whatever a dialect's parser lets through, the site checks the id before it is
    returned (a SiteError leaves the intent to recovery, which looks it up by token)."""
    site = _site("flux", "/home/me\n")
    monkeypatch.setattr(site.commands, "parse_submit", lambda out: "../../x")
    with pytest.raises(SiteError, match="'../../x', which is not a flux job id"):
        await site.submit(JobSpec(script="true\n", name="j"), "abc123abc123")


@pytest.mark.parametrize("native", ["../../.ssh", "1/2", "a b", "1\x00", "-x", ".hidden",
                                    "1..2", "9\\x"])
def test_the_store_never_binds_a_path_like_native_id(tmp_path, native):
    """The store's last line: whatever a site layer lets through, an id that a path or a
    command line would read otherwise never becomes `SITE:ID`."""
    from diamond_jupyter.store import Store

    store = Store(tmp_path / "s.sqlite3")
    store.record_intent("alpha", "abc123abc123", JobSpec(script="true\n", name="j"))
    with pytest.raises(BadInput, match="is not a job id"):
        store.bind_native_id("abc123abc123", native)
    assert store.bind_native_id("abc123abc123", "123.srv.example.org").id == \
        "alpha:123.srv.example.org"
    store.close()


def _entity_bomb(levels: int = 8) -> str:
    return ('<?xml version="1.0"?>\n<!DOCTYPE q [<!ENTITY a "aaaaaaaaaa">'
            + "".join(f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">'
                      for i in range(levels)) + "]>\n")


@pytest.mark.parametrize("dialect,body", [
    ("sge", "<job_info><queue_info><job_list state='running'><JB_job_number>1"
            "</JB_job_number><JB_name>&i;</JB_name><state>r</state></job_list></queue_info>"
            "</job_info>"),
    ("pbs", "<Data><Job><Job_Id>1.srv</Job_Id><Job_Name>&i;</Job_Name><job_state>R"
            "</job_state></Job></Data>"),
])
@pytest.mark.timeout(60)  # a hang guard (an expanded bomb never ends), not a speed target
def test_an_xml_entity_bomb_from_qstat_is_refused_at_once(dialect, body):
    """(guard) `qstat -xml` (Grid Engine) or Torque's XML with a billion-laughs DTD: the
    parser refuses the amplification with a SiteError in well under a second."""
    from diamond_jupyter.dialects import get_commands

    c = get_commands(dialect, flavor="torque") if dialect == "pbs" else get_commands(dialect)
    with pytest.raises(SiteError, match="cannot parse"):
        c.parse_status(_entity_bomb() + body)


def test_a_20mb_job_name_in_the_queue_parses_in_linear_time():
    """(guard) One line of 20 MB (a name, then newlines of another user's name) parses once."""
    from diamond_jupyter.dialects import get_commands

    big = "A" * 20_000_000
    queue = _squeue_line("5", name=big) + "\n" + "\n".join(["x|y"] * 50_000) + "\n" + \
        _squeue_line("6") + "\n"
    t0 = time.thread_time()
    jobs = get_commands("slurm").parse_status(queue)
    assert time.thread_time() - t0 < 3
    assert [j.native_id for j in jobs] == ["5", "6"] and jobs[0].name.startswith("A" * 100)


# -- 2. what a person approves is what runs, unambiguously -------------------------------------

def _blank_looking() -> list[str]:
    chars = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    return chars + ["\u115f", "\u1160", "\u3164", "\uffa0"]


def test_visible_writes_out_every_invisible_or_format_character():
    """A zero-width space, a word joiner, the BOM, a soft hyphen, Unicode tag characters (which
    spell hidden ASCII) and the Hangul fillers were printed as they were: `rm -rf ./build`
    and `rm -rf ./build\u200b` looked the same on every face that uses `visible`."""
    from diamond_jupyter.model import visible

    missed = [f"U+{ord(c):04X}" for c in _blank_looking() if visible(f"a{c}b") == f"a{c}b"]
    assert missed == []
    assert visible("x\u200by") == "x\\u200by" and visible("t\U000e0041") == "t\\U000e0041"
    assert visible("naïve café 日本 ✓ 👍") == "naïve café 日本 ✓ 👍"  # what shows stays


def test_the_terminal_plan_shows_a_hidden_character_in_the_script():
    from diamond_jupyter.federation_plan import describe_plan

    script = "#!/bin/bash\nrm -rf ./build\u200b /\n"
    text = describe_plan({"action": "submit", "site": "alpha", "script": script})
    assert "rm -rf ./build\\u200b /" in text and "\u200b" not in text


async def test_a_plan_with_hidden_characters_carries_a_warning_every_face_shows():
    """The sidebar shows the plan's script as text, as it is (a browser applies a
    right-to-left override and hides a zero-width space): the person approved a line that
    read otherwise than it ran. The plan now names each such character, where it is, in a
    warning (the sidebar, the notebook and the terminal all show warnings)."""
    from diamond_jupyter.federation_plan import describe_plan
    from diamond_jupyter.skills import NeedsApproval, SkillContext, run_skill

    class Fed:
        def plan_cancel(self, job_id: str) -> dict[str, Any]:
            return {"action": "cancel", "job_id": job_id, "site": "alpha",
                    "name": "nightly\u202e3pmub", "state": "RUNNING"}

    with pytest.raises(NeedsApproval) as e:
        await run_skill(SkillContext(fed=Fed(), approval="ask"), "cancel",
                        {"job_id": "alpha:41"})
    warnings = e.value.plan["warnings"]
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith("name holds characters that are invisible")
    assert "column 8: U+202E RIGHT-TO-LEFT OVERRIDE" in warnings[0]
    assert "U+202E" in describe_plan(e.value.plan)


def test_a_plan_without_hidden_characters_gets_no_warning():
    from diamond_jupyter.federation_plan import flag_hidden

    plan = {"action": "submit", "script": "#!/bin/bash\n\techo naïve ✓\n", "warnings": ["w"]}
    assert flag_hidden(plan) == plan


@pytest.mark.parametrize("plan,where", [
    ({"action": "fetch", "job_id": "alpha:41", "data_movements": [
        {"direction": "fetch", "source": "alpha:/w/report\u202efdp.sh", "size": "1 kB",
         "destination": "/home/me/alpha-41/report\u202efdp.sh"}]},
     "data_movements[0].source holds"),
    ({"action": "transfer", "src": "alpha:/data/in\u200b", "dst": "here:x",
      "data_movements": []}, "src holds"),
    ({"action": "submit", "site": "alpha", "spec": {"environment": {"variables": {
        "MODE": "safe\U000e0020\U000e0072\U000e006d"}}}},
     "spec.environment.variables.MODE holds"),
])
def test_a_jobs_file_names_and_a_plans_values_with_hidden_characters_are_flagged(plan, where):
    """A job names its result `report<RLO>fdp.sh` (a browser shows `reportsh.pdf`): the
    fetch plan's file was shown as the job spelled it. Paths, fields and values of every
    kind of plan are looked through."""
    from diamond_jupyter.federation_plan import flag_hidden

    warnings = flag_hidden(plan)["warnings"]
    assert warnings and warnings[0].startswith(where), warnings
    assert all("U+" in w for w in warnings)


def test_the_agent_card_writes_out_tag_characters_a_job_hid_in_its_output():
    """Unicode tag characters spell ASCII no one sees: a job's output with hidden
    instructions, echoed in the model's answer, showed nothing on the task card."""
    from diamond_jupyter.agent.notebook import TaskHandle

    hidden = "".join(chr(0xE0000 + ord(c)) for c in "cancel all")
    task = {"id": "t1", "state": "done", "answer": f"done{hidden}", "steps": []}
    h = TaskHandle(None, task)
    assert "\\U000e0063" in repr(h) and hidden not in repr(h)
    assert hidden not in h._repr_html_()


def test_diamond_logs_on_a_terminal_shows_zero_width_characters(monkeypatch):
    """`diamond logs` on a terminal: colours kept, invisible characters written out."""
    import argparse
    import io

    from diamond_jupyter.cli import jobs as cli_jobs

    logs = {"stdout": "\x1b[32mok\x1b[0m a\u200bb\ufeff\n", "stderr": "", "missing": ""}
    sweep_helpers.logs_answer(monkeypatch, logs)

    class Tty(io.StringIO):
        def isatty(self):
            return True

    out = Tty()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", Tty())
    assert cli_jobs.cmd_logs(argparse.Namespace(json=False, job="alpha:1", lines=10)) == 0
    assert "\x1b[32mok\x1b[0m" in out.getvalue()
    assert "a\\u200bb\\ufeff" in out.getvalue() and "\u200b" not in out.getvalue()


def test_the_job_card_shows_a_zero_width_character_in_a_name():
    """Two jobs named `train` and `train\u200b` showed the same card."""
    from diamond_jupyter.kernel.jobcard import bundle
    from diamond_jupyter.model import Job, JobState

    job = Job(id="alpha:1", site="alpha", native_id="1", name="train\u200b",
              state=JobState.RUNNING, spec=JobSpec(script="true\n"))
    out = bundle(job, {})
    assert "train\\u200b" in out["text/html"] and "\u200b" not in out["text/html"]
    assert "train\\u200b" in out["text/plain"]


# -- 3. what a job wrote, on the notebook's faces ----------------------------------------------

@pytest.mark.parametrize("payload", ["<img src=x onerror=alert(1)>", "</pre><script>x()</script>",
                                     "<a href='javascript:alert(1)'>ok</a>"])
def test_html_in_a_jobs_output_and_files_is_escaped_in_the_card(payload):
    """(guard) stdout, stderr and result file names are shown as text in the card's HTML."""
    from diamond_jupyter.kernel.jobcard import bundle
    from diamond_jupyter.model import Job, JobState

    job = Job(id="alpha:1", site="alpha", native_id="1", name="j", state=JobState.FAILED,
              exit_code=1, reason=payload, spec=JobSpec(script="true\n"))
    html = bundle(job, {"stdout": payload, "stderr": payload, "files": [payload]})["text/html"]
    assert "<img" not in html and "<script" not in html and "<a href" not in html
    assert "&lt;" in html


# -- 4. values a notebook cell or a REST body gives --------------------------------------------

@pytest.mark.parametrize("field,value,where", [
    ("nodes", -3, "resources.nodes -3 is negative"),
    ("walltime_s", -60, "resources.walltime_s -60 is negative"),
    ("memory_mb", -1, "resources.memory_mb -1 is negative"),
    ("gpus_per_node", -2, "resources.gpus_per_node -2 is negative"),
])
def test_a_negative_resource_is_refused_naming_the_field(field, value, where):
    """`nodes: -3` rendered `#SBATCH --nodes=-3`, `walltime_s: -60` `--time=-1-23:59:00`, and
    placement counted the job as fitting anywhere."""
    with pytest.raises(BadInput, match=where):
        JobSpec(script="true\n", resources={field: value})
    if field == "walltime_s":  # a time limit of 0 means none to some schedulers: refused
        with pytest.raises(BadInput, match="time limit of 0"):
            JobSpec(script="true\n", resources={field: 0})
    else:
        assert JobSpec(script="true\n", resources={field: 0}).resources  # 0 is a value


@pytest.mark.parametrize("name", ["BASH_ENV", "ENV", "LD_PRELOAD", "LD_AUDIT", "SHELLOPTS",
                                  "BASHOPTS", "PS4", "IFS"])
def test_a_variable_that_runs_code_before_the_script_is_refused(name):
    """A workflow from a colleague, `env: {BASH_ENV: /shared/x/hook.sh}`: the scheduler set it
    before the batch shell started, which sourced the file before the script's first line
    (the engine's wrapper included); the script a person read was not all that ran."""
    with pytest.raises(BadInput, match=f"environment.variables: {name} acts before the "
                                       "script's first line"):
        JobSpec(script="true\n", environment={"variables": {name: "/shared/x/hook"}})


@pytest.mark.parametrize("script,name", [
    ("#!/bin/bash\n#SBATCH --export=ALL,BASH_ENV=/shared/x/hook.sh\necho hi\n", "BASH_ENV"),
    ("#!/bin/bash\n#PBS -v LD_PRELOAD=/shared/x/lib.so\necho hi\n", "LD_PRELOAD"),
])
def test_the_same_variable_in_a_scripts_directive_is_refused(script, name):
    """Parsed as given (as every value: a parse shows what the script says), refused when
    it would be rendered for a site: at submit, placement or translation."""
    from diamond_jupyter.dialects import get_script_dialect
    from diamond_jupyter.federation import Federation

    spec = Federation.parse(script)
    assert name in spec.environment.variables
    for dialect in ("slurm", "pbs", "sge"):
        with pytest.raises(BadInput, match=f"{name} acts before"):
            get_script_dialect(dialect).render_script(spec)
    with pytest.raises(BadInput, match=f"{name} acts before"):
        Federation.translate(script, "lsf")


def test_ordinary_variables_in_a_jobs_environment_are_kept():
    """(guard) PATH, LD_LIBRARY_PATH and the like are the job's own business."""
    env = {"PATH": "/opt/x/bin:/usr/bin", "LD_LIBRARY_PATH": "/opt/x/lib",
           "OMP_NUM_THREADS": "4", "BASH_ENV_NOTE": "x"}
    assert JobSpec(script="true\n", environment={"variables": env}).environment.variables == env


# -- 5. secrets in what the user gives: never in the store --------------------------------------

SPACED = [
    ("mysql -u me --password Hn7qWz2pKd db < dump.sql\n", "Hn7qWz2pKd"),
    ("python train.py --api-key Jf5kLp8sWq --epochs 3\n", "Jf5kLp8sWq"),
    ("setenv WANDB_API_KEY Tb6vYs3mQe\n", "Tb6vYs3mQe"),
    ("hf-cli login -token Zq81mXo2Lr\n", "Zq81mXo2Lr"),
    ("module load secure-db/2.1 && dbctl --secret 'Mv7c R2pQ9' run\n", "Mv7c R2pQ9"),
]


@pytest.mark.parametrize("script,secret", SPACED)
def test_secret_options_given_apart_from_their_value_are_not_stored(tmp_path, script, secret):
    """`--password PASS` (space, not `=`), `--api-key KEY`, csh's `setenv NAME VALUE`: the
    redactor knew only `NAME=value` and a few commands' own options; each reached the store's
    files in clear."""
    sweep_helpers.assert_script_secret_not_stored(tmp_path, script, secret)


def test_option_names_that_hold_no_secret_are_kept():
    from diamond_jupyter.store import redact

    text = ("python gen.py --max-new-tokens 256 --tokenizer gpt2 --token-file ~/.hf/t\n"
            "tool --password --verbose; tool --token $TOKEN\nls --passes 3\n")
    assert redact(text) == text


def test_secrets_in_a_refusal_and_in_event_data_are_not_stored(tmp_path):
    """(guard) A site's refusal quoting the command line, and a warning quoting a module load
    with a password, are redacted in the job's reason and in its events."""
    from diamond_jupyter.model import Event
    from diamond_jupyter.store import Store

    store = Store(tmp_path / "s.sqlite3")
    job = store.record_intent("alpha", "abc123abc123", JobSpec(script="true\n", name="j"))
    store.mark_never_submitted("abc123abc123", "alpha refused the job: sbatch: error: "
                               "https://me:Pw9xLq2Zr@db.example.org rejected")
    store.append_event(Event(kind="job.warnings", job_id=job.id, site="alpha", data={
        "warnings": ["module load db --password=Hq3Vn8Kc", "aws AKIAIOSFODNN7EXAMPLE"]}))
    shown = json.dumps([e.model_dump(mode="json") for e in store.events_since(0)])
    shown += store.get_job("abc123abc123").model_dump_json()
    for secret in ("Pw9xLq2Zr", "Hq3Vn8Kc", "AKIAIOSFODNN7EXAMPLE"):
        assert secret not in shown
    store.close()
    raw = sweep_helpers.store_files(tmp_path)
    assert b"Pw9xLq2Zr" not in raw and b"Hq3Vn8Kc" not in raw


# -- 6. a workflow file from a colleague ---------------------------------------------------------

def _load(tmp_path: Path, text: str):
    from diamond_jupyter.workflow.model import load_workflow

    f = tmp_path / "w.yaml"
    f.write_text(text)
    return load_workflow(f, sites=["alpha"])


@pytest.mark.parametrize("step,want", [
    ("{name: a, script: x, retries: .nan}", "retries must be a whole number"),
    ("{name: a, script: x, retries: .inf}", "retries must be a whole number"),
    ("{name: a, script: x, retries: 1e400}", "retries must be a whole number"),
    ("{name: a, script: x, outputs: [~/.ssh/authorized_keys]}", "no leading /, ~ or -"),
    ("{name: a, script: x, outputs: [/etc/cron.d/x]}", "no leading /, ~ or -"),
    ("{name: a, script: x, outputs: [out/../../../.bashrc]}", "no '..'"),
    ('{name: a, script: "#!/bin/bash\\n#SBATCH --nodes=-4\\necho\\n"}', "--nodes=-4"),
])
def test_a_workflow_with_odd_numbers_or_paths_is_refused(tmp_path, step, want):
    """(guard) NaN, infinity, a huge float, and outputs outside the step's directory."""
    with pytest.raises(BadInput) as e:
        _load(tmp_path, f"name: w\nsteps: [{step}]\n").steps[0].spec()
    assert want in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_a_workflow_steps_environment_cannot_preload_a_library(tmp_path):
    """The step's script reads harmless; its directive loads a colleague's library into
    every program the job starts. Refused, naming the step and the variable."""
    text = ('name: w\nsteps:\n  - name: a\n    script: "#!/bin/bash\\n'
            '#SBATCH --export=LD_PRELOAD=/shared/eve/lib.so\\necho hi\\n"\n')
    from diamond_jupyter.dialects import get_script_dialect

    spec = _load(tmp_path, text).steps[0].spec()
    with pytest.raises(BadInput, match=r"LD_PRELOAD acts before"):
        get_script_dialect("slurm").render_script(spec)


@pytest.mark.timeout(60)  # a hang guard, not a speed target
def test_a_merge_key_bomb_is_refused_at_once(tmp_path):
    """(guard) `<<: [*a, *a, ...]` nested eight deep (YAML merge keys, not plain aliases)."""
    text = "x-a: &a {k0: 1, k1: 2, k2: 3, k3: 4, k4: 5, k5: 6, k6: 7, k7: 8, k8: 9}\n"
    for i in range(1, 9):
        refs = ", ".join(f"*{chr(96 + i)}" for _ in range(9))
        text += f"x-{chr(97 + i)}: &{chr(97 + i)} [{refs}]\n"
    text += "name: w\nsteps: [{name: a, script: x, outputs: *i}]\n"
    with pytest.raises(BadInput):
        _load(tmp_path, text)


# -- 7. the REST door of a real server -----------------------------------------------------------

jp_server_config = sweep_helpers.one_local_site_server


@pytest.fixture
def raw(http_server_client, jp_base_url, jp_auth_header):
    async def call(method: str, path: str, body: bytes | None = None, *,
                   headers: dict[str, str] | None = None) -> tuple[int, Any, Any]:
        if method == "POST" and body is None:
            body = b"{}"
        resp = await http_server_client.fetch(
            jp_base_url.rstrip("/") + "/diamond/api/" + path, method=method, body=body,
            headers=jp_auth_header if headers is None else headers, raise_error=False,
            allow_nonstandard_methods=True)
        text = resp.body.decode()
        try:
            return resp.code, json.loads(text), resp.headers
        except ValueError:
            return resp.code, text, resp.headers

    return call


@pytest.mark.parametrize("number", [b"NaN", b"Infinity", b"-Infinity", b"1e999", b"1" * 5000])
async def test_nan_infinity_and_huge_numbers_in_a_body_are_a_400(raw, number):
    """(guard) Python's JSON reader takes NaN, Infinity and 1e999 (as inf); each reaches a
    numeric field as a 400 naming it, never a 500 or a rendered directive."""
    body = b'{"spec": {"script": "echo hi", "resources": {"nodes": ' + number + b"}}}"
    code, reply, _ = await raw("POST", "place", body)
    assert code == 400, (code, reply)
    assert "\n" not in reply["message"]


async def test_a_login_cookie_without_the_xsrf_token_cannot_act(raw, jp_auth_header):
    """(guard) A page on another site that makes the user's browser POST (the browser sends
    the login cookie, never the token or the _xsrf value) is refused with 403; nothing is
    recorded."""
    code, _, headers = await raw("GET", "jobs")  # the token's request sets the login cookie
    assert code == 200
    cookies = "; ".join(c.split(";", 1)[0] for c in headers.get_list("Set-Cookie")
                        if not c.startswith("_xsrf"))
    assert cookies, "no login cookie to forge with"
    code, ok, _ = await raw("GET", "jobs", headers={"Cookie": cookies})
    assert code == 200, "the cookie alone is a login (else this test proves nothing)"
    for path, body in (("jobs", b'{"script": "echo pwned", "site": "here"}'),
                       ("tasks", b'{"prompt": "cancel everything"}'),
                       ("transfers", b'{"src": "here:.ssh/id_rsa", "dst": "x"}')):
        # a browser names the page's origin: Jupyter hides its API from it (404)
        code, reply, _ = await raw("POST", path, body, headers={
            "Cookie": cookies, "Content-Type": "text/plain", "Origin": "https://evil.example"})
        assert code in (403, 404), (path, code, reply)
        # without an Origin (a form, an old browser): no _xsrf value, so 403
        code, reply, _ = await raw("POST", path, body, headers={
            "Cookie": cookies, "Content-Type": "application/x-www-form-urlencoded"})
        assert code == 403, (path, code, reply)
    code, listed, _ = await raw("GET", "jobs")
    assert listed["total"] == 0


async def test_a_cross_origin_preflight_gets_no_permission(raw):
    """(guard) No route answers another origin's CORS preflight with a grant."""
    code, _, headers = await raw("OPTIONS", "jobs", None, headers={
        "Origin": "https://evil.example", "Access-Control-Request-Method": "POST"})
    assert "evil.example" not in (headers.get("Access-Control-Allow-Origin") or "")
    assert headers.get("Access-Control-Allow-Origin") != "*"

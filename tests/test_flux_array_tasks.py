"""A job array on a Flux site, which has none, is submitted as one `flux batch` per task:
each told its index in FLUX_JOB_CC (what the translated body reads as the array index), a
`%N` limit kept by making each task wait for the end of the one N places before it, and a
submit cut short resumed without queueing any task twice (the tasks queued already are
found by the token in their names, oldest first). Flux is a fake `flux` on PATH that keeps
the jobs it queued in a file (its ids grow with submit time, as flux's do)."""

from __future__ import annotations

import json
import os
import re
import sys

import pytest
from one_site_engine import local_home_federation
from test_flux_logs_words import flux_path  # noqa: F401 (a fixture)

from diamond_jupyter.dialects.flux_commands import (
    FluxCommands,
    array_submissions,
    array_submit_script,
    array_task_waits,
    array_tasks,
    fold_array_records,
    parse_array_submit,
    queued_tasks,
    unsure_tasks,
)
from diamond_jupyter.dialects.flux_ids import flux_f58, flux_id_value
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput, JobState, JobStatus, SiteError, task_ids
from diamond_jupyter.sites import bears_token

# `flux batch [OPTS] PATH`: queues a job named as the script's --job-name directive says,
# its id 1000 + its number, printed in F58 (`ƒ` spelt `f`); with the file `fail_at` holding
# N, the N-th batch fails once. `flux jobs --json -a (--name=NAME | ID...)`: those jobs
# (urgency 0 while held); `flux cancel ID...`: each ends CANCELED (exit 1 naming any that
# had ended, as flux says "job is inactive"); `flux job urgency ID default`: not held
# (refused for the job whose number the file `refuse_urgency` holds). A job's state is as
# jobs.json holds it; one marked `purged` is listed no more (as `flux job purge` leaves it).
FAKE_FLUX = r'''#!PYTHON
import json, os, re, sys
here = os.path.dirname(os.path.abspath(__file__))
state = os.path.join(here, "jobs.json")
jobs = json.load(open(state)) if os.path.exists(state) else []
args = sys.argv[1:]
abc = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
def f58(n):
    s = ""
    while True:
        n, r = divmod(n, 58)
        s = abc[r] + s
        if not n:
            return "f" + s
def number(text):
    if text.isdecimal():
        return int(text)
    n = 0
    for c in text[1:]:
        n = n * 58 + abc.index(c)
    return n
if args[0] == "batch":
    fail_at = os.path.join(here, "fail_at")
    if os.path.exists(fail_at) and int(open(fail_at).read()) == len(jobs) + 1:
        os.remove(fail_at)
        sys.exit("flux-batch: lost the connection to the broker")
    text = open(args[-1]).read()
    name = re.search(r"--job-name=(\S+)", text).group(1)
    jobs.append({"id": 1000 + len(jobs), "name": name, "options": args[1:-1],
                 "state": "SCHED", "userid": os.getuid()})
    print(f58(jobs[-1]["id"]))
elif args[0] == "jobs":
    names = [a.split("=", 1)[1] for a in args if a.startswith("--name=")]
    ids = {number(a) for a in args[1:] if not a.startswith("-")}
    shown = [{**{k: v for k, v in j.items() if k not in ("options", "purged")},
              "urgency": 0 if "--urgency=hold" in j["options"] else 16} for j in jobs
             if (j["name"] in names if names else j["id"] in ids) and not j.get("purged")]
    print(json.dumps({"jobs": shown}))
elif args[0:2] == ["job", "urgency"]:
    refused = os.path.join(here, "refuse_urgency")
    if os.path.exists(refused) and int(open(refused).read()) == number(args[2]):
        sys.exit("flux-job: urgency: Operation not permitted")
    for j in jobs:
        if j["id"] == number(args[2]):
            j["options"] = [o for o in j["options"] if o != "--urgency=hold"]
elif args[0] == "cancel":
    ended = False
    for j in jobs:
        if j["id"] in {number(a) for a in args[1:]}:
            if j["state"] == "INACTIVE":  # as flux-core says it, the others still cancelled
                print(f"flux-cancel: ERROR: {f58(j['id'])}: job is inactive", file=sys.stderr)
                ended = True
            j.update(state="INACTIVE", result=j.get("result") or "CANCELED")
    if ended:
        json.dump(jobs, open(state, "w"))
        sys.exit(1)
else:
    sys.exit("fake flux: unexpected " + " ".join(args))
json.dump(jobs, open(state, "w"))
'''
SCRIPT = "#!/bin/bash\n#SBATCH --array={}\n#SBATCH -t 10\necho $SLURM_ARRAY_TASK_ID\n"


def _fake_flux(tmp_path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "flux").write_text(FAKE_FLUX.replace("PYTHON", sys.executable))
    (bin_dir / "flux").chmod(0o755)


def _queued(tmp_path) -> list[dict]:
    path = tmp_path / "bin" / "jobs.json"
    return json.loads(path.read_text()) if path.exists() else []


def _env(job: dict) -> str:
    return next(o.split("=", 2)[2] for o in job["options"] if o.startswith("--env="))


def _waits_for(job: dict) -> str | None:
    """The id the job waits for the end of (its --dependency=afterany:ID), else None."""
    dep = next((o for o in job["options"] if o.startswith("--dependency=")), None)
    return None if dep is None else dep.partition("afterany:")[2]


@pytest.mark.parametrize("expr, indexes, limit, waits", [
    ("1-8%2", [1, 2, 3, 4, 5, 6, 7, 8], 2, {3: 1, 4: 2, 5: 3, 6: 4, 7: 5, 8: 6}),
    ("1-9:4", [1, 5, 9], None, {}),
    ("3,1,5-6%1", [3, 1, 5, 6], 1, {1: 3, 5: 1, 6: 5}),
])
def test_an_arrays_tasks_and_what_each_waits_for(expr, indexes, limit, waits):
    assert array_tasks(expr) == (indexes, limit)
    assert array_task_waits(indexes, limit) == waits


@pytest.mark.parametrize("expr, said", [
    ("1-x", "not an index expression"),
    ("1-5000", "5000 tasks; a Flux site submits one job per task, at most 1000"),
    ("1-4%0", "the limit after '%' must be a whole number above 0"),
])
def test_an_array_flux_cannot_take_is_refused_with_why(expr, said):
    with pytest.raises(BadInput, match=said):
        array_tasks(expr)


def test_the_plan_shows_one_flux_batch_per_task():
    assert array_submissions("1-3%1", "job.sh") == [
        "flux batch --env=FLUX_JOB_CC=1 job.sh",
        "flux batch --env=FLUX_JOB_CC=2 --dependency=afterany:<id of task 1> job.sh",
        "flux batch --env=FLUX_JOB_CC=3 --dependency=afterany:<id of task 2> job.sh"]


def test_a_resumed_script_names_the_queued_tasks_ids_and_submits_the_rest_alone():
    text = array_submit_script([1, 2, 3, 4], 2, {1: "f2Jc8CuU1", 2: "f2Jc8CuU2"}, "'j.sh'")
    assert "FLUX_JOB_CC=1" not in text and "FLUX_JOB_CC=2 " not in text
    assert "--env=FLUX_JOB_CC=3 --dependency=afterany:f2Jc8CuU1 'j.sh'" in text
    assert "--env=FLUX_JOB_CC=4 --dependency=afterany:f2Jc8CuU2 'j.sh'" in text
    with pytest.raises(BadInput, match="not one of its tasks' ids"):
        array_submit_script([1, 2], None, {1: "1;id"}, "'j.sh'")
    out = "flux-batch: warning\ntask 3 f2Jc8CuU3\ntask 9 f2Jc8CuU9\ntask 4 ;id\n"
    assert parse_array_submit(out, [3, 4]) == {3: "f2Jc8CuU3"}


def _site_fed(tmp_path):
    _fake_flux(tmp_path)
    return local_home_federation(tmp_path, scheduler="flux")


async def _submit(fed, expr: str, token: str):
    site = fed.sites["here"]
    await site.know_home()
    spec = site.prepare(Federation.parse(SCRIPT.format(expr)), token)
    return await site.submit(spec, token)


@pytest.mark.usefixtures("flux_path")
async def test_each_task_is_one_flux_batch_told_its_index_and_the_limit_kept(tmp_path):
    fed = _site_fed(tmp_path)
    try:
        sub = await _submit(fed, "1-5%2", "abcabc123123")
    finally:
        await fed.close()
    queued = _queued(tmp_path)
    assert [_env(j) for j in queued] == ["1", "2", "3", "4", "5"]
    ids = [j["id"] for j in queued]
    assert sub.tasks is not None and list(sub.tasks) == ["1", "2", "3", "4", "5"]
    assert [flux_id_value(sub.tasks[k]) for k in sub.tasks] == ids
    assert flux_id_value(sub.native_id) == ids[0]
    deps = [_waits_for(j) for j in queued]
    assert deps[:2] == [None, None]
    assert [flux_id_value(d or "") for d in deps[2:]] == ids[:3]  # task i waits for task i-2
    assert {j["name"] for j in queued} == {"job.dmd-abcabc123123"}


@pytest.mark.usefixtures("flux_path")
async def test_a_submit_cut_short_is_resumed_without_queueing_a_task_twice(tmp_path):
    fed = _site_fed(tmp_path)
    (tmp_path / "bin" / "fail_at").write_text("3")
    try:
        with pytest.raises(SiteError, match="2 of the array's 4 tasks were queued, not "
                                            "task 3 and those after it"):
            await _submit(fed, "1-4%2", "abcabc123123")
        assert [_env(j) for j in _queued(tmp_path)] == ["1", "2"]
        sub = await _submit(fed, "1-4%2", "abcabc123123")  # as a resumed submit does
        again = await _submit(fed, "1-4%2", "abcabc123123")  # all queued: nothing runs
    finally:
        await fed.close()
    queued = _queued(tmp_path)
    assert [_env(j) for j in queued] == ["1", "2", "3", "4"]
    assert [flux_id_value(_waits_for(j) or "") for j in queued[2:]] == [queued[0]["id"],
                                                                 queued[1]["id"]]
    assert sub.tasks == again.tasks
    assert [flux_id_value(sub.tasks[k]) for k in "1234"] == [j["id"] for j in queued]


def _purge(tmp_path, numbers: set[int]) -> None:
    """Ended jobs flux purged (`flux job purge`, or its limit of inactive jobs kept)."""
    path = tmp_path / "bin" / "jobs.json"
    jobs = json.loads(path.read_text())
    for j in jobs:
        if j["id"] in numbers:
            j.update(state="INACTIVE", result="COMPLETED", returncode=0, purged=True)
    path.write_text(json.dumps(jobs))


async def _cut_short(fed, tmp_path, fail_at: int) -> None:
    """A submit of a 4-task array (limit 2) cut short at its `fail_at`-th flux batch."""
    (tmp_path / "bin" / "fail_at").write_text(str(fail_at))
    with pytest.raises(SiteError, match=f"{fail_at - 1} of the array's 4 tasks were queued"):
        await _submit(fed, "1-4%2", "abcabc123123")


def _each_task_once(tmp_path, sub) -> list[dict]:
    """The 4 tasks flux queued, each once and bound to its index; the queued jobs."""
    queued = _queued(tmp_path)
    assert [_env(j) for j in queued] == ["1", "2", "3", "4"]
    assert sub.tasks is not None and [flux_id_value(sub.tasks[k]) for k in "1234"] == \
        [1000, 1001, 1002, 1003]
    return queued


@pytest.mark.usefixtures("flux_path")
async def test_a_resumed_submit_whose_first_task_flux_purged_queues_no_task_twice(tmp_path):
    """Task 1 ended and was purged from flux's listing before the submit was resumed: the
    submit's own record of its tasks keeps it task 1, not a reason to read task 2 as 1."""
    fed = _site_fed(tmp_path)
    try:
        await _cut_short(fed, tmp_path, 3)
        _purge(tmp_path, {1000})
        sub = await _submit(fed, "1-4%2", "abcabc123123")
    finally:
        await fed.close()
    queued = _each_task_once(tmp_path, sub)
    assert [flux_id_value(_waits_for(j) or "") for j in queued[2:]] == [1000, 1001]


@pytest.mark.usefixtures("flux_path")
async def test_a_task_known_from_the_listing_alone_is_recorded_for_the_next_resume(tmp_path):
    """Task 2 was queued but its line never reached the record (the submit was cut short
    just then): the resume that finds it in flux's listing records it, so a later resume
    still knows it once flux purged it."""
    fed = _site_fed(tmp_path)
    record = _record(tmp_path)
    try:
        await _cut_short(fed, tmp_path, 3)
        lines = record.read_text().splitlines(keepends=True)
        record.write_text("".join(lines[:lines.index(next(x for x in lines
                                                          if x.startswith("task 1 "))) + 1]))
        await _cut_short(fed, tmp_path, 4)
        _purge(tmp_path, {1001})
        sub = await _submit(fed, "1-4%2", "abcabc123123")
    finally:
        await fed.close()
    queued = _each_task_once(tmp_path, sub)
    assert flux_id_value(_waits_for(queued[3]) or "") == 1001


@pytest.mark.usefixtures("flux_path")
async def test_a_task_queued_as_the_submit_died_and_then_purged_is_not_queued_again(tmp_path):
    """The server died right after task 2's flux batch, before its id reached the record,
    and flux purged task 2 once it ended: nothing tells it was queued but the record's
    `begin 2`, so the resume says task 2 is unknown and queues nothing (before: task 2 was
    queued a second time)."""
    fed = _site_fed(tmp_path)
    record = _record(tmp_path)
    try:
        await _cut_short(fed, tmp_path, 3)
        lines = record.read_text().splitlines(keepends=True)
        assert lines[:3] == ["begin 1\n", lines[1], "begin 2\n"], lines
        record.write_text("".join(lines[:3]))  # as it was when the server died
        _purge(tmp_path, {1001})
        with pytest.raises(BadInput, match="array task 2: unknown, not resubmitted: its flux "
                                           "batch was cut short before its id was recorded"):
            await _submit(fed, "1-4%2", "abcabc123123")
    finally:
        await fed.close()
    assert [_env(j) for j in _queued(tmp_path)] == ["1", "2"]


def test_a_failed_flux_batch_is_recorded_as_failed_and_so_submitted_again():
    """`failed INDEX` after a begun task's failed flux batch: not unsure (it is queued on
    the resume); a begin after it is unsure again."""
    assert unsure_tasks("begin 1\ntask 1 f1\nbegin 2\nfailed 2\n", [1, 2, 3]) == []
    assert unsure_tasks("begin 1\ntask 1 f1\nbegin 2\nfailed 2\nbegin 2\n", [1, 2]) == [2]
    assert unsure_tasks("begin 9\nbegin x\n", [1, 2]) == []


def _record(tmp_path):
    """The record the array abcabc123123's submit keeps of its tasks' ids."""
    return tmp_path / "home" / ".diamond" / "jobs" / "abcabc123123" / ".dmd-tasks-abcabc123123"


def _another_job(tmp_path) -> int:
    """A job flux queued that is none of the array's (another name): its id as a number."""
    path = tmp_path / "bin" / "jobs.json"
    jobs = json.loads(path.read_text())
    jobs.append({"id": 1000 + len(jobs), "name": "theirs", "options": []})
    path.write_text(json.dumps(jobs))
    return jobs[-1]["id"]


@pytest.mark.usefixtures("flux_path")
async def test_a_tasks_file_the_job_writes_in_its_directory_is_not_the_record(tmp_path):
    """The job's directory is its working directory: a job (or a user's script) writing a
    `tasks` file there, naming another job as task 3, does not make the resume skip task 3
    (before: task 3 was taken as queued, the other job followed as it)."""
    fed = _site_fed(tmp_path)
    try:
        await _cut_short(fed, tmp_path, 3)
        other = flux_f58(_another_job(tmp_path), ascii_prefix=True)
        (_record(tmp_path).parent / "tasks").write_text(f"task 3 {other}\ntask 4 {other}\n")
        sub = await _submit(fed, "1-4%2", "abcabc123123")
    finally:
        await fed.close()
    assert [_env(j) for j in _queued(tmp_path) if j["name"] != "theirs"] == ["1", "2", "3", "4"]
    assert flux_id_value(sub.tasks["3"]) != flux_id_value(other)


@pytest.mark.usefixtures("flux_path")
async def test_a_recorded_id_flux_lists_as_another_job_is_left_out_and_said(tmp_path, caplog):
    """A record line naming a job flux lists under another name (not the array's) is not
    taken as the task: the task is queued, and the line said as left out."""
    fed = _site_fed(tmp_path)
    try:
        await _cut_short(fed, tmp_path, 3)
        other = flux_f58(_another_job(tmp_path), ascii_prefix=True)
        with _record(tmp_path).open("a") as f:
            f.write(f"task 3 {other}\n")
        sub = await _submit(fed, "1-4%2", "abcabc123123")
    finally:
        await fed.close()
    assert [_env(j) for j in _queued(tmp_path) if j["name"] != "theirs"] == ["1", "2", "3", "4"]
    assert flux_id_value(sub.tasks["3"]) != flux_id_value(other)
    assert f"names job {other} as task 3, but flux lists it as another job's" in caplog.text


@pytest.mark.usefixtures("flux_path")
async def test_a_recorded_id_flux_lists_as_another_users_job_of_the_arrays_name_is_left_out(
        tmp_path, caplog):
    """The token is in the queue for any user to copy: a record line naming a job another
    user queued under the array's own name is not taken as the task (before: its name alone
    made it the array's)."""
    fed = _site_fed(tmp_path)
    try:
        await _cut_short(fed, tmp_path, 3)
        path = tmp_path / "bin" / "jobs.json"
        jobs = json.loads(path.read_text())
        jobs.append({**jobs[0], "id": 1000 + len(jobs), "userid": os.getuid() + 1})
        path.write_text(json.dumps(jobs))
        other = flux_f58(jobs[-1]["id"], ascii_prefix=True)
        with _record(tmp_path).open("a") as f:
            f.write(f"task 3 {other}\n")
        sub = await _submit(fed, "1-4%2", "abcabc123123")
    finally:
        await fed.close()
    assert flux_id_value(sub.tasks["3"]) not in (None, flux_id_value(other))
    assert f"names job {other} as task 3, but flux lists it as another job's" in caplog.text


def test_a_job_carries_its_token_in_its_name_comment_or_env():
    """A site that cuts names to its limit keeps the token in the job's env (or comment)."""
    def listed(**where) -> JobStatus:
        return JobStatus(native_id="f1", state=JobState.RUNNING, **where)
    token = "abcabc123123"
    assert bears_token(listed(name=f"job.dmd-{token}"), token)
    assert bears_token(listed(name="job", comment=f"diamond:{token}"), token)
    assert bears_token(listed(name="jo", token=token), token)
    assert not bears_token(listed(name=f"job.dmd-{token}x", token="other"), token)


@pytest.mark.usefixtures("flux_path")
async def test_an_array_cut_short_under_the_plain_tasks_record_resumes_from_it(tmp_path):
    """An array cut short by an earlier version, which recorded its tasks in the job
    directory's plain `tasks` file, and whose task 1 flux purged since: the resume reads
    that file (each id checked: one flux lists as another job's is left out), queues no
    task twice, and copies what it read to the record a later resume reads."""
    fed = _site_fed(tmp_path)
    record = _record(tmp_path)
    try:
        await _cut_short(fed, tmp_path, 3)
        other = flux_f58(_another_job(tmp_path), ascii_prefix=True)
        (record.parent / "tasks").write_text(record.read_text() + f"task 3 {other}\n")
        record.unlink()
        _purge(tmp_path, {1000})
        sub = await _submit(fed, "1-4%2", "abcabc123123")
    finally:
        await fed.close()
    queued = [j for j in _queued(tmp_path) if j["name"] != "theirs"]
    assert [_env(j) for j in queued] == ["1", "2", "3", "4"]
    assert sub.tasks is not None and [flux_id_value(sub.tasks[k]) for k in "1234"] == \
        [j["id"] for j in queued]
    assert parse_array_submit(record.read_text(), [1, 2]) == \
        {1: sub.tasks["1"], 2: sub.tasks["2"]}


def test_queued_tasks_take_the_record_first_and_refuse_a_listing_that_disagrees():
    found = [JobStatus(native_id=flux_f58(v, ascii_prefix=True), state=JobState.PENDING)
             for v in (1001, 1002)]
    one = flux_f58(1000, ascii_prefix=True)
    assert {i: flux_id_value(j) for i, j in queued_tasks({1: one}, found, [1, 2, 3, 4])
            .items()} == {1: 1000, 2: 1001, 3: 1002}  # 2 and 3 queued as it was cut short
    with pytest.raises(BadInput, match="older than a task its record names"):
        queued_tasks({1: flux_f58(1005, ascii_prefix=True)}, found, [1, 2, 3])
    with pytest.raises(BadInput, match="3 queued jobs carry the array's token, more than "
                                       "its 2 tasks"):
        queued_tasks({1: one}, found, [1, 2])


async def _died_after_two_of_four(tmp_path) -> str:
    """An engine that died submitting a 4-task array after queueing 2: the job's token."""
    fed = _site_fed(tmp_path)
    (tmp_path / "bin" / "fail_at").write_text("3")
    try:
        with pytest.raises(SiteError, match="2 of the array's 4 tasks were queued"):
            await fed.submit(fed.parse(SCRIPT.format("1-4%2")), site="here")
        (intent,) = fed.store.intents_without_native_id()
    finally:
        await fed.close()
    return intent.token or ""


async def _recovered(tmp_path, token: str, passes: int = 1):
    """The job as the next server (same store) recovers it in `passes` passes."""
    again = local_home_federation(tmp_path, scheduler="flux")
    try:
        for _ in range(passes):
            await again.recover(intent_grace_s=0)
        return again.job(token)
    finally:
        await again.close()


@pytest.mark.usefixtures("flux_path")
async def test_recovery_resumes_an_array_whose_queued_tasks_flux_all_purged(tmp_path):
    token = await _died_after_two_of_four(tmp_path)
    _purge(tmp_path, {1000, 1001})  # both ended and gone from `flux jobs -a`
    job = await _recovered(tmp_path, token)
    queued = _queued(tmp_path)
    assert [_env(j) for j in queued] == ["1", "2", "3", "4"]  # not closed as never queued
    ids = task_ids(job)
    assert ids is not None and [flux_id_value(ids[k]) for k in "1234"] == \
        [1000, 1001, 1002, 1003]


async def _end_line(fed, job, native: str, rc: int, kind: str = "end") -> None:
    """The line a task's wrapper writes (signed with the job's secret) as its monitor reads
    it: `kind` (start, end) under the task's flux id `native`."""
    from diamond_jupyter.wrapper import event_mac

    mon = fed.monitors["here"]
    body = f"1700000000.0 {kind} {job.token} {native} {rc}"
    await mon._on_line(f"{body} {event_mac(mon._secrets[job.token or ''], body)}")


def _set_states(tmp_path, states: dict[int, tuple[str, str | None]]) -> None:
    """The fake's job number -> (its flux state, its result)."""
    path = tmp_path / "bin" / "jobs.json"
    jobs = json.loads(path.read_text())
    for j in jobs:
        if j["id"] in states:
            j["state"], result = states[j["id"]]
            j.update({"result": result, "returncode": 0} if result else {})
    path.write_text(json.dumps(jobs))


@pytest.mark.usefixtures("flux_path")
async def test_an_approved_array_runs_as_its_tasks_followed_one_by_one_and_cancelled_whole(
        tmp_path):
    fed = _site_fed(tmp_path)
    spec = fed.parse(SCRIPT.format("1-4%2"))
    try:
        plan = await fed.plan_submit(spec, site="here")
        script = f"{fed.sites['here'].job_dir(plan['submission'])}/job.sh"
        assert plan["submissions"] == [
            f"flux batch --env=FLUX_JOB_CC=1 {script}",
            f"flux batch --env=FLUX_JOB_CC=2 {script}",
            f"flux batch --env=FLUX_JOB_CC=3 --dependency=afterany:<id of task 1> {script}",
            f"flux batch --env=FLUX_JOB_CC=4 --dependency=afterany:<id of task 2> {script}"]
        assert "echo $FLUX_JOB_CC" in plan["script"]
        assert not any("array" in w for w in plan["warnings"])
        job = await fed.submit_approved(spec, plan)
        queued = _queued(tmp_path)
        assert [_env(j) for j in queued] == ["1", "2", "3", "4"]
        ids = task_ids(fed.job(job.id))  # stored with the job
        assert ids is not None and [flux_id_value(ids[k]) for k in "1234"] == \
            [j["id"] for j in queued]
        assert job.native_id == ids["1"]

        _set_states(tmp_path, {1000: ("INACTIVE", "COMPLETED"), 1001: ("RUN", None)})
        job = await fed.status(job.id, refresh=True)
        assert job.state == JobState.RUNNING
        assert job.tasks == {"1": JobState.COMPLETED, "2": JobState.RUNNING,
                             "3": JobState.PENDING, "4": JobState.PENDING}

        await fed.cancel(job.id)
        states = {j["id"]: (j["state"], j.get("result")) for j in _queued(tmp_path)}
        assert states == {1000: ("INACTIVE", "COMPLETED"), 1001: ("INACTIVE", "CANCELED"),
                          1002: ("INACTIVE", "CANCELED"), 1003: ("INACTIVE", "CANCELED")}
        job = await fed.status(job.id, refresh=True)
        assert job.state == JobState.CANCELLED
        assert job.tasks == {"1": JobState.COMPLETED, "2": JobState.CANCELLED,
                             "3": JobState.CANCELLED, "4": JobState.CANCELLED}
    finally:
        await fed.close()


def _listed(native: int, state: JobState) -> JobStatus:
    return JobStatus(native_id=flux_f58(native, ascii_prefix=True), state=state,
                     exit_code=0 if state == JobState.COMPLETED else None)


@pytest.mark.parametrize("listed, ended, state, tasks, said", [
    # task 1 purged, never seen ended: not COMPLETED, and said which
    ({1001: JobState.COMPLETED, 1002: JobState.COMPLETED}, {}, JobState.FAILED,
     ["UNKNOWN", "COMPLETED", "COMPLETED"], "1 not listed by flux (purged once ended, its "
                                           "outcome not seen): task 1"),
    # as an earlier listing (or its end line) last saw it
    ({1001: JobState.COMPLETED, 1002: JobState.COMPLETED}, {"1": JobState.COMPLETED},
     JobState.COMPLETED, ["COMPLETED"] * 3, None),
    ({1001: JobState.COMPLETED, 1002: JobState.COMPLETED}, {"1": JobState.FAILED},
     JobState.FAILED, ["FAILED", "COMPLETED", "COMPLETED"], "FAILED as last seen"),
    # still running: running, the purged one unknown
    ({1001: JobState.RUNNING}, {}, JobState.RUNNING, ["UNKNOWN", "RUNNING", "UNKNOWN"],
     "2 not listed by flux (purged once ended, its outcome not seen): tasks 1, 3"),
])
def test_a_partial_listing_folds_into_what_is_known_of_the_array(listed, ended, state, tasks,
                                                                  said):
    array = flux_f58(1000, ascii_prefix=True)
    task_of = {1000 + k: (array, str(k + 1)) for k in range(3)}
    (folded,) = fold_array_records([_listed(n, st) for n, st in listed.items()], task_of,
                                   {array: ended})
    assert (folded.native_id, folded.state) == (array, state)
    assert folded.tasks == {str(k + 1): JobState(t) for k, t in enumerate(tasks)}
    assert said is None or said in (folded.reason or "")


@pytest.mark.usefixtures("flux_path")
async def test_an_array_whose_ended_task_flux_purged_is_not_completed_unless_seen_so(
        tmp_path):
    fed = _site_fed(tmp_path)
    try:
        job = await fed.submit(fed.parse(SCRIPT.format("1-3")), site="here")
        _set_states(tmp_path, {1000: ("INACTIVE", "COMPLETED"), 1001: ("RUN", None)})
        await fed.status(job.id, refresh=True)  # task 1 seen ended
        _purge(tmp_path, {1000, 1002})  # task 3 ended and purged between two polls
        _set_states(tmp_path, {1001: ("INACTIVE", "COMPLETED")})
        job = await fed.status(job.id, refresh=True)
        assert job.state == JobState.FAILED and "task 3" in (job.reason or "")
        assert job.tasks == {"1": JobState.COMPLETED, "2": JobState.COMPLETED,
                             "3": JobState.PENDING}  # as last listed: its end not seen
    finally:
        await fed.close()


@pytest.mark.usefixtures("flux_path")
@pytest.mark.parametrize("rcs, state", [((0, 0), JobState.COMPLETED),
                                        ((0, 3), JobState.FAILED)])
@pytest.mark.parametrize("purged", [{1001}, {1000, 1001}])
async def test_a_purged_tasks_end_line_gives_its_outcome(tmp_path, rcs, state, purged):
    """Each task's end line (its own exit code) stands for it once flux no longer lists
    it, even when flux lists no task of the array any more."""
    fed = _site_fed(tmp_path)
    try:
        job = await fed.submit(fed.parse(SCRIPT.format("1-2")), site="here")
        for index, rc in zip("12", rcs, strict=True):
            await _end_line(fed, job, (task_ids(job) or {})[index], rc)
        _set_states(tmp_path, {1000: ("INACTIVE", "COMPLETED")})
        _purge(tmp_path, purged)
        job = await fed.status(job.id, refresh=True)
    finally:
        await fed.close()
    assert job.state == state
    assert job.tasks == {"1": JobState.COMPLETED, "2": JobState(
        "COMPLETED" if rcs[1] == 0 else "FAILED")}


@pytest.mark.usefixtures("flux_path")
async def test_an_engine_that_died_mid_submit_queues_the_rest_once_on_recovery(tmp_path):
    token = await _died_after_two_of_four(tmp_path)
    assert [_env(j) for j in _queued(tmp_path)] == ["1", "2"]
    job = await _recovered(tmp_path, token, passes=2)  # a second pass finds nothing to do
    queued = _queued(tmp_path)
    assert [_env(j) for j in queued] == ["1", "2", "3", "4"]
    assert [flux_id_value(_waits_for(j) or "") for j in queued[2:]] == [1000, 1001]
    ids = task_ids(job)
    assert ids is not None and [flux_id_value(ids[k]) for k in "1234"] == \
        [1000, 1001, 1002, 1003]
    assert job.native_id == ids["1"] and job.state == JobState.PENDING


def _record_cut_to(tmp_path, token: str, kept: int) -> None:
    """The record of array `token`'s submit as it was when the engine died: its first
    `kept` lines (so a task's `begin` with no id after it)."""
    record = tmp_path / "home" / ".diamond" / "jobs" / token / f".dmd-tasks-{token}"
    record.write_text("".join(record.read_text().splitlines(keepends=True)[:kept]))


@pytest.mark.usefixtures("flux_path")
async def test_a_recovery_refused_for_an_unsure_task_binds_the_tasks_found_and_says_why(
        tmp_path):
    """The engine died as task 2's flux batch ran, before its id reached the record, and
    flux purged task 2: the resume refuses to queue it again. Recovery binds task 1 (still
    listed: followed and cancellable), says the refusal on the job, and never asks again
    (before: the intent stayed open, each pass asked the site, the refusal only logged)."""
    token = await _died_after_two_of_four(tmp_path)
    _record_cut_to(tmp_path, token, 3)  # begin 1, task 1 ID, begin 2
    _purge(tmp_path, {1001})
    job = await _recovered(tmp_path, token, passes=2)
    assert [_env(j) for j in _queued(tmp_path)] == ["1", "2"]  # nothing queued again
    assert flux_id_value(job.native_id or "") == 1000
    assert {k: flux_id_value(v) for k, v in (task_ids(job) or {}).items()} == {"1": 1000}
    assert "array task 2: unknown, not resubmitted" in (job.reason or "")
    again = local_home_federation(tmp_path, scheduler="flux")
    try:
        assert again.store.intents_without_native_id() == []
        said = [e.data for e in again.store.events_since(0, limit=None)
                if e.kind == "job.warnings"]
        assert any("array task 2: unknown" in w for d in said for w in d["warnings"])
    finally:
        await again.close()


@pytest.mark.usefixtures("flux_path")
async def test_a_recovery_refused_with_no_task_found_closes_the_intent_with_why(tmp_path):
    """Only `begin 1` reached the record and flux purged that task: nothing to follow, so
    the intent is closed as FAILED with the refusal as its reason, not looked at again."""
    token = await _died_after_two_of_four(tmp_path)
    _record_cut_to(tmp_path, token, 1)
    _purge(tmp_path, {1000, 1001})
    job = await _recovered(tmp_path, token)
    assert job.native_id is None and job.state == JobState.FAILED
    assert "array task 1: unknown, not resubmitted" in (job.reason or "")
    assert [_env(j) for j in _queued(tmp_path)] == ["1", "2"]


@pytest.mark.usefixtures("flux_path")
async def test_a_refused_recovery_leaves_an_intent_another_engine_bound_meanwhile(tmp_path):
    """Another engine binds the intent after this one looked it up and before its resume
    was refused: the refusal, with nothing found or with jobs found, neither closes nor
    re-binds the job now bound (before: it was closed FAILED from the stale look-up)."""
    token = await _died_after_two_of_four(tmp_path)
    fed, other = (local_home_federation(tmp_path, scheduler="flux") for _ in range(2))
    try:
        stale = fed.job(token)
        other.store.bind_native_id(token, flux_f58(1000, ascii_prefix=True),
                                   task_ids={"1": flux_f58(1000, ascii_prefix=True)})
        found = [JobStatus(native_id=flux_f58(1001, ascii_prefix=True), state=JobState.PENDING)]
        for listed in ([], found):
            fed.journal._close_unsure_array(stale, BadInput("refused"), listed)
        job = fed.job(token)
    finally:
        await fed.close()
        await other.close()
    assert flux_id_value(job.native_id or "") == 1000 and job.state == JobState.PENDING
    assert task_ids(job) == {"1": flux_f58(1000, ascii_prefix=True)}
    assert "refused" not in (job.reason or "")


@pytest.mark.usefixtures("flux_path")
async def test_a_recovery_the_site_fails_says_why_once_and_tries_again(tmp_path):
    """Flux refuses task 3's flux batch on two recovery passes: the intent stays open, its
    reason says why once (not a new event each pass; before: only logged), and the pass
    after flux takes it again queues tasks 3 and 4 and binds the array."""
    token = await _died_after_two_of_four(tmp_path)
    fed = local_home_federation(tmp_path, scheduler="flux")
    try:
        for _ in range(2):
            (tmp_path / "bin" / "fail_at").write_text("3")
            await fed.recover(intent_grace_s=0)
        job = fed.job(token)
        assert job.native_id is None and not job.state.terminal
        assert "array submit not resumed yet: " in (job.reason or "") and \
            "not task 3 and those after it" in (job.reason or ""), job.reason
        said = [e for e in fed.store.events_since(0, limit=None, job_id=job.id)
                if "not resumed yet" in str(e.data.get("reason"))]
        assert len(said) == 1, said
        await fed.recover(intent_grace_s=0)
        job = fed.job(token)
    finally:
        await fed.close()
    assert [_env(j) for j in _queued(tmp_path)] == ["1", "2", "3", "4"]
    assert flux_id_value(job.native_id or "") == 1000


def _copies_of_task_one(tmp_path, count: int) -> list[int]:
    """`count` more jobs as task 1 is (its name, token and owner) in flux's queue, as a
    listing the record disagrees with shows them: their ids as numbers."""
    path = tmp_path / "bin" / "jobs.json"
    jobs = json.loads(path.read_text())
    copies = [{**jobs[0], "id": 1000 + len(jobs) + k} for k in range(count)]
    path.write_text(json.dumps(jobs + copies))
    return [j["id"] for j in copies]


@pytest.mark.usefixtures("flux_path")
async def test_a_recovery_refused_for_a_listing_that_disagrees_follows_every_job_found(
        tmp_path):
    """Flux lists five jobs carrying the 4-task array's token: the resume cannot tell which
    task each is and refuses. Recovery binds all five as the array's unsure tasks
    (followed, each id kept), says the refusal once, never asks again, and a cancel
    reaches every one of them (before: the intent was closed FAILED, the five left
    running unseen, at most ten of their ids in its reason)."""
    token = await _died_after_two_of_four(tmp_path)
    copies = _copies_of_task_one(tmp_path, 3)
    job = await _recovered(tmp_path, token, passes=3)
    assert "array submit not resumed: 5 queued jobs carry the array's token, more than its " \
           "4 tasks: not resubmitting any" in (job.reason or ""), job.reason
    assert not job.state.terminal and job.native_id is not None
    ids = task_ids(job) or {}
    assert sorted(ids) == [f"unsure-{n}" for n in range(1, 6)]
    assert {flux_id_value(v) for v in ids.values()} == {1000, 1001, *copies}
    assert len(_queued(tmp_path)) == 5  # nothing queued by the recovery
    again = local_home_federation(tmp_path, scheduler="flux")
    try:
        assert again.store.intents_without_native_id() == []
        said = [e for e in again.store.events_since(0, limit=None, job_id=job.id)
                if "not resubmitting any" in str(e.data.get("reason"))]
        assert len(said) == 1, said
        _set_states(tmp_path, {copies[0]: ("RUN", None)})
        seen = await again.status(job.id, refresh=True)
        assert seen.state == JobState.RUNNING and set(seen.tasks or {}) == set(ids)
        await again.cancel(job.id)
    finally:
        await again.close()
    assert {j["id"]: j.get("result") for j in _queued(tmp_path)} == \
        dict.fromkeys([1000, 1001, *copies], "CANCELED")


@pytest.mark.usefixtures("flux_path")
async def test_a_job_waiting_for_the_array_waits_for_each_of_its_tasks(tmp_path):
    fed = _site_fed(tmp_path)
    try:
        array = await fed.submit(fed.parse(SCRIPT.format("1-3")), site="here")
        after = "#!/bin/bash\n#flux: --dependency=afterok:{}\n#flux: -t 5m\necho done\n"
        plan = await fed.plan_submit(fed.parse(after.format(array.native_id)), site="here")
        waited = [line for line in plan["script"].splitlines() if "--dependency" in line]
        plain = await fed.plan_submit(fed.parse(after.format("f2Jc8CuU1")), site="here")
    finally:
        await fed.close()
    ids = [j["id"] for j in _queued(tmp_path)]
    assert [flux_id_value(line.rpartition(":")[2]) for line in waited] == ids
    assert [line for line in plain["script"].splitlines() if "--dependency" in line] == \
        ["#flux: --dependency=afterok:f2Jc8CuU1"]


@pytest.mark.usefixtures("flux_path")
async def test_a_job_waiting_for_one_tasks_own_flux_id_waits_for_that_task_of_the_array(
        tmp_path):
    """`flux jobs` lists each task under its own id: a job written to wait for task 2's is
    shown waiting for task 2 of the array (its state as the array's listing gives it), not
    for a job diamond does not know; flux is still told the task's own id."""
    fed = _site_fed(tmp_path)
    try:
        array = await fed.submit(fed.parse(SCRIPT.format("1-3")), site="here")
        second = (task_ids(array) or {})["2"]
        after = f"#!/bin/bash\n#flux: --dependency=afterok:{second}\n#flux: -t 5m\necho ok\n"
        down = await fed.submit(fed.parse(after), site="here")
        (dep,) = fed.dependencies(down.id)
        assert (dep.job, dep.task, dep.satisfied) == (array.id, "2", False)
        _set_states(tmp_path, {1001: ("INACTIVE", "COMPLETED"), 1000: ("RUN", None)})
        await fed.status(array.id, refresh=True)
        (dep,) = fed.dependencies(down.id)
        assert (dep.job, dep.task, dep.task_state, dep.satisfied) == \
            (array.id, "2", JobState.COMPLETED, True)
        script = tmp_path / "home" / ".diamond" / "jobs" / (down.token or "") / "job.sh"
    finally:
        await fed.close()
    assert f"#flux: --dependency=afterok:{second}\n" in script.read_text()


@pytest.mark.parametrize("named", ["fJF_2", "fJF[2]", "1000_2"])
def test_a_dependency_on_a_task_in_another_schedulers_form_is_told_to_name_its_own_id(named):
    with pytest.raises(BadInput, match=rf"{re.escape(repr(named))} is not a Flux job id: it "
                       r"names task 2 of job f?[JF0-9]+ as Slurm or LSF would.*name task 2 by "
                       r"its own id \(`flux jobs` lists it"):
        Federation.parse(f"#!/bin/bash\n#flux: --dependency=afterok:{named}\necho ok\n")


@pytest.mark.usefixtures("flux_path")
async def test_an_array_submitted_held_has_every_task_held_and_released(tmp_path):
    fed = _site_fed(tmp_path)
    try:
        job = await fed.submit(fed.parse(SCRIPT.format("1-3%1")), site="here", hold=True)
        assert all("--urgency=hold" in j["options"] for j in _queued(tmp_path))
        await fed.release(job.id)
    finally:
        await fed.close()
    assert not any("--urgency=hold" in j["options"] for j in _queued(tmp_path))


@pytest.mark.usefixtures("flux_path")
@pytest.mark.parametrize("refused", [1, 3])
async def test_a_release_flux_refuses_for_one_task_releases_the_others_and_names_it(
        tmp_path, refused):
    fed = _site_fed(tmp_path)
    try:
        job = await fed.submit(fed.parse(SCRIPT.format("1-3")), site="here", hold=True)
        (tmp_path / "bin" / "refuse_urgency").write_text(str(999 + refused))
        with pytest.raises(SiteError, match=rf"released 2 of the array's 3 tasks; still "
                           rf"held: task {refused} \(f[0-9A-Za-z]+\) \(flux said: flux-job: "
                           "urgency: Operation not permitted\\)"):
            await fed.release(job.id)
        held = {j["id"]: "--urgency=hold" in j["options"] for j in _queued(tmp_path)}
        assert held == {1000 + k: k + 1 == refused for k in range(3)}
        (tmp_path / "bin" / "refuse_urgency").unlink()
        job = await fed.status(job.id, refresh=True)
        assert job.reason is not None and job.reason.startswith(f"held (task {refused} of 3)")
        await fed.release(job.id)  # again: the one left held is released
    finally:
        await fed.close()
    assert not any("--urgency=hold" in j["options"] for j in _queued(tmp_path))


@pytest.mark.usefixtures("flux_path")
async def test_each_tasks_own_event_lines_are_the_arrays(tmp_path):
    """Each task's wrapper signs its lines with its own flux id ($FLUX_JOB_ID): the array's
    lines, not another job's; one task's end leaves the array to the scheduler's word."""
    fed = _site_fed(tmp_path)
    try:
        job = await fed.submit(fed.parse(SCRIPT.format("1-3")), site="here")
        mon = fed.monitors["here"]
        second = (task_ids(job) or {})["2"]
        await _end_line(fed, job, second, 0, kind="start")
        assert fed.job(job.id).state == JobState.RUNNING
        await _end_line(fed, job, second, 0)
        await _end_line(fed, job, "f2Jc8CuU9", 0, kind="start")  # no task of it: refused
        assert mon.rejected_lines == 1
        assert fed.job(job.id).state == JobState.RUNNING  # tasks 1 and 3 have not ended
    finally:
        await fed.close()


def test_a_cancel_is_no_failure_only_where_flux_named_tasks_that_had_ended():
    ended = FluxCommands.cancel_missed_only_ended
    assert ended("flux-cancel: ERROR: f2Jc8CuU1: job is inactive\n"
                 "flux-cancel: ERROR: f2Jc8CuU2: unknown job id\n")
    assert not ended("flux-cancel: ERROR: f2Jc8CuU1: job is inactive\n"
                     "flux-cancel: ERROR: f2Jc8CuU2: guests can only raise exceptions on "
                     "their own jobs\n")
    assert not ended("")  # failed saying nothing: not known to be ended


@pytest.mark.usefixtures("flux_path")
async def test_an_array_moved_elsewhere_takes_none_of_its_old_tasks_ids(tmp_path):
    """A stuck array resubmitted elsewhere is submitted from its original spec: the ids of
    the tasks it had here would make the new job's cancel reach them, not its own."""
    fed = _site_fed(tmp_path)
    try:
        job = await fed.submit(fed.parse(SCRIPT.format("1-3")), site="here")
        assert task_ids(fed.job(job.id)) is not None
        moved = fed.original_spec(fed.job(job.id))
    finally:
        await fed.close()
    assert "flux_task_ids" not in moved.metadata
    assert moved.array is not None and moved.array.expression == "1-3"


@pytest.mark.usefixtures("flux_path")
@pytest.mark.parametrize("scheduler, index", [
    ("slurm", "$SLURM_ARRAY_TASK_ID"), ("pbs", "$PBS_ARRAY_INDEX"), ("lsf", "$LSB_JOBINDEX")])
async def test_an_array_moved_elsewhere_reads_that_schedulers_index(tmp_path, scheduler,
                                                                     index):
    """Its body, translated for the Flux site (the index in $FLUX_JOB_CC), reads the new
    site's own index variable there, as its render shows."""
    from diamond_jupyter.config import SiteConfig, TransportConfig
    from diamond_jupyter.sites import Site
    from diamond_jupyter.transports.local import LocalTransport

    fed = _site_fed(tmp_path)
    try:
        job = await fed.submit(fed.parse(SCRIPT.format("1-3")), site="here")
        assert "echo $FLUX_JOB_CC" in (fed.job(job.id).spec.script or "")
        moved = fed.original_spec(fed.job(job.id))
    finally:
        await fed.close()
    cfg = SiteConfig(name="other", scheduler=scheduler,
                     transport=TransportConfig(kind="local"), workdir=str(tmp_path / "o"))
    other = Site(cfg, transport=LocalTransport("other", workdir=str(tmp_path)))
    rendered = other.render(other.prepare(moved, "abcabc123123"))
    assert f"\necho {index}\n" in rendered.script and "FLUX_JOB_CC" not in rendered.script
    assert not any("FLUX" in w for w in rendered.warnings)

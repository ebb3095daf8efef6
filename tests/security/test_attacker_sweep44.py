"""Security sweep 44: the sites file's change note, the Flux array's own record of its tasks,
workflow site names, `diamond jobs --state` values, hostile reservation and QOS names, and
job output shown by the command line.

The note that the sites file changed (every listing of sites asks: the sidebar's poll, `GET
sites`, `%diamond sites`) read the file whole on the event loop: a sites file swapped for a
FIFO stopped the whole Jupyter server until something wrote to it, one swapped for a link to
/dev/zero read until memory ran out, and a huge one was held whole in memory to be hashed.
Now only a regular file is hashed, within a bound, its stat taken from the one file opened.

Tests marked `fault` failed before this sweep's fixes; the others are guards."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
import sweep_helpers
import yaml
from sweep_helpers import traced_memory
from test_flux_array_tasks import _cut_short, _env, _queued, _record, _site_fed, _submit
from test_flux_logs_words import flux_path  # noqa: F401 (a fixture)

from diamond_jupyter import sites_file_watch
from diamond_jupyter.dialects import get_commands
from diamond_jupyter.dialects.flux_commands import array_submit_script, parse_array_submit
from diamond_jupyter.dialects.flux_ids import flux_id_value
from diamond_jupyter.model import BadInput, JobState, SiteError, visible
from diamond_jupyter.sites_file_watch import SitesFileWatch
from diamond_jupyter.store import Store

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
user, shell, jp_server_config, rest = sweep_helpers.FACES_FIXTURES
OSC_CLIPBOARD = "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07"  # writes the terminal's clipboard
TITLE = "\x1b]0;pwned\x07"


# ---- (1) the sites file swapped under a running server --------------------------------------

class _LateWriter:
    """Opens the FIFO at `path` for writing (and closes it) `after_s` seconds on, which ends
    a read blocked on it: the test ends whether or not the server reads it."""

    def __init__(self, path: Path, after_s: float) -> None:
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(path, after_s), daemon=True)
        self.thread.start()

    def _run(self, path: Path, after_s: float) -> None:
        if self.stop.wait(after_s):
            return
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:  # no reader: nothing waits on it
            pass

    def close(self) -> None:
        self.stop.set()
        self.thread.join()


async def test_fault_a_sites_file_swapped_for_a_fifo_leaves_the_server_answering(rest,
                                                                               tmp_path):
    """A FIFO in the sites file's place: `GET sites` blocked the server's event loop (every
    request of every face) until something opened it for writing. Now the listing answers
    at once, saying the file changed, the sites as read kept."""
    sites = tmp_path / "sites.yaml"
    sites.unlink()
    os.mkfifo(sites)
    writer = _LateWriter(sites, 90)
    try:
        began = time.monotonic()
        code, reply = await rest("GET", "sites")
        took = time.monotonic() - began
    finally:
        writer.close()
    assert code == 200 and took < 45, (took, code, reply)
    assert f"the sites file {sites} changed" in reply["sites_file_changed"], reply
    assert [s["name"] for s in reply["sites"]] == ["here"]


KERNEL = textwrap.dedent("""\
    import os, sys
    from IPython.core.interactiveshell import InteractiveShell
    sh = InteractiveShell.instance()
    sh.run_line_magic("load_ext", "diamond_jupyter")
    sh.run_line_magic("diamond", "sites")
    sites = os.environ["DIAMOND_CONFIG"]
    os.unlink(sites)
    os.symlink(sys.argv[1], sites)
    print("listed:", sh.run_line_magic("diamond", "sites"), flush=True)
    """)


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/urandom"])
def test_fault_a_sites_file_linked_to_an_endless_device_is_not_read(user, target):
    """`%diamond sites` in a kernel after the file became a link to /dev/zero: the note's
    hash read the device until the kernel ran out of memory (here: a 1 GiB limit). Now the
    kernel lists its sites, saying the file changed."""
    env = {**user.env(user.sites), "DIAMOND_ENGINE": "local", "DIAMOND_NO_WIDGETS": "1",
           "NO_COLOR": "1"}

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    res = subprocess.run([sys.executable, "-c", KERNEL, target], capture_output=True,
                         text=True, cwd=user.root, env=env, timeout=180, preexec_fn=limited)
    assert res.returncode == 0 and "MemoryError" not in res.stderr, res.stderr[-2000:]
    assert "listed:" in res.stdout, res.stdout
    assert f"the sites file {user.sites} changed since this kernel read it" in res.stderr


def test_fault_a_huge_sites_file_is_not_held_in_memory(tmp_path):
    """A sites file swapped for a huge one (a sparse 64 MiB file here): read whole to be
    hashed, on the server's event loop. Now its stat alone says it changed."""
    sites = tmp_path / "sites.yaml"
    sites.write_text("sites: []\n")
    watch = SitesFileWatch.now(sites, "Jupyter server")
    with sites.open("r+b") as f:
        f.truncate(64 << 20)
    with traced_memory() as mem:
        note = watch.note()
    assert note is not None and "changed since this Jupyter server read it" in note
    assert mem.peak < 4 << 20, mem.peak


def test_a_sites_file_at_the_bound_is_hashed_and_saved_unchanged_is_not_said(tmp_path):
    """(guard) a file the size of the bound is still hashed: saved again with the same bytes
    it is not said changed; one byte changed, it is."""
    sites = tmp_path / "sites.yaml"
    sites.write_bytes(b"#" * sites_file_watch.MOST_HASHED)
    watch = SitesFileWatch.now(sites, "kernel")
    sites.write_bytes(sites.read_bytes())
    os.utime(sites, ns=(1, 1))
    assert watch.note() is None
    sites.write_bytes(b"#" * (sites_file_watch.MOST_HASHED - 1) + b"x")
    assert "changed" in (watch.note() or "")


def test_a_sites_file_changed_between_the_stat_and_the_read_is_said_as_it_is(tmp_path,
                                                                             monkeypatch):
    """(guard) the file edited, and edited back, between the watch's stat and its read: the
    note is of the bytes read (nothing changed), and a later edit is still seen."""
    sites = tmp_path / "sites.yaml"
    first = "sites:\n  - {name: a, transport: {kind: local}}\n"
    sites.write_text(first)
    watch = SitesFileWatch.now(sites, "kernel")
    sites.write_text(first + "# edited\n")
    real = sites_file_watch.file_stat

    def racing(path: Path) -> sites_file_watch.Stat | None:
        stat = real(path)
        sites.write_text(first)  # edited back just after the stat
        return stat

    monkeypatch.setattr(sites_file_watch, "file_stat", racing)
    assert watch.note() is None
    monkeypatch.setattr(sites_file_watch, "file_stat", real)
    sites.write_text(first + "# edited again, longer\n")
    assert "changed" in (watch.note() or "")


async def test_a_sites_file_swapped_for_a_link_to_another_file_shows_nothing_of_it(
        rest, tmp_path):
    """(guard) the file swapped for a link to another user's sites file (a token in it):
    the listing keeps the sites read, the note names this file, nothing of the other's."""
    theirs = tmp_path / "theirs.yaml"
    theirs.write_text(yaml.safe_dump({"sites": [{
        "name": "theirs", "transport": {"kind": "local"},
        "preamble": "export API_TOKEN=hunter2-secret"}]}))
    sites = tmp_path / "sites.yaml"
    sites.unlink()
    sites.symlink_to(theirs)
    code, reply = await rest("GET", "sites")
    text = json.dumps(reply)
    assert code == 200 and [s["name"] for s in reply["sites"]] == ["here"], reply
    assert "hunter2" not in text and str(theirs) not in text, text
    assert f"the sites file {sites} changed" in reply["sites_file_changed"]


async def test_a_sites_file_swapped_for_a_directory_is_said_changed(rest, tmp_path):
    """(guard) a directory in its place: said changed, no 500."""
    sites = tmp_path / "sites.yaml"
    sites.unlink()
    sites.mkdir()
    code, reply = await rest("GET", "state")
    assert code == 200 and "changed" in reply["sites_file_changed"], reply


# ---- (2) the Flux array's record of its tasks, written by the job ----------------------------

@pytest.mark.usefixtures("flux_path")
async def test_a_record_line_of_control_characters_names_no_task(tmp_path):
    """(guard) a job writing `task 3 <id + escapes>` and `task 4 <id>;id` into its array's
    record: neither is read as a task's id; both tasks are queued, each once."""
    fed = _site_fed(tmp_path)
    try:
        await _cut_short(fed, tmp_path, 3)
        with _record(tmp_path).open("a") as f:
            f.write(f"task 3 f2Jc8{TITLE}\ntask\x0b4\x0bf1;id\ntask 4 $(id)\n")
        sub = await _submit(fed, "1-4%2", "abcabc123123")
    finally:
        await fed.close()
    assert [_env(j) for j in _queued(tmp_path)] == ["1", "2", "3", "4"]
    assert all(flux_id_value(v) is not None for v in sub.tasks.values()), sub.tasks


@pytest.mark.usefixtures("flux_path")
async def test_a_huge_record_is_read_by_its_tail_alone(tmp_path):
    """(guard) a job filling its array's record with 48 MiB of one line: the resume reads
    its tail within the bound, and queues the tasks not queued, each once."""
    fed = _site_fed(tmp_path)
    try:
        await _cut_short(fed, tmp_path, 3)
        record = _record(tmp_path)
        kept = record.read_text()
        with record.open("w") as f:
            f.write("x" * (48 << 20) + "\n" + kept)
        sub = await _submit(fed, "1-4%2", "abcabc123123")
    finally:
        await fed.close()
    assert [_env(j) for j in _queued(tmp_path)] == ["1", "2", "3", "4"]
    assert sorted(sub.tasks) == ["1", "2", "3", "4"]


@pytest.mark.usefixtures("flux_path")
async def test_a_record_swapped_for_a_link_is_refused_and_nothing_is_queued(tmp_path):
    """(guard) the record swapped for a link to a file of the user's (the resume appends
    to the record): refused as a link, the file untouched, no task queued twice."""
    fed = _site_fed(tmp_path)
    precious = tmp_path / "precious.txt"
    precious.write_text("the user's own notes\n")
    try:
        await _cut_short(fed, tmp_path, 3)
        record = _record(tmp_path)
        record.unlink()
        record.symlink_to(precious)
        with pytest.raises(SiteError, match="symbolic link"):
            await _submit(fed, "1-4%2", "abcabc123123")
    finally:
        await fed.close()
    assert precious.read_text() == "the user's own notes\n"
    assert [_env(j) for j in _queued(tmp_path)] == ["1", "2"]


@pytest.mark.parametrize("forged", ["f1;id", "f1 --uid=0", "$(id)", "../f1", f"f1{TITLE}"])
def test_a_forged_id_never_reaches_the_resume_script(forged):
    """(guard) an id no flux id spelling reads, as a record or listing might give it: the
    script that queues the rest is refused, never written with it."""
    assert parse_array_submit(f"task 1 {forged}\n", [1, 2]) == {}
    with pytest.raises(BadInput, match="is not one of its tasks' ids"):
        array_submit_script([1, 2], None, {1: forged}, "'j.sh'", record="'r'")


def test_record_lines_of_indexes_past_the_array_or_past_any_number_are_not_read():
    """(guard) `task 99999999999999999999 ID` or an index of another array: not a task."""
    text = "task 99999999999999999999 f2Jc8\ntask 7 f2Jc9\ntask \u0663 f2Jc7\ntask 2 f2Jc6\n"
    assert parse_array_submit(text, [1, 2]) == {2: "f2Jc6"}


# ---- (3) workflow site names, job states and hostile names on the faces ----------------------

def test_a_workflow_site_named_with_escapes_is_refused_shown_not_acted_on(user):
    """(guard) a crafted workflow file whose step's site is an escape sequence: refused
    naming it written out, nothing submitted."""
    wf = user.write("w.yaml", "name: w\nsteps:\n  - {name: a, site: \"gh\\e]52;c;aGk=\\aost\","
                              " script: \"#!/bin/bash\\necho hi\\n\"}\n")
    last = sweep_helpers.cli_refusal(user.run("workflow", "run", str(wf)),
                                     "unknown site 'gh\\x1b]52;c;aGk=\\x07ost'")
    assert "\x1b" not in last and sweep_helpers.sbatch_calls(user) == []


@pytest.mark.parametrize("given", [f"running{TITLE}", f"running,{OSC_CLIPBOARD}",
                                   "running\u202egninnur"])
def test_a_jobs_state_of_escapes_is_refused_written_out(user, given):
    """(guard) `diamond jobs --state` with a terminal's escapes or a reordering mark: exit
    2, the value written out, never acted on."""
    res = user.run("jobs", "--state", given, code=2)
    assert "\x1b" not in res.stderr and "\u202e" not in res.stderr, repr(res.stderr)
    assert "unknown state" in res.stderr.splitlines()[-1], res.stderr


async def test_a_rest_state_filter_of_thousands_of_states_answers(rest):
    """(guard) `GET jobs?state=running,running,...` as long as a request line may be: one
    list, no SQL variable limit reached."""
    code, reply = await rest("GET", "jobs?state=" + ",".join(["running"] * 7000))
    assert code == 200 and reply["jobs"] == [], (code, str(reply)[:300])


def test_a_hostile_reservation_and_qos_name_are_read_as_text():
    """(guard) scontrol's reservation names and users with escapes: kept as text (the
    faces write them out), not split into other fields."""
    line = (f"ReservationName=maint{TITLE} StartTime=2026-12-06T10:00:00 "
            f"EndTime=2026-12-06T12:00:00 Nodes=n[1-2] Users=alice,{OSC_CLIPBOARD} "
            "Flags=MAINT State=INACTIVE")
    [r] = get_commands("slurm").parse_reservations(line)
    assert r.name == f"maint{TITLE}" and r.nodes == ["n[1-2]"], r
    assert "\x1b" not in visible(r.name) and "\\x1b]0;pwned\\x07" in visible(r.name)


@pytest.mark.parametrize("name", [f"big{TITLE}", f"q{OSC_CLIPBOARD}"])
def test_a_reservation_or_qos_a_script_names_is_refused_before_the_explain(user, name):
    """(guard) a script naming a reservation or QOS with escapes: refused naming the
    directive, written out; nothing placed or submitted."""
    for directive in (f"--reservation={name}", f"--qos={name}"):
        script = user.write("r.sh", f"#!/bin/bash\n#SBATCH {directive}\n#SBATCH -n 1\n"
                                    "echo hi\n")
        res = user.run("place", str(script), "--explain", code=2)
        assert "\x1b" not in res.stderr and "\x07" not in res.stderr, repr(res.stderr)
        assert res.stdout == "" and sweep_helpers.sbatch_calls(user) == []


def test_a_jobs_escapes_in_its_name_and_reason_are_written_out_by_jobs_and_status(user):
    """(guard) a job whose name and reason (a hostile site's words) hold a title and a
    clipboard write: `diamond jobs` and `diamond status` write them out."""
    store = Store(user.store_path)
    job = user.job("alpha:77", JobState.PENDING)
    store.upsert_job(job.model_copy(update={"name": f"sim{TITLE}",
                                            "reason": f"Reservation{OSC_CLIPBOARD}"}))
    store.close()
    for args in (("jobs",), ("status", "alpha:77")):
        out = user.run(*args, code=0).stdout
        assert "\x1b" not in out and "\x07" not in out and "\\x1b]0;pwned" in out, repr(out)


def test_no_state_value_is_read_as_an_option_of_the_store(user):
    """(guard) a state value that looks like SQL or an option lists nothing and is refused."""
    for given in ("running' OR '1'='1", "--limit=1", "RUNNING;DROP TABLE jobs"):
        res = user.run("jobs", f"--state={given}", code=2)
        assert "unknown state" in res.stderr, res.stderr
    user.job("alpha:5", JobState.RUNNING)
    assert [j["id"] for j in json.loads(user.run("jobs", "--json", code=0).stdout)] == \
        ["alpha:5"]


def test_job_output_on_a_real_terminal_changes_nothing_but_colours(user):
    """(guard) `diamond logs` on a pseudo-terminal of a job's output holding a clipboard
    write, a one-byte CSI, a DCS query and concealed text: each written out or dropped,
    the colour kept and reset after; piped, the bytes as the job wrote them."""
    out = user.write("out.txt", f"ok \x1b[31mred{OSC_CLIPBOARD} \x9b2J \x1bP+q\x1b\\ "
                                "done\nfake: \x1b[8mhidden\n")
    user.job("alpha:77", JobState.COMPLETED, stdout_path=str(out), workdir=str(user.root))
    code, shown = sweep_helpers.on_a_terminal(user, "logs", "alpha:77")
    assert code == 0 and "\x1b]" not in shown and "\x9b" not in shown, repr(shown)
    assert "\x1bP" not in shown and "\x1b[8m" not in shown, repr(shown)
    assert "\x1b[31mred\\x1b]52;c;" in shown and shown.endswith("\x1b[0m"), repr(shown)
    assert user.run("logs", "alpha:77", code=0).stdout == out.read_text()


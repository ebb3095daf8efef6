"""Fixtures and helpers the sweep files share: the faces' (tests/test_adversarial_inputs*.py,
test_faces_*.py, test_newuser2.py, the REST body tests), the sites files'
(test_config_unseen*.py), the workflow files' (test_workflow_unseen*.py), the SWF logs'
(test_trace_unseen*.py, test_swf_unseen*.py), and counted calls and memory (`noted_calls`,
`traced_memory`).

A module takes a fixture by binding it under the name its tests ask for, e.g.
`jp_server_config = sweep_helpers.one_local_site_server`: pytest registers a fixture under
the module attribute's name, while importing the fixture by the name its tests take would
have the linter call every such test argument a redefinition. The fixtures a fixture here
asks for (`user`, `data_dir`, `jp_base_url` ...) are resolved where the test is."""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import pty
import subprocess
import sys
import textwrap
import tracemalloc
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from diamond_jupyter.cli import main as cli
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput, Job, JobState
from diamond_jupyter.store import Store
from diamond_jupyter.workflow.model import Workflow, load_workflow

if TYPE_CHECKING:
    from test_cli_newuser import NewUser

    from diamond_jupyter.capabilities import SiteCapabilities
    from diamond_jupyter.needs import Needs
    from diamond_jupyter.testbed.clusters import ClusterDef
    from diamond_jupyter.testbed.trace import SwfLog
    from diamond_jupyter.transports.ssh_auth import HostSpec


def fake_slurm_commands(fake: Path) -> dict[str, str]:
    """A site's `commands`: test_cli_newuser's fake Slurm, written in the directory `fake`
    (it records each call in `fake/calls` and answers sbatch with job 4242), so that a site
    without the test bed never runs the machine's own Slurm."""
    from test_cli_newuser import FAKE_SLURM, SLURM

    fake.mkdir(exist_ok=True)
    (fake / "slurm").write_text(FAKE_SLURM.format(dir=fake))
    (fake / "slurm").chmod(0o755)
    for prog in SLURM:
        if not (fake / prog).exists():
            (fake / prog).symlink_to(fake / "slurm")
    return {prog: str(fake / prog) for prog in SLURM}


@pytest.fixture
def one_local_site_server(tmp_path, data_dir):
    """A `jp_server_config`: the diamond extension on one local site, `here`, whose Slurm
    commands are a fake (`fake_slurm_commands`), with its work directory and a store in
    tmp_path."""
    from server_conftest import diamond_config

    sites = here_sites_file(tmp_path, tmp_path / "here-work")
    return diamond_config(str(sites), str(tmp_path / "store.sqlite3"))


def here_sites_file(tmp_path: Path, workdir: Path) -> Path:
    """tmp_path/sites.yaml of one local site, `here`, working in `workdir`, whose Slurm
    commands are a fake (`fake_slurm_commands`) in tmp_path/here-slurm."""
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [{
        "name": "here", "transport": {"kind": "local"}, "workdir": str(workdir),
        "commands": fake_slurm_commands(tmp_path / "here-slurm")}]}))
    return sites


@pytest.fixture
async def here_engine(tmp_path) -> AsyncIterator[Federation]:
    """An `engine`: a started engine in this process on `here_sites_file`'s site (its work
    directory tmp_path/work), its store in tmp_path, that never polls on its own."""
    fed = Federation(here_sites_file(tmp_path, tmp_path / "work"),
                     store=Store(tmp_path / "store.sqlite3"), poll_interval_s=3600,
                     min_poll_s=3600)
    await fed.start(recover=False)
    yield fed
    await fed.close()


def here_sbatch_calls(tmp_path: Path) -> list[str]:
    """The sbatch command lines `here` (of `here_sites_file`) was given (none yet: [])."""
    return fake_sbatch_calls(tmp_path / "here-slurm")


def key_files(d: Path) -> Path:
    """The directory `d` made ready for a sites file beside an SSH key (0600, not parsed
    before connecting) and an empty known_hosts."""
    (d / "id_ed25519").write_text("not parsed before connecting\n")
    (d / "id_ed25519").chmod(0o600)
    (d / "known_hosts").write_text("")
    return d


@pytest.fixture
def key_dir(tmp_path: Path) -> Path:
    """The config sweeps' (test_config_unseen*.py) `d`: tmp_path with `key_files`."""
    return key_files(tmp_path)


HOME = os.path.expanduser("~")  # where the config sweeps' `~` paths land


def looked_up(tmp_path: Path, text: str, alias: str = "hpc", **given: Any) -> HostSpec:
    """What ssh_config `text` (written to tmp_path/ssh_config) says of host `alias`, the
    sites file's own port or user `given` as well."""
    from diamond_jupyter.transports.ssh_auth import load_ssh_config, resolve_host

    (tmp_path / "ssh_config").write_text(text)
    return resolve_host(load_ssh_config(str(tmp_path / "ssh_config")), alias, **given)


def ssh_site(d: Path, lines: str, site: str = "") -> str:
    """A sites file of one SSH site, `a`, checking host keys against d/known_hosts without
    an agent: `lines` are its transport's (YAML, one a line), `site` the site's own (YAML
    lines at the site's indentation, ending in a newline)."""
    return (f"sites:\n  - name: a\n{site}    transport:\n      known_hosts: {d}/known_hosts\n"
            "      use_agent: false\n"
            + "".join(f"      {ln}\n" for ln in lines.strip("\n").split("\n")))


@pytest.fixture
def rest_caller(http_server_client, jp_base_url, jp_auth_header
                ) -> Callable[..., Awaitable[tuple[int, Any]]]:
    """`await rest(METHOD, "jobs/...", body)` on the extension's API (a path starting with
    `/`, e.g. "/diamond/api", is taken from the server's base URL), with the token unless
    `auth=False` and any other `headers`, any method with or without a body: the answer's
    code and its body, parsed as JSON when it is JSON."""
    async def call(method: str, path: str, body: bytes | None = None, *,
                   headers: dict[str, str] | None = None, auth: bool = True
                   ) -> tuple[int, Any]:
        resp = await http_server_client.fetch(
            jp_base_url.rstrip("/") + (path if path.startswith("/") else "/diamond/api/" + path),
            method=method, body=body, headers={**(jp_auth_header if auth else {}),
                                               **(headers or {})},
            raise_error=False, allow_nonstandard_methods=True)
        text = resp.body.decode()
        try:
            return resp.code, json.loads(text)
        except ValueError:
            return resp.code, text
    return call


@pytest.fixture
def new_user(tmp_path) -> NewUser:
    """A `user`: test_cli_newuser's new user, with a fake Slurm site `alpha`."""
    from test_cli_newuser import NewUser

    return NewUser(tmp_path)


@pytest.fixture
def magics_shell(user, monkeypatch) -> Iterator[Any]:
    """A `shell`: an IPython shell with the magics loaded, its engine in-process on the
    user's sites file, data directory and home."""
    monkeypatch.chdir(user.root)
    yield from in_process_shell(monkeypatch, user.sites, user.root / "data", user.home)


def in_process_shell(monkeypatch: pytest.MonkeyPatch, sites: Path | str, data: Path,
                     home: Path, **env: str) -> Iterator[Any]:
    """An IPython shell with the magics loaded, its engine in this process on the sites file
    `sites`, the data directory `data` and the home `home` (and `env`, further variables);
    the extension unloaded and the shell cleared after."""
    from IPython.core.interactiveshell import InteractiveShell

    for name, value in {"DIAMOND_CONFIG": str(sites), "DIAMOND_DATA_DIR": str(data),
                        "DIAMOND_ENGINE": "local", "DIAMOND_NO_WIDGETS": "1",
                        "HOME": str(home), **env}.items():
        monkeypatch.setenv(name, value)
    sh = InteractiveShell.instance()
    sh.run_line_magic("load_ext", "diamond_jupyter")
    yield sh
    sh.run_line_magic("unload_ext", "diamond_jupyter")
    InteractiveShell.clear_instance()


def fake_sbatch_calls(fake: Path) -> list[str]:
    """The sbatch command lines the fake Slurm in `fake` (`fake_slurm_commands`) was given
    (none yet: [])."""
    calls = fake / "calls"
    return [c for c in calls.read_text().splitlines() if c.startswith("sbatch")] \
        if calls.exists() else []


def sbatch_calls(user: NewUser) -> list[str]:
    """The sbatch command lines the user's fake Slurm site was given (none yet: [])."""
    return fake_sbatch_calls(user.fake)


def submitted_script(user: NewUser) -> str:
    """The one script the user's fake Slurm site was given."""
    [call] = sbatch_calls(user)
    return Path(call.split()[-1]).read_text()


def cli_refusal(res: subprocess.CompletedProcess[str], *said: str) -> str:
    """The refusal a `diamond` command ended with: exit 2, nothing on stdout, the last line
    on stderr holding each of `said` (that line is returned)."""
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    assert res.stdout == ""
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("diamond"), res.stderr
    for s in said:
        assert s in last, res.stderr
    return last


def on_a_terminal(user: NewUser, *args: str) -> tuple[int, str]:
    """`diamond ARGS` on the user's sites file with its stdout a pseudo-terminal (stderr
    piped): its exit code and what the terminal was sent (its newlines as the terminal's
    \\r\\n, turned back to \\n)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "diamond_jupyter.cli", *args],
                            stdout=slave, stderr=subprocess.DEVNULL, cwd=user.root,
                            env=user.env(user.sites))
    os.close(slave)
    sent = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the last writer closed the terminal
            break
        if not chunk:
            break
        sent += chunk
    os.close(master)
    code = proc.wait(timeout=120)
    return code, sent.decode("utf-8", "replace").replace("\r\n", "\n")


def assert_magic_refused(shell: Any, user: NewUser, capsys: pytest.CaptureFixture[str],
                         line: str, cell: str | None, said: str) -> None:
    """`%%diamond LINE` with CELL (`%diamond LINE` when CELL is None) returns nothing, says
    `said` on stderr without a traceback, and submits nothing to the user's site."""
    assert (shell.run_cell_magic("diamond", line, cell) if cell is not None
            else shell.run_line_magic("diamond", line)) is None
    err = capsys.readouterr().err
    assert said in err, err
    assert "Traceback" not in err
    assert sbatch_calls(user) == []


async def rest_refused(rest: Callable[..., Awaitable[tuple[int, Any]]],
                       body: dict[str, Any] | bytes, said: str, *, whole: bool = False) -> str:
    """POST `body` (a dict is sent as JSON) to the jobs API (`rest_caller`) is a 400 bad-input
    whose message holds `said` (is `said` when `whole`), and no job is made: the message."""
    code, reply = await rest("POST", "jobs", body if isinstance(body, bytes)
                             else json.dumps(body).encode(),
                             headers={"Content-Type": "application/json"})
    assert code == 400 and reply["reason"] == "bad-input", (code, reply)
    assert reply["message"] == said if whole else said in reply["message"], reply
    assert (await rest("GET", "jobs"))[1]["jobs"] == []
    return reply["message"]


def here_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """A jobs POST body for the `here` site: `spec` with the faces' script (`FACES_SCRIPT`)."""
    return {"spec": {"script": FACES_SCRIPT, **spec}, "site": "here"}


async def mcp_refusal(user: NewUser, tool: str, args: dict[str, Any]) -> str:
    """The error an MCP tool call on the user's sites file is refused with (it must be)."""
    from mcp.server.mcpserver.exceptions import ToolError

    from diamond_jupyter.mcp_server import build_server

    server = build_server(str(user.sites), root=user.root)  # refused before its engine starts
    try:
        await server.call_tool(tool, args)
    except ToolError as e:
        return str(e)
    raise AssertionError(f"{tool} ran with {sorted(args)}")  # names: a value may be megabytes


def as_another_user(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on, files made so far belong to 'another user' (the process's uid moves)."""
    real = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: real + 1)


class FakeTty:
    """A stream that says it is a terminal and keeps what is written to it."""

    def __init__(self) -> None:
        self.text = ""

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> None:
        self.text += text


def logs_answer(monkeypatch: pytest.MonkeyPatch, logs: dict[str, str]) -> None:
    """From here on `diamond logs` (cli.jobs.cmd_logs) runs on a stand-in engine that
    answers `logs` for any job, a COMPLETED one; no site or store is asked."""
    from diamond_jupyter.cli import jobs as cli_jobs

    class LogsOnly:
        async def logs(self, job_id: str, *, lines: int) -> dict[str, str]:
            return logs

        def job(self, job_id: str) -> Job:
            return Job(id=job_id, site=job_id.partition(":")[0],
                       state=JobState.COMPLETED)

    async def with_logs_only(args: Any, fn: Callable[[Any], Awaitable[Any]], **kw: Any) -> Any:
        return await fn(LogsOnly())
    monkeypatch.setattr(cli_jobs, "with_fed", with_logs_only)


# -- job bodies' software needs ----------------------------------------------------------

@dataclass
class SoftwareCase:
    """A needs sweep's case: a job body and what is read of it; a module adds its own."""

    name: str
    body: str
    checked: list[str] = field(default_factory=list)  # software held against sites
    unchecked: list[str] = field(default_factory=list)  # read, not held against sites
    can: set[str] = field(default_factory=set)  # sites that can run it ("unknown" always)
    why: dict[str, str] = field(default_factory=dict)  # site -> words of its reason


def assert_site_verdicts(needs: Needs, sites: dict[str, SiteCapabilities], can: set[str],
                         why: dict[str, str]) -> None:
    """A needs sweep's (test_software_unseen*.py, test_needs_unseen.py) verdicts on `needs`:
    nothing is held against the site `unknown` (nothing is known of it), the sites in `can`
    and no others run it, and each site in `why` gives a reason holding those words."""
    from diamond_jupyter.software import needs_reasons

    reasons = {site: needs_reasons(needs, caps) for site, caps in sites.items()}
    assert reasons["unknown"] == []
    assert {s for s, r in reasons.items() if not r} == can | {"unknown"}, reasons
    for site, words in why.items():
        assert any(words in r for r in reasons[site]), (site, reasons[site])


@dataclass
class EnvironmentCase(SoftwareCase):
    """A software-environment sweep's case (test_software_unseen.py, ..._unseen2.py): what
    else is read of the body and what its loads become on a site."""

    notes: list[str] = field(default_factory=list)  # words some note must hold
    no_notes: list[str] = field(default_factory=list)  # words no note may hold
    rewritten: dict[str, str] = field(default_factory=dict)  # site -> the body respelled
    alternatives: dict[str, list[str]] = field(default_factory=dict)  # need -> fallbacks
    roles: dict[str, str] = field(default_factory=dict)  # need -> "conda" / "mamba"
    container: tuple[str, str | None] | None = None  # image, runtime
    mpi: str | None = None
    vendor: str | None = None  # the GPU vendor the body needs


def assert_environment_case(case: EnvironmentCase, needs: Needs,
                            sites: dict[str, SiteCapabilities]) -> None:
    """`needs`, read of `case.body`, are what the case says, each site's verdict on them too,
    and the body's loads are respelled for a site as `case.rewritten` says."""
    from diamond_jupyter.software import rewrite_modules

    assert [s.full for s in needs.software if not s.unchecked] == case.checked
    assert [s.full for s in needs.software if s.unchecked] == case.unchecked
    assert {s.full: s.alternatives for s in needs.software if s.alternatives} == \
        case.alternatives
    assert {s.full: s.role for s in needs.software if s.role} == case.roles
    c = needs.container
    assert (None if c is None else (c.image, c.runtime)) == case.container
    assert needs.mpi == case.mpi
    assert needs.gpu_vendor == case.vendor
    for words in case.notes:
        assert any(words in n for n in needs.notes), (words, needs.notes)
    for words in case.no_notes:
        assert not any(words in n for n in needs.notes), (words, needs.notes)
    assert_site_verdicts(needs, sites, case.can, case.why)
    for site, body in case.rewritten.items():
        assert rewrite_modules(case.body, sites[site])[0] == body, site


# -- workflow files ---------------------------------------------------------------------------

SITES = ["alpha", "beta", "gamma"]  # the sites a sweep's workflow files may name


def counting_sbatch(tmp_path: Path) -> Path:
    """tmp_path/sbatch: a fake sbatch that answers 501, 502 ... (its count kept in
    tmp_path/n), as a scheduler gives each job a new number."""
    sbatch = tmp_path / "sbatch"
    sbatch.write_text(f"#!/bin/sh\nn=$(cat {tmp_path}/n 2>/dev/null || echo 500)\n"
                      f"echo $((n + 1)) > {tmp_path}/n\necho $((n + 1))\n")
    sbatch.chmod(0o755)
    return sbatch


def cli_sites_counting_sbatch(tmp_path: Path) -> tuple[Path, Path]:
    """A sites file of SITES (local, a fake sbatch that records each call, its store in
    `tmp_path`) and the file the calls are recorded in (none: nothing was submitted)."""
    calls = tmp_path / "sbatch-calls"
    sbatch = tmp_path / "sbatch"
    sbatch.write_text(f"#!/bin/sh\necho called >> {calls}\necho 501\n")
    sbatch.chmod(0o755)
    cfg = tmp_path / "sites.yaml"
    cfg.write_text("sites:\n" + "".join(
        f"  - {{name: {n}, transport: {{kind: local}}, workdir: '{tmp_path / n}', "
        f"commands: {{sbatch: '{sbatch}'}}}}\n" for n in SITES)
        + f"store: '{tmp_path / 's.sqlite'}'\n")
    return cfg, calls


def load(text: str) -> Workflow:
    """A workflow file's text (dedented) read against SITES."""
    return load_workflow(textwrap.dedent(text), sites=SITES)


def refused(text: str | Path) -> str:
    """The one-line reason a workflow file (text, dedented, or Path) is refused."""
    with pytest.raises(BadInput) as e:
        load_workflow(textwrap.dedent(text) if isinstance(text, str) else text, sites=SITES)
    msg = str(e.value)
    assert msg.strip() and "\n" not in msg, msg
    return msg


def independent_steps(count: int, *, script: str | None = None, site: str = "alpha",
                      name: str = "wide") -> str:
    """A workflow's YAML text of `count` steps needing none other, s00, s01 ... (two digits
    at least), each pinned to `site` and running `script` (as written inside a double-quoted
    YAML string; default test_workflow_unrunnable's PLAIN, a 5-minute Slurm job)."""
    if script is None:
        from test_workflow_unrunnable import PLAIN

        script = PLAIN
    return f"name: {name}\nsteps:\n" + "".join(
        f"  - {{name: s{i:02d}, site: {site}, script: \"{script}\"}}\n" for i in range(count))


async def run_independent_steps(fed: Any, steps: int) -> None:
    """`independent_steps(steps)` run as a workflow by test_workflow_unrunnable's `_fed`
    engine `fed`: every step has its job, and its sbatch was called once a step."""
    view = await fed.run_workflow(independent_steps(steps), origin={"face": "test"})
    assert all(s.job for s in view.steps)
    assert fed.sbatch_calls.read_text().count("called") == steps


@pytest.fixture
def one_unreachable_site(tmp_path) -> Path:
    """A `cfg`: a sites file of one site, alpha, at a TEST-NET address (nothing answers
    there), and a store in tmp_path."""
    p = tmp_path / "sites.yaml"
    p.write_text("sites:\n  - name: alpha\n    transport: {kind: ssh, host: 192.0.2.1}\n"
                 f"store: {tmp_path / 's.sqlite'}\n")
    return p


@pytest.fixture
def two_unreachable_sites(tmp_path) -> Path:
    """A `cfg`: a sites file of two sites, alpha and beta, at TEST-NET addresses (nothing
    answers there), and a store in tmp_path."""
    p = tmp_path / "sites.yaml"
    p.write_text("sites:\n  - name: alpha\n    transport: {kind: ssh, host: 192.0.2.1}\n"
                 "  - name: beta\n    transport: {kind: ssh, host: 192.0.2.2}\n"
                 f"store: {tmp_path / 's.sqlite'}\n")
    return p


# -- calls counted ---------------------------------------------------------------------------

def noted_calls(monkeypatch: pytest.MonkeyPatch, owner: Any, *names: str,
                note: Callable[..., Any]) -> list[Any]:
    """From here on, each call of `owner.NAME` (each of `names`, a function or a coroutine
    function) is made as before, `note(*its arguments)` first added to the list returned."""
    noted: list[Any] = []

    def noting(real: Callable[..., Any]) -> Callable[..., Any]:
        if inspect.iscoroutinefunction(real):
            async def noted_async(*args: Any, **kw: Any) -> Any:
                noted.append(note(*args, **kw))
                return await real(*args, **kw)
            return noted_async

        def noted_call(*args: Any, **kw: Any) -> Any:
            noted.append(note(*args, **kw))
            return real(*args, **kw)
        return noted_call
    for name in names:
        monkeypatch.setattr(owner, name, noting(getattr(owner, name)))
    return noted


# -- memory ----------------------------------------------------------------------------------

@dataclass
class TracedMemory:
    """What `traced_memory` measured, set when its block ends without an error."""

    held: int = 0  # bytes still allocated at the block's end
    peak: int = 0  # the most allocated at once during the block


@contextmanager
def traced_memory() -> Iterator[TracedMemory]:
    """Python's allocations traced (tracemalloc) over the block: `with traced_memory() as
    mem: ...`, then `mem.held` and `mem.peak`; the tracing stops when the block ends, by an
    error too."""
    measured = TracedMemory()
    tracemalloc.start()
    try:
        yield measured
        measured.held, measured.peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()


# -- SWF logs ---------------------------------------------------------------------------------

def swf_line(number: int, submit: float, *, wait: float = 0, run: float = 600,
             procs: int = 8, alloc: int | None = None, req: float = 900, status: int = 1,
             users: int = 4, preceding: int = -1, think: float = -1) -> str:
    """One SWF job line (18 fields): `procs` requested, `alloc` allocated (else `procs`),
    submitted by one of `users` users in turn (the job's number decides)."""
    held = procs if alloc is None else alloc
    return (f"{number} {submit:g} {wait:g} {run:g} {held} -1 -1 {procs} {req:g} -1 {status} "
            f"{number % users + 1} 1 -1 1 1 {preceding} {think:g}\n")


def write_swf(tmp_path: Path, name: str, text: str) -> Path:
    """`text` as the log `NAME.swf` in tmp_path."""
    path = tmp_path / f"{name}.swf"
    path.write_text(text)
    return path


def save_swf(path: Path, text: str | bytes) -> Path:
    """`text` (bytes for a gzip log) as the log at `path`."""
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def dry_run_plan(capsys: pytest.CaptureFixture[str], path: Path, *more: str) -> dict:
    """`diamond testbed load --trace PATH --site alpha --dry-run --json MORE`: its one plan."""
    assert cli(["testbed", "load", "--trace", str(path), "--site", "alpha", "--dry-run",
                "--json", *more]) == 0, capsys.readouterr().err
    [trace] = json.loads(capsys.readouterr().out)["traces"]
    return trace


def load_refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """`diamond testbed load ARGS --dry-run`: exit 2 and its one-line reason."""
    assert cli(["testbed", "load", *args, "--dry-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    return err


def whole_window(log: SwfLog, scale: float = 60.0) -> float:
    """The duration (real seconds) of a window from the log's first submission past its last,
    the log's time divided by SCALE."""
    return (log.span[1] - log.span[0]) / scale + 1


def swf_rows(path: Path) -> list[list[float]]:
    """The job lines' fields as numbers, read here without the reader under test."""
    return [[float(x) for x in line.split()] for line in path.read_text().splitlines()
            if line.strip() and not line.startswith(";")]


def partition_limits(site: ClusterDef) -> dict[str | None, int]:
    """A test-bed site's partitions (None: the default) -> each one's time limit in minutes."""
    from diamond_jupyter.dialects.slurm_script import parse_slurm_time

    return {None if p.default else p.name: parse_slurm_time(p.max_time) // 60
            for p in site.partitions}


def assert_regenerated(fixtures: Path, logs: list[Path], tmp_path: Path) -> None:
    """The sweep's `fixtures/make_fixtures.py`, run to write into tmp_path, writes each of
    `logs` (its fixtures) byte for byte."""
    spec = importlib.util.spec_from_file_location(f"{fixtures.name}_make",
                                                  fixtures / "make_fixtures.py")
    make = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make)
    make.HERE = tmp_path
    make.main()
    for p in logs:
        assert (tmp_path / p.name).read_bytes() == p.read_bytes(), p.name


def fake_load_site(monkeypatch: pytest.MonkeyPatch, name: str, scheduler: str,
                   answer: Callable[[list[str]], Any]) -> None:
    """`testbed load`'s one site, `name`, running `scheduler`: each command it sends is
    answered by `answer(argv)` (exit_status, stdout and stderr); no sites file is read and
    no transport opened."""
    class FakeTransport:
        async def run(self, argv: list[str], **kw: Any) -> Any:
            return answer(argv)

        async def close(self) -> None:
            pass

    site = SimpleNamespace(name=name, scheduler=scheduler, transport=None)
    monkeypatch.setattr("diamond_jupyter.config.load_config",
                        lambda path: SimpleNamespace(sites=[site]))
    monkeypatch.setattr("diamond_jupyter.transports.make_transport",
                        lambda transport, site: FakeTransport())


def store_files(folder: Path) -> bytes:
    """All a store at `folder`/s.sqlite3 wrote to disk: its database, WAL and shared memory
    files, one after the other."""
    return b"".join(p.read_bytes() for p in folder.glob("s.sqlite3*") if p.is_file())


def assert_script_secret_not_stored(folder: Path, script: str, secret: str) -> None:
    """A job whose script holds `script` (then `echo done`), recorded in a store at
    `folder`: `secret` is neither in the script the store gives back, which keeps the rest
    and marks what it hid (***), nor anywhere in the store's files."""
    from diamond_jupyter.model import JobSpec
    from diamond_jupyter.store import Store

    store = Store(folder / "s.sqlite3")
    job = store.record_intent("alpha", "tok-secret", JobSpec(
        script="#!/bin/bash\n" + script + "echo done\n", name="leaky"))
    shown = store.get_job(job.id).spec.script
    assert secret not in shown and "echo done" in shown and "***" in shown
    store.close()
    assert secret.encode() not in store_files(folder)


def replay_number(name: str) -> int:
    """The log's job number in a replayed job's name: trace-arrive-17.2 -> 17."""
    return int(name.split("-", 2)[2].split(".")[0])


def sound_replays(log: Any, site: str, ran: set[int]) -> Iterator[Any]:
    """The replays of `log` on the test-bed site `site` drawn with seeds 1-3 (600 s windows,
    scale 60), each checked for what every replay is: arrivals drawn
    from the log, one name a job, and each job one that `ran` in the log, fitting the site's
    nodes and CPUs and its partition's time limit."""
    from diamond_jupyter.testbed.clusters import cluster
    from diamond_jupyter.testbed.trace import plan_replay

    c = cluster(site)
    limits = partition_limits(c)
    for seed in (1, 2, 3):
        plan = plan_replay(log, c, seed=seed, duration_s=600, scale=60)
        assert plan.arrivals_in_log > 0, plan.summary()
        names = [j.name for j in plan.jobs]
        assert len(names) == len(set(names)), f"two replayed jobs of one name: {names}"
        for j in plan.jobs:
            assert replay_number(j.name) in ran, j
            assert 1 <= j.nodes <= c.nodes and 1 <= j.cpus_per_node <= c.cpus, j
            assert j.partition in limits and 1 <= j.walltime_min <= limits[j.partition], j
        yield plan


# The faces sweeps' (test_faces_unseen*.py, test_adversarial_inputs19.py) fixtures, named by
# the module taking them:
# `user, shell, jp_server_config, rest = sweep_helpers.FACES_FIXTURES`
FACES_FIXTURES = (new_user, magics_shell, one_local_site_server, rest_caller)
FACES_SCRIPT = "#!/bin/bash\n#SBATCH -n 1\necho hi\n"  # the job script they submit

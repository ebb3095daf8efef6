"""Older Torque (2.x, 3.x) and PBS Pro before 13 take job names of 15 characters at most;
until now the engine applied that limit only where the sites file said `max_job_name: 15`,
and without it such a server refused every job (the name carried the engine's 17-character
token). The server's version is in the answer to the server query the snapshot and
discovery already make (`qstat -B -f`, PBS Pro's `-F json`): `pbs_version`. The engine now
reads the limit from it, says it in `diamond describe`, and the sites file's setting still
wins. Recorded answers below are written from the schedulers' documentation."""

from __future__ import annotations

import json

import pytest

from diamond_jupyter.cli.describe import describe_text
from diamond_jupyter.config import SiteConfig, TransportConfig
from diamond_jupyter.dialects import get_commands
from diamond_jupyter.dialects.pbs_commands import job_name_limit, server_version
from diamond_jupyter.discovery_site import describe_from_outputs
from diamond_jupyter.model import JobSpec
from diamond_jupyter.sites import Site
from diamond_jupyter.transports.base import CommandResult

TOKEN = "abc123abc123"


def torque_server(version: str) -> str:
    """`qstat -B -f` as a Torque server prints it (text: Torque has no JSON)."""
    return (
        "Server: head01.cluster.example\n"
        "    server_state = Active\n"
        "    scheduling = True\n"
        "    total_jobs = 2\n"
        "    state_count = Transit:0 Queued:1 Held:0 Waiting:0 Running:1 Exiting:0 "
        "Complete:0\n"
        "    default_queue = batch\n"
        "    log_events = 511\n"
        "    scheduler_iteration = 600\n"
        "    node_check_rate = 150\n"
        "    tcp_timeout = 300\n"
        f"    pbs_version = {version}\n"
        "    keep_completed = 300\n"
        "    next_job_number = 4121\n"
        "    net_counter = 2 1 0\n")


def pro_server(version: str, top: bool = True) -> str:
    """`qstat -B -f -F json` as PBS Pro / OpenPBS print it."""
    body = {"Server": {"pbs01": {"server_state": "Active", "server_host": "pbs01",
                                 "default_queue": "workq", "pbs_version": version,
                                 "total_jobs": 0}}}
    if top:
        body = {"timestamp": 1733390000, "pbs_version": version, "pbs_server": "pbs01",
                **body}
    return json.dumps(body, indent=4)


@pytest.mark.parametrize("flavor,output,version,limit", [
    ("torque", torque_server("2.5.12"), "2.5.12", 15),
    ("torque", torque_server("3.0.6"), "3.0.6", 15),
    ("torque", torque_server("4.2.10"), "4.2.10", None),
    ("torque", torque_server("6.1.3"), "6.1.3", None),
    # PBS Pro 12's own version string, read as text by a site set to Torque's flavor
    ("torque", torque_server("PBSPro_12.2.1.140292"), "PBSPro_12.2.1.140292", 15),
    ("pro", pro_server("PBSPro_13.0.2.153173"), "PBSPro_13.0.2.153173", None),
    ("pro", pro_server("19.1.3"), "19.1.3", None),
    ("pro", pro_server("2021.1.3.20220217134230", top=False), "2021.1.3.20220217134230",
     None),
    ("pro", pro_server("12.1.0"), "12.1.0", 15),
    ("pro", "", None, None),  # no answer: not known
    ("pro", "{not json", None, None),
    ("torque", "qstat: cannot connect to server head01 (errno=111)\n", None, None),
    ("torque", torque_server("$(reboot)"), None, None),  # not a version
])
def test_the_servers_version_gives_its_job_name_limit(flavor, output, version, limit):
    assert server_version(flavor, output) == version
    assert job_name_limit(flavor, version) == limit
    assert get_commands("pbs", flavor=flavor).name_limit(output) == (version, limit)


def test_slurms_torque_wrappers_have_no_server_version():
    cmds = get_commands("pbs", flavor="slurm")
    assert cmds.server_argv() is None
    assert cmds.name_limit(torque_server("2.5.12")) == (None, None)


class _Login:
    """A Torque login: `qstat -B -f` answers `server`; the home, `id`; anything else empty.
    Keeps every argv and stdin it was given."""

    name = "alpha"

    def __init__(self, server: str, status: int = 0) -> None:
        self.server, self.status = server, status
        self.argvs: list[list[str]] = []
        self.stdins: list[bytes] = []

    async def run(self, argv, stdin=None, **kw):
        self.argvs.append(list(argv))
        if stdin:
            self.stdins.append(stdin)
        text = " ".join(argv)
        if "qstat -B -f" in text or argv[-3:] == ["qstat", "-B", "-f"]:
            return CommandResult(list(argv), self.status,
                                 self.server if self.status == 0 else "",
                                 "" if self.status == 0 else self.server, 0.0)
        if "$HOME" in text:
            return CommandResult(list(argv), 0, "/home/me\n", "", 0.0)
        return CommandResult(list(argv), 0, "", "", 0.0)


def _site(server: str, limit: int | None = None, status: int = 0,
          flavor: str = "torque") -> Site:
    cfg = SiteConfig(name="alpha", scheduler="pbs", flavor=flavor, max_job_name=limit,
                     transport=TransportConfig(kind="local"))
    return Site(cfg, transport=_Login(server, status))


def _uploaded(site: Site) -> str:
    (stdin,) = site.transport.stdins
    return stdin.decode()


async def test_an_old_torque_server_gets_names_cut_without_a_setting():
    site = _site(torque_server("2.5.12"))
    rendered = await site.upload(JobSpec(name="training-run-large", script="echo hi\n"),
                                 TOKEN, secret="ab")
    script = _uploaded(site)
    assert "#PBS -N training-run-la\n" in script and f"DIAMOND_TOKEN={TOKEN}" in script
    assert ".dmd-" not in script
    assert any("cut to 'training-run-la' (15 characters, the most server version 2.5.12 "
               "takes)" in w for w in rendered.warnings)
    # asked once: a second job does not ask again
    await site.upload(JobSpec(name="b", script="echo\n"), "def456def456", secret="ab")
    assert sum("-B" in " ".join(a) for a in site.transport.argvs) == 1


async def test_a_new_server_keeps_the_token_in_the_name():
    site = _site(torque_server("6.1.3"))
    await site.upload(JobSpec(name="training-run-large", script="echo hi\n"), TOKEN,
                      secret="ab")
    assert f"#PBS -N training-run-large.dmd-{TOKEN}\n" in _uploaded(site)


async def test_the_sites_file_setting_wins_and_nothing_is_asked():
    site = _site(torque_server("2.5.12"), limit=40)
    await site.upload(JobSpec(name="training-run-large", script="echo hi\n"), TOKEN,
                      secret="ab")
    assert f"#PBS -N training-run-large.dmd-{TOKEN}\n" in _uploaded(site)
    assert not any("-B" in " ".join(a) for a in site.transport.argvs)


async def test_a_server_query_that_fails_leaves_the_name_whole():
    site = _site("qstat: cannot connect to server head01 (errno=111)", status=1)
    await site.upload(JobSpec(name="training-run-large", script="echo hi\n"), TOKEN,
                      secret="ab")
    assert f"#PBS -N training-run-large.dmd-{TOKEN}\n" in _uploaded(site)
    assert site.max_job_name is None


async def test_a_lost_submit_is_looked_up_by_the_cut_name_on_an_old_server():
    site = _site(torque_server("3.0.6"))
    await site.find_by_token("training-run-large", TOKEN)
    look = [a for a in site.transport.argvs if "qselect" in " ".join(a)]
    assert look and "training-run-la" in look[-1]


def test_the_snapshots_server_answer_teaches_the_limit():
    site = _site(torque_server("2.5.12"))
    site._caps = {"server": torque_server("2.5.12")}
    import asyncio

    asyncio.run(site.know_name_limit())
    assert site.max_job_name == 15 and not site.transport.argvs  # nothing asked


def _described(server: str, limit: int | None = None):
    cmds = get_commands("pbs", flavor="torque")
    keys = list(cmds.snapshot_argvs())
    parts = {"arch": "x86_64\n", "sched:alpha:server": server,
             **{f"sched:alpha:{k}": "" for k in keys if k != "server"}}
    return describe_from_outputs("alpha", cmds, parts, {}, ["alpha"], keys)


def test_describe_says_the_version_and_the_limit():
    d = _described(torque_server("2.5.12"))
    assert (d.scheduler_version, d.max_job_name) == ("2.5.12", 15)
    text = describe_text(d)
    assert "scheduler version:   2.5.12" in text
    assert "job names:           at most 15 characters (discovered: server version 2.5.12)" \
        in text
    new = _described(torque_server("6.1.3"))
    assert (new.scheduler_version, new.max_job_name) == ("6.1.3", None)
    assert "job names:" not in describe_text(new)


async def test_describe_names_the_sites_file_setting_over_the_discovered_one():
    site = _site(torque_server("2.5.12"), limit=40)
    site.discovery._found, site.discovery._at = _described(torque_server("2.5.12")), 1e18
    d = await site.discovery.describe()
    assert (d.max_job_name, d.max_job_name_source) == (40, "configured")
    assert "at most 40 characters (sites file)" in describe_text(d)
    assert site.max_job_name == 40


async def test_discovery_teaches_the_site_its_limit():
    site = _site(torque_server("2.5.12"))
    site.discovery._found, site.discovery._at = _described(torque_server("2.5.12")), 1e18
    await site.discovery.describe()
    assert site.max_job_name == 15 and site.scheduler_version == "2.5.12"

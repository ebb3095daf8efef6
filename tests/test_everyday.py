"""Everyday use: messages that tell the truth and a command line that composes."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from diamond_jupyter.cli import build_parser
from diamond_jupyter.config import SiteConfig
from diamond_jupyter.jobcard import outcome, why
from diamond_jupyter.model import (
    BadInput,
    Job,
    JobSpec,
    JobState,
    Node,
    Partition,
    Resources,
    SiteSnapshot,
)
from diamond_jupyter.placement import FINISH_NOISE_S, place
from diamond_jupyter.store import Store

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)
REPO = Path(__file__).resolve().parents[1]


def _site(name: str, speed: float = 1.0, charge: float = 1.0, gpus: int = 0):
    nodes = [Node(name=f"{name}{i}", state="idle", cpus=8, memory_mb=16000, gpus=gpus,
                  partitions=["main"]) for i in (1, 2)]
    cfg = SiteConfig(name=name, speed_factor=speed, charge_factor=charge)
    snap = SiteSnapshot(site=name, taken_at=NOW, nodes=nodes,
                        partitions=[Partition(name="main", default=True)])
    return cfg, snap


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", *args],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


# -- placement reasons ---------------------------------------------------------------------

def test_idle_federation_reason_names_the_speed_factor():
    """All start now; the fast site wins on runtime, and the card says so (not 'later start')."""
    sites = [_site("alpha"), _site("beta", speed=1.5, charge=1.2),
             _site("gamma", speed=2.0, charge=3.0, gpus=2)]
    pl = place(JobSpec(script="echo hello\n"), sites, now=NOW)
    assert pl.choice == "gamma"
    reason = pl.why_not("alpha")
    assert "runs longer" in reason and "speed factor 1 vs 2" in reason, reason
    assert "later start" not in reason and "starts later" not in reason
    job = Job(id="gamma:1", site="gamma", placement=pl.model_dump(mode="json"))
    text = why(job)
    assert "later start" not in text and "speed factor" in text, text


def test_equal_finish_within_noise_prefers_the_cheaper_site():
    """Finishes 30 s apart (< FINISH_NOISE_S) are a tie: the cheaper site wins, and says so."""
    assert FINISH_NOISE_S >= 30
    spec = JobSpec(script="echo hi\n", resources=Resources(walltime_s=600))
    # runtimes 600 s vs 570 s: the pricier one finishes 30 s sooner
    sites = [_site("dear", speed=600 / 570, charge=3.0), _site("cheap", charge=1.0)]
    pl = place(spec, sites, now=NOW)
    assert pl.choice == "cheap", pl.explain()
    assert "costs more" in pl.why_not("dear") and "same finish within noise" in pl.why_not("dear")


def test_beyond_noise_the_sooner_finish_still_wins():
    spec = JobSpec(script="echo hi\n", resources=Resources(walltime_s=3600))
    pl = place(spec, [_site("dear", speed=2.0, charge=3.0), _site("cheap")], now=NOW)
    assert pl.choice == "dear"
    assert pl.why_not("cheap").startswith("finishes 0:30:00 later")


def test_impossible_job_message_is_one_line_with_every_sites_reason():
    spec = JobSpec(script="x\n", resources=Resources(nodes=1, gpus_per_node=8))
    pl = place(spec, [_site("alpha"), _site("gamma", gpus=2)], now=NOW)
    assert pl.choice is None
    line = pl.summary()
    assert "\n" not in line and line.startswith("no site can run this job: ")
    for v in pl.ranked:
        assert f"{v.site}: {v.reasons[0]}" in line
        assert v.reasons[0]


def test_failure_text_is_not_repeated():
    job = Job(id="alpha:3", site="alpha", state=JobState.FAILED, exit_code=3,
              reason="exit code 3")
    assert outcome(job) == "FAILED, exit code 3"
    from diamond_jupyter.cli import job_line
    assert job_line(job).count("exit code 3") + job_line(job).count("exit=3") == 1


def test_unknown_job_id_message_does_not_contradict_itself(tmp_path):
    store = Store(tmp_path / "s.db")
    with pytest.raises(BadInput) as e:
        store.get_job("alpha:424242")
    assert "no job 'alpha:424242'" in str(e.value) and "look like" not in str(e.value)
    with pytest.raises(BadInput) as e:
        store.get_job("424242")
    assert "malformed" in str(e.value) and "SITE:NUMBER" in str(e.value)


def test_binary_file_is_refused_locally(tmp_path):
    """No configuration and no site is needed: the file never leaves this machine."""
    r = _cli("submit", "--site", "alpha", "/bin/true",
             env={"DIAMOND_CONFIG": str(tmp_path / "none.yaml")})
    assert r.returncode == 2, r
    assert "binary file" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    with pytest.raises(BadInput, match="binary"):
        from diamond_jupyter.federation import Federation
        Federation.parse("#!/bin/sh\necho \0\n")


# -- the command line ----------------------------------------------------------------------

def _walk(parser: argparse.ArgumentParser, path: str):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _walk(sub, f"{path} {name}")
        else:
            yield path, action


def test_every_option_of_every_subcommand_has_help():
    missing = [f"{path}: {'/'.join(a.option_strings) or a.dest}"
               for path, a in _walk(build_parser(), "diamond")
               if not (a.help and a.help.strip()) and a.help != argparse.SUPPRESS]
    assert not missing, missing


def test_yaml_error_is_one_line(tmp_path):
    bad = tmp_path / "sites.yaml"
    bad.write_text("sites:\n  - name: a\n   bad: [\n")
    r = _cli("sites", "--config", str(bad))
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "line 3, column 4" in r.stderr and str(bad) in r.stderr


# -- on the real test bed ------------------------------------------------------------------

@pytest.fixture
def env(tb, data_dir) -> dict[str, str]:
    return {**os.environ, "DIAMOND_CONFIG": str(tb.config_path),
            "DIAMOND_DATA_DIR": str(data_dir),
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}


def test_submit_prints_only_the_id_and_composes_with_wait(env, tmp_path):
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\n#SBATCH --time=2\necho composed\n")
    r = subprocess.run(["sh", "-c", 'id=$(diamond submit --site alpha "$1") || exit 9; '
                        'echo "ID=$id"; diamond wait "$id" --poll 2 --timeout 60 --json',
                        "sh", str(script)], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, (r.stdout, r.stderr)
    first, rest = r.stdout.split("\n", 1)
    assert first.startswith("ID=alpha:") and first[len("ID=alpha:"):].isdigit(), first
    done = json.loads(rest)
    assert done["id"] == first[3:] and done["state"] == "COMPLETED"
    full = json.loads(subprocess.run(["diamond", "submit", "--site", "alpha", str(script),
                                      "--json"], capture_output=True, text=True, env=env,
                                     check=True).stdout)
    assert full["id"].startswith("alpha:") and full["state"] == "PENDING" and full["name"]


def test_missing_logs_say_so(env, tmp_path):
    script = tmp_path / "held.sh"
    script.write_text("#!/bin/bash\necho never\n")
    jid = subprocess.run(["diamond", "submit", "--site", "beta", "--hold", str(script)],
                         capture_output=True, text=True, env=env, check=True).stdout.strip()
    try:
        r = subprocess.run(["diamond", "logs", jid], capture_output=True, text=True, env=env)
        assert r.returncode == 1, r
        assert "stdout log" in r.stderr and "is missing on beta" in r.stderr, r.stderr
        assert "has not started" in r.stderr
    finally:
        subprocess.run(["diamond", "cancel", jid], capture_output=True, env=env)


async def test_refused_job_reason_has_no_internal_command(tb, data_dir):
    from diamond_jupyter.federation import Federation

    async with Federation(tb.config_path) as fed:
        spec = JobSpec(name="refused", script="echo x\n", queue="no-such-partition")
        with pytest.raises(BadInput) as e:
            await fed.submit(spec, "alpha")
        assert "alpha refused the job" in str(e.value) and "umask" not in str(e.value)
        job = next(j for j in fed.jobs() if j.name and j.name.startswith("refused"))
        assert job.state == JobState.FAILED and "invalid partition" in (job.reason or "").lower()
        assert "umask" not in job.reason and "sh -c" not in job.reason


# -- names: the idempotency token stays out of what users see -------------------------------

@pytest.mark.parametrize("dialect,line", [("slurm", "#SBATCH --comment=diamond:abc"),
                                          ("lsf", "#BSUB -Jd diamond:abc")])
def test_comment_is_rendered(dialect, line):
    from diamond_jupyter.dialects import get_script_dialect

    r = get_script_dialect(dialect).render_script(
        JobSpec(name="hello", comment="diamond:abc", script="echo\n"))
    assert line in r.script.splitlines() and not r.warnings


@pytest.mark.parametrize("dialect", ["pbs", "flux"])
def test_comment_dropped_where_there_is_none_and_the_site_tags_the_name(dialect):
    from diamond_jupyter.config import TransportConfig
    from diamond_jupyter.dialects import get_script_dialect
    from diamond_jupyter.sites import Site

    r = get_script_dialect(dialect).render_script(JobSpec(comment="x", script="echo\n"))
    assert any(w.startswith("dropped: comment") for w in r.warnings)
    site = Site(SiteConfig(name="s", scheduler=dialect,
                           transport=TransportConfig(kind="local")))
    spec = site.scheduler_spec(JobSpec(name="hello", comment="diamond:abc", script="x"), "abc")
    assert spec.name == "hello.dmd-abc" and spec.comment is None


async def test_store_name_is_the_users_and_the_token_finds_the_job_by_comment(tb, data_dir):
    from diamond_jupyter.federation import Federation

    async with Federation(tb.config_path) as fed:
        name = f"plain-{os.getpid()}"
        a = await fed.submit(JobSpec(name=name, script="sleep 30\n"), "alpha", hold=True)
        b = await fed.submit(JobSpec(name=name, script="sleep 30\n"), "alpha", hold=True)
        try:
            assert fed.job(a.id).name == name and ".dmd-" not in (fed.job(a.id).name or "")
            site = fed.site("alpha")
            queued = {s.native_id: s for s in await site.find_by_name(name)}
            assert queued[a.native_id].name == name  # what squeue (and the sidebar) show
            assert queued[b.native_id].name == name
            assert queued[a.native_id].comment == f"diamond:{a.token}"
            found = await site.find_by_token(name, a.token or "")
            assert [s.native_id for s in found] == [a.native_id]  # not b, same name
            # recovery of a lost submit: an intent whose job is queued under the same name
            intent = fed.store.record_intent("alpha", "feedc0ffee01",
                                             fed._prepare(site, JobSpec(name=name, script="x"),
                                                          "feedc0ffee01"))
            sub = await site.submit(intent.spec, "feedc0ffee01", hold=True)
            await fed._recover_intent(intent)
            assert fed.job(intent.id).native_id == sub.native_id
            assert fed.job(intent.id).name == name
        finally:
            for j in fed.jobs():
                if j.native_id and not j.state.terminal:
                    await fed.cancel(j.id)

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
from everyday_setup import idle_snapshot, run_cli

from diamond_jupyter.cli.main import build_parser
from diamond_jupyter.config import SiteConfig
from diamond_jupyter.kernel.jobcard import outcome, why
from diamond_jupyter.model import (
    BadInput,
    Job,
    JobSpec,
    JobState,
    Resources,
)
from diamond_jupyter.placement import place
from diamond_jupyter.placement_rank import FINISH_NOISE_FRACTION, FINISH_NOISE_S
from diamond_jupyter.store import Store

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)
REPO = Path(__file__).resolve().parents[1]


def _site(name: str, speed: float = 1.0, charge: float = 1.0, gpus: int = 0):
    cfg = SiteConfig(name=name, speed_factor=speed, charge_factor=charge)
    return cfg, idle_snapshot(name, nodes=2, gpus=gpus, taken_at=NOW)


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
    """Finishes 20 s apart on a ten-minute job (under FINISH_NOISE_FRACTION of it) are a
    tie: the cheaper site wins, and says so."""
    assert FINISH_NOISE_FRACTION * 580 > 20 and FINISH_NOISE_S < 20
    spec = JobSpec(script="echo hi\n", resources=Resources(walltime_s=600))
    # runtimes 600 s vs 580 s: the pricier one finishes 20 s sooner
    sites = [_site("dear", speed=600 / 580, charge=3.0), _site("cheap", charge=1.0)]
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
    from diamond_jupyter.cli.common import job_line
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
    r = run_cli("submit", "--site", "alpha", "/bin/true",
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
    r = run_cli("sites", "--config", str(bad))
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
        assert r.returncode == 0, r  # a held job has nothing to show yet: no failure
        assert "stdout log" in r.stderr and "not there yet on beta" in r.stderr, r.stderr
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
                                             site.prepare(JobSpec(name=name, script="x"),
                                                          "feedc0ffee01"))
            sub = await site.submit(intent.spec, "feedc0ffee01", hold=True)
            await fed.journal.recover_intent(intent)
            assert fed.job(intent.id).native_id == sub.native_id
            assert fed.job(intent.id).name == name
        finally:
            for j in fed.jobs():
                if j.native_id and not j.state.terminal:
                    await fed.cancel(j.id)


# -- the test bed: one site at a time; `up` repairs -------------------------------------------

def _tb_cli(env: dict[str, str], *args: str) -> dict:
    r = subprocess.run(["diamond", "testbed", *args, "--json"], capture_output=True, text=True,
                       env=env, timeout=180)
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return json.loads(r.stdout)


async def test_stop_start_a_site_and_up_repairs_without_losing_jobs(tb, env):
    from diamond_jupyter import testbed
    from diamond_jupyter.federation import Federation

    async with Federation(tb.config_path, min_poll_s=0.5) as fed:
        jobs = [await fed.submit(JobSpec(name=f"survivor-{s}", script="sleep 300\n"), s)
                for s in ("alpha", "beta")]
        for j in jobs:
            await fed.wait(j.id, until=[JobState.RUNNING], timeout=60)
    try:
        out = _tb_cli(env, "stop", "beta", "--only", "sshd")
        assert out["stopped"] == ["beta sshd"]
        st = {s["name"]: s for s in testbed.status()["sites"]}
        assert not st["beta"]["sshd"] and st["beta"]["slurmctld"] and st["alpha"]["sshd"]
        up = _tb_cli(env, "up")
        assert up["started"] == ["beta sshd"], up  # nothing else was restarted
        out = _tb_cli(env, "stop", "beta")  # the whole site: sshd and Slurm
        assert "beta slurmctld" in out["stopped"] and "beta sshd" in out["stopped"]
        assert not testbed.status()["up"]
        started = _tb_cli(env, "start", "beta")["started"]
        assert "beta slurmctld" in started and "beta sshd" in started
        async with Federation(tb.config_path) as fed:
            for j in jobs:  # the same jobs, still running, under the same ids
                [seen] = await fed.site(j.site).statuses([j.native_id or ""])
                assert seen.state == JobState.RUNNING and seen.name == j.name, seen
            later = await fed.submit(JobSpec(name="after", script="true\n"), "alpha")
            assert int(later.native_id or 0) > int(jobs[0].native_id or 0)  # ids not reset
    finally:
        async with Federation(tb.config_path) as fed:
            for j in fed.jobs():
                if not j.state.terminal and j.native_id:
                    await fed.cancel(j.id)


# -- the demo ------------------------------------------------------------------------------

def _demo_copy(tmp_path: Path) -> Path:
    """The files demo.sh reads, with an install script that only counts its runs."""
    import shutil

    root = tmp_path / "repo"
    for rel in ("scripts/demo.sh", "binder/demo.ipynb", "pyproject.toml", "package.json"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, root / rel)
    shutil.copytree(REPO / "src", root / "src")
    (root / "scripts/install.sh").write_text("#!/bin/sh\necho run >> installs.log\n")
    (root / "scripts/install.sh").chmod(0o755)
    return root


def _demo_start(root: Path, env: dict[str, str], port: int):
    import signal
    import time
    import urllib.error
    import urllib.request

    proc = subprocess.Popen(["./scripts/demo.sh"], cwd=root, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    t0 = time.monotonic()
    lines = []
    try:
        for line in proc.stdout:  # the server logs its URL (just before it listens)
            lines.append(line)
            if f"127.0.0.1:{port}/" in line and not line.startswith("demo:"):
                break
        text = "".join(lines)
        assert proc.poll() is None, text  # the server runs
        token = (root / "demo/.jupyter-token").read_text().strip()
        url = f"http://127.0.0.1:{port}/api/status?token={token}"
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url, timeout=30) as r:
                    assert r.status == 200
                break
            except urllib.error.URLError as e:
                if not isinstance(e.reason, ConnectionRefusedError) \
                        or time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        ready = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        proc.communicate(timeout=60)
    return text, token, ready


def test_demo_restarts_fast_with_the_same_url_and_token(tb, tmp_path):
    import socket

    root = _demo_copy(tmp_path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "VIRTUAL_ENV": str(Path(sys.executable).parent.parent),
           "PYTHON": sys.executable, "DEMO_PORT": str(port),
           "DEMO_ARGS": "--no-browser", "PYTHONPATH": str(REPO)}
    first, token1, _ = _demo_start(root, env, port)
    assert (root / "installs.log").read_text().count("run") == 1
    assert f"demo: open http://127.0.0.1:{port}/lab/tree/demo.ipynb?token={token1}" in first
    assert (root / "demo/demo.ipynb").is_file()
    second, token2, ready_s = _demo_start(root, env, port)
    assert "nothing changed since the last install" in second
    assert (root / "installs.log").read_text().count("run") == 1  # no reinstall
    assert token2 == token1 and f":{port}/lab/tree/demo.ipynb?token={token1}" in second
    assert "test bed up" in second
    (root / "src" / "index.ts").write_text((root / "src" / "index.ts").read_text() + "\n")
    _demo_start(root, env, port)
    assert (root / "installs.log").read_text().count("run") == 2  # a source changed
    print(f"demo restart to a serving JupyterLab: {ready_s:.1f}s")


# -- translations never change the request --------------------------------------------------

def _tr(body: str, to: str):
    from diamond_jupyter.dialects.translate import translate

    return translate("#!/bin/bash\n" + body, to)


def test_flux_gets_gpus_per_node_exactly():
    script, warnings, _ = _tr("#SBATCH -N 2\n#SBATCH --ntasks-per-node=16\n"
                              "#SBATCH --gres=gpu:2\nsrun ./app\n", "flux")
    assert "#flux: --nodes=2" in script and "#flux: --gpus-per-node=2" in script
    assert "#flux: --tasks-per-node=16" in script
    assert "nslots" not in script and "gpus-per-slot" not in script
    from diamond_jupyter.dialects.flux_script import flux_script
    back = flux_script.parse_script(script).resources
    assert (back.nodes, back.gpus_per_node, back.tasks_per_node) == (2, 2, 16)
    script, _, _ = _tr("#SBATCH -N 1\n#SBATCH -n 8\n#SBATCH --gres=gpu:2\n./x\n", "flux")
    assert "--gpus-per-node=2" in script and "--tasks-per-node=8" in script


def test_tasks_with_a_per_node_count_give_the_nodes_their_gpus_go_on():
    """LSF's `-n 16 -R span[ptile=4]` (or Slurm's tasks and tasks per node) is 4 nodes:
    2 GPUs per node are 8 in all, on flux as on the source."""
    script, _, _ = _tr('#BSUB -n 16\n#BSUB -R "span[ptile=4]"\n#BSUB -gpu "num=2"\n'
                       'mpirun ./x\n', "flux")
    assert "#flux: --nodes=4" in script and "#flux: --gpus-per-node=2" in script, script
    assert "#flux: --tasks-per-node=4" in script
    script, _, _ = _tr("#SBATCH -n 6\n#SBATCH --ntasks-per-node=3\n#SBATCH --gpus-per-node=3\n"
                       "srun ./x\n", "flux")
    assert "#flux: --nodes=2" in script and "#flux: --gpus-per-slot=1" in script, script


def test_unknowable_gpu_total_is_refused_not_multiplied():
    with pytest.raises(BadInput, match="no node count"):
        _tr("#SBATCH -n 4\n#SBATCH --gpus-per-node=1\n./x\n", "flux")
    with pytest.raises(BadInput, match="refused: pbs cannot express .* 1 GPU"):
        _tr("#SBATCH -n 4\n#SBATCH --gpus-per-node=1\n./x\n", "pbs")


def test_lsf_keeps_cpus_per_task_and_memory_exact():
    from diamond_jupyter.dialects.lsf_script import lsf_script

    script, _, _ = _tr("#SBATCH -N 1\n#SBATCH --ntasks-per-node=1\n#SBATCH -c 8\n"
                       "#SBATCH --mem=93G\n./x\n", "lsf")
    back = lsf_script.parse_script(script).resources
    assert "#BSUB -n 1" in script and "affinity[core(8)]" in script
    assert (back.cpus_per_task, back.memory_mb, back.memory_per_cpu_mb) == (8, 95232, None)


SCHED_BODY = """#SBATCH -N 2
#SBATCH --ntasks-per-node=4
#SBATCH --array=1-10
echo "task $SLURM_ARRAY_TASK_ID of ${SLURM_NTASKS} in $SLURM_SUBMIT_DIR"
srun -n 8 --cpus-per-task=2 ./app --input x
srun --mpi=pmix ./app
"""


def test_body_variables_and_launchers_are_translated_or_reported_line_by_line():
    script, warnings, _ = _tr(SCHED_BODY, "flux")
    assert "flux run -n 8 -c 2 ./app --input x" in script
    assert "srun --mpi=pmix ./app" in script  # no flux equivalent for --mpi: kept, reported
    assert any(w.startswith("kept: line 7: srun options") for w in warnings), warnings
    assert any(w.startswith("kept: line 5:") and "$SLURM_ARRAY_TASK_ID" in w
               for w in warnings)
    script, warnings, _ = _tr(SCHED_BODY, "pbs")
    assert 'echo "task $PBS_ARRAY_INDEX of ${SLURM_NTASKS} in $PBS_O_WORKDIR"' in script
    assert "kept: line 5: $SLURM_NTASKS (task count) has no pbs equivalent" in warnings
    assert any(w.startswith("kept: line 6: srun has no pbs equivalent") for w in warnings)
    script, _, _ = _tr(SCHED_BODY, "lsf")
    assert 'echo "task $LSB_JOBINDEX of ${LSB_DJOB_NUMPROC} in $LS_SUBCWD"' in script


def test_to_pbs_reports_on_stderr_what_it_did_not_carry(tmp_path):
    src = tmp_path / "job.sbatch"
    src.write_text("#!/bin/bash\n#SBATCH -N 1\n#SBATCH --gpu-bind=closest\n"
                   "#SBATCH --comment=keep-me\n" + "srun ./app\necho $SLURM_NTASKS\n")
    r = run_cli("translate", "--to", "pbs", str(src))
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert any("GPU binding closest" in x for x in lines)
    assert any("comment" in x and "keep-me" in x for x in lines)
    assert any(x.startswith("kept: line 5: srun") for x in lines)
    assert any(x.startswith("kept: line 6: $SLURM_NTASKS") for x in lines)


def test_notebook_impossible_job_names_every_sites_reason(tmp_path, monkeypatch, capsys):
    """The magics (in-process engine): the red line carries each site's reason."""
    from IPython.core.interactiveshell import InteractiveShell

    cfg = tmp_path / "sites.yaml"
    cfg.write_text("sites:\n"
                   "  - name: ghost\n    transport: {host: 10.213.99.2, connect_timeout_s: 1}\n"
                   "  - name: shade\n    transport: {host: 10.213.99.3, connect_timeout_s: 1}\n")
    monkeypatch.setenv("DIAMOND_CONFIG", str(cfg))
    monkeypatch.setenv("DIAMOND_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DIAMOND_ENGINE", "local")
    monkeypatch.setenv("DIAMOND_NO_WIDGETS", "1")
    shell = InteractiveShell.instance()
    try:
        shell.run_line_magic("load_ext", "diamond_jupyter")
        shell.run_cell_magic("diamond", "submit --site auto", "echo hi\n")
    finally:
        InteractiveShell.clear_instance()
    err = capsys.readouterr().err
    first = err.strip().splitlines()[0]
    assert "no site can run this job: " in first, err
    assert "ghost: site unreachable" in first and "shade: site unreachable" in first
    assert not first.rstrip().endswith(":")


def test_flux_body_to_slurm():
    from diamond_jupyter.dialects.translate import translate

    script, warnings, _ = translate("#!/bin/bash\n#flux: -N 2\n#flux: -n 8\n"
                                    "flux run -n 8 -c 2 ./app\nflux run --requires=x ./b\n"
                                    "echo $FLUX_JOB_ID $FLUX_TASK_RANK\n", "slurm")
    assert "srun -n 8 -c 2 ./app" in script and "flux run --requires=x ./b" in script
    assert "echo $SLURM_JOB_ID $SLURM_PROCID" in script
    assert "kept: line 5: flux run options without an srun equivalent; the line is unchanged" \
        in warnings


def test_lsf_slot_ranges_and_rusage_durations_keep_what_they_ask_for():
    """`bsub -n 4,8` asks for at least 4 slots; `rusage[mem=4000:duration=10]` still asks
    for 4000 MB a slot (the reservation's duration has no portable meaning)."""
    from diamond_jupyter.dialects.lsf_script import lsf_script

    body = '#BSUB -n 4,8\n#BSUB -R "rusage[mem=4000:duration=10]"\nmpirun ./x\n'
    spec = lsf_script.parse_script("#!/bin/bash\n" + body)
    assert (spec.resources.tasks, spec.resources.memory_per_cpu_mb) == (4, 4000)
    script, warnings, _ = _tr(body, "slurm")
    assert "#SBATCH --ntasks=4" in script and "#SBATCH --mem-per-cpu=4000M" in script, script
    assert any("slot range 4,8 kept as minimum 4" in w for w in warnings), warnings
    assert any("rusage[duration=10]" in w for w in warnings), warnings
    same, _, _ = _tr(body, "lsf")  # one rusage section, as LSF reads it
    assert '#BSUB -R "rusage[mem=4000MB:duration=10]"' in same, same
    with pytest.raises(BadInput, match="MIN,MAX slots"):
        _tr("#BSUB -n 8,4\n./x\n", "slurm")


def test_slurm_constraint_brackets_and_counts_become_valid_lsf_select():
    script, warnings, _ = _tr('#SBATCH -C "[rack1|rack2]"\n./x\n', "lsf")
    assert '#BSUB -R "select[(rack1 || rack2)]"' in script, script
    assert any("the same one on every node" in w for w in warnings), warnings
    script, warnings, _ = _tr('#SBATCH -C "a*2&b"\n./x\n', "lsf")
    assert '#BSUB -R "select[a && b]"' in script, script
    assert any("node counts in constraint a*2&b dropped" in w for w in warnings), warnings

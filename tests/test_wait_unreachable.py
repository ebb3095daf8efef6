"""A site that cannot be reached for a while does not end a wait: `diamond wait` (and
`submit --wait`, `workflow run --wait`) keep following the job, asking its site again with
backoff, say once on stderr that the site is unreachable, and end when the job ends; past
--timeout they exit 1 naming the site. The command line runs in this process (its `main`),
on a site whose scheduler commands are a fake Slurm written here; the transport under it
refuses connections, as SSH does when sshd is down, for as many queries as a test says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diamond_jupyter.cli.main import main
from diamond_jupyter.model import Job, JobState, SiteError
from diamond_jupyter.store import Store
from diamond_jupyter.transports.local import LocalTransport

REFUSED = "alpha: connection refused by alpha.example:22 (is sshd running?)"


class Site:
    """A fake Slurm site `alpha` on the local transport: `squeue` prints `queue.txt`,
    `sacct` prints nothing; the first `refusals` queries of its jobs' states are refused."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.root = root
        self.queue = root / "queue.txt"
        self.queue.write_text("")
        fake = root / "fake"
        fake.mkdir()
        for prog, body in (("squeue", f"cat {self.queue}"), ("sacct", "true"),
                           ("sbatch", "echo 77"), ("scontrol", "true"), ("sinfo", "true")):
            (fake / prog).write_text(f"#!/bin/sh\n{body}\n")
            (fake / prog).chmod(0o755)
        commands = ", ".join(f"{p}: {fake / p}" for p in ("squeue", "sacct", "sbatch",
                                                          "scontrol", "sinfo"))
        self.store_path = root / "store.sqlite3"
        self.config = root / "sites.yaml"
        self.config.write_text(f"sites:\n  - name: alpha\n    transport: {{kind: local}}\n"
                               f"    workdir: {root / 'work'}\n    commands: {{{commands}}}\n"
                               f"store: {self.store_path}\n")
        monkeypatch.setenv("DIAMOND_DATA_DIR", str(root / "data"))
        self.refusals = 0
        self.refused = 0  # queries refused so far
        self.on_back: str | None = None  # the queue once the site answers again
        real_run = LocalTransport.run

        async def run(transport, argv, **kw):
            if any(Path(a).name == "squeue" for a in argv) and "all" in argv:  # -t all
                if self.refused < self.refusals:
                    self.refused += 1
                    raise SiteError(REFUSED)
                if self.on_back is not None:
                    self.queue.write_text(self.on_back)
            return await real_run(transport, argv, **kw)
        monkeypatch.setattr(LocalTransport, "run", run)
        monkeypatch.setattr(LocalTransport, "run_fast", run)

    def job(self, native: str, state: JobState) -> str:
        store = Store(self.store_path)
        store.upsert_job(Job(id=f"alpha:{native}", site="alpha", native_id=native, name="sim"))
        store.apply_state(f"alpha:{native}", state)
        return f"alpha:{native}"

    def ends(self, native: str, state: str = "COMPLETED") -> None:
        """Once the site answers again, its queue shows the job ended."""
        self.on_back = (f"{native}|{state}|2026-01-01T00:00:01|2026-01-01T00:00:09|"
                        f"2026-01-01T00:00:00|10:00|1|1|me|debug|N/A|n1|None||sim\n")


@pytest.fixture
def site(tmp_path, monkeypatch) -> Site:
    return Site(tmp_path, monkeypatch)


def _run(site: Site, capsys, *args: str) -> tuple[int, str, str]:
    code = main([*args, "--config", str(site.config)])
    got = capsys.readouterr()
    return code, got.out, got.err


def _notes(err: str) -> list[str]:
    return [line for line in err.splitlines() if "is unreachable" in line]


@pytest.mark.parametrize("json_out", [False, True])
def test_wait_keeps_following_a_job_while_its_site_refuses_connections(site, capsys, json_out):
    """`diamond wait` exited 1 at once ("connection refused") though the job kept running."""
    job_id = site.job("77", JobState.RUNNING)
    site.refusals = 3  # the first three queries (the wait's own, then two polls) fail
    site.ends("77")
    code, out, err = _run(site, capsys, "wait", job_id, "--poll", "1", "--timeout", "60",
                          *["--json"] * json_out)
    assert code == 0, err
    assert site.refused == 3  # asked again after each refusal, until it answered
    if json_out:
        assert json.loads(out)["state"] == "COMPLETED"
    else:
        assert out.startswith(f"{job_id}\tCOMPLETED")
    notes = _notes(err)
    assert notes == [f"diamond: alpha is unreachable (connection refused by alpha.example:22 "
                     f"(is sshd running?)); still following {job_id}: asking again with "
                     f"backoff until it answers (Ctrl-C stops waiting; nothing is cancelled)"]
    assert Store(site.store_path).get_job(job_id).state == JobState.COMPLETED


def test_wait_on_a_site_down_past_the_timeout_exits_1_naming_the_site(site, capsys):
    job_id = site.job("78", JobState.RUNNING)
    site.refusals = 10 ** 6  # down for good
    code, out, err = _run(site, capsys, "wait", job_id, "--poll", "1", "--timeout", "3",
                          "--json")
    assert code == 1
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"diamond: timed out after 3s waiting for {job_id} (state RUNNING, "
                           f"as last seen; alpha has not answered for "), last
    assert last.endswith("s (connection refused by alpha.example:22 (is sshd running?)))")
    assert len(_notes(err)) == 1  # said once, however many polls failed
    assert site.refused >= 2  # the wait's own query, then the monitor's polls
    assert json.loads(out) == {"reason": "failed", "message": last[len("diamond: "):]}
    assert Store(site.store_path).get_job(job_id).state == JobState.RUNNING  # not lost


def test_submit_wait_keeps_following_its_job_while_the_site_refuses_connections(site, capsys):
    """The site stops answering once the job is queued: the wait goes on until --timeout,
    says so once, then names the site and the job (which stays as last seen)."""
    (site.root / "job.sh").write_text("#!/bin/bash\n#SBATCH -n 1\necho hi\n")
    site.refusals = 10 ** 6
    code, out, err = _run(site, capsys, "submit", "--site", "alpha", "--wait", "--poll", "1",
                          "--timeout", "3", str(site.root / "job.sh"))
    assert code == 1 and out == ""
    assert len(_notes(err)) == 1 and "still following alpha:77" in _notes(err)[0], err
    last = err.strip().splitlines()[-1]
    assert last.startswith("diamond: timed out after 3s waiting for alpha:77 (state PENDING, "
                           "as last seen; alpha has not answered for "), last
    assert site.refused >= 2
    assert Store(site.store_path).get_job("alpha:77").state == JobState.PENDING


def test_submit_wait_prints_the_job_as_it_ended(site, capsys):
    (site.root / "job.sh").write_text("#!/bin/bash\n#SBATCH -n 1\necho hi\n")
    site.ends("77", "FAILED")
    code, out, err = _run(site, capsys, "submit", "--site", "alpha", "--wait", "--poll", "1",
                          "--timeout", "60", str(site.root / "job.sh"), "--json")
    assert code == 0, err
    job = json.loads(out)
    assert (job["id"], job["state"]) == ("alpha:77", "FAILED")


def test_submit_timeout_without_wait_is_bad_input(site, capsys):
    (site.root / "job.sh").write_text("#!/bin/bash\necho hi\n")
    code, out, err = _run(site, capsys, "submit", "--site", "alpha", "--timeout", "5",
                          str(site.root / "job.sh"))
    assert code == 2 and out == ""
    assert err.strip() == "diamond: --timeout is for --wait: give both, or neither"
    assert not (site.root / "work").exists() or not any((site.root / "work").iterdir())


def _workflow(site: Site) -> Path:
    path = site.root / "wf.yaml"
    path.write_text("name: demo\nsteps:\n  - name: a\n    site: alpha\n"
                    "    script: \"#!/bin/bash\\necho hi\\n\"\n")
    return path


def test_workflow_run_wait_keeps_following_while_a_steps_site_refuses_connections(site,
                                                                                  capsys):
    site.refusals = 3
    site.ends("77")
    code, out, err = _run(site, capsys, "workflow", "run", str(_workflow(site)), "--wait",
                          "--poll", "1", "--timeout", "60", "--json")
    assert code == 0, err
    view = json.loads(out)
    assert view["state"] == "COMPLETED" and view["steps"][0]["job"] == "alpha:77"
    assert site.refused == 3
    notes = _notes(err)
    assert len(notes) == 1 and notes[0].startswith(
        "diamond: alpha is unreachable (connection refused by alpha.example:22 (is sshd "
        f"running?)); still following workflow {view['id']}: asking again with backoff"), err


def test_workflow_run_wait_past_its_timeout_names_the_site_that_did_not_answer(site, capsys):
    site.refusals = 10 ** 6
    code, out, err = _run(site, capsys, "workflow", "run", str(_workflow(site)), "--wait",
                          "--poll", "1", "--timeout", "5")
    assert code == 1
    last = err.strip().splitlines()[-1]
    assert last.startswith("diamond: timed out after 5s waiting for workflow "), last
    assert "(alpha has not answered for " in last and last.endswith(
        "s (connection refused by alpha.example:22 (is sshd running?)))"), last
    assert len(_notes(err)) == 1


@pytest.mark.parametrize("json_out", [False, True])
def test_status_of_a_job_whose_site_is_down_shows_it_as_last_seen(site, capsys, json_out):
    """`diamond status` printed only "connection refused" (exit 1): not even the state the
    store holds."""
    job_id = site.job("79", JobState.RUNNING)
    site.refusals = 1
    code, out, err = _run(site, capsys, "status", job_id, *["--json"] * json_out)
    assert code == 1  # a site failed: the contract's exit code
    if json_out:
        got = json.loads(out)
        assert (got["id"], got["state"]) == (job_id, "RUNNING")
    else:
        assert out.startswith(f"{job_id}\tRUNNING\tsim")
    assert err.strip() == (f"diamond: alpha could not be asked about {job_id} ({REFUSED}); "
                           f"its state is shown as last seen")
    site.ends("79")  # back, and it has ended
    code, out, err = _run(site, capsys, "status", job_id)
    assert code == 0 and out.startswith(f"{job_id}\tCOMPLETED") and err == ""


def test_logs_of_a_job_that_wrote_nothing_says_so(site, capsys):
    """`diamond logs` printed nothing at all (exit 0): a blank answer read as broken."""
    (site.root / "job.sh").write_text("#!/bin/bash\ntrue\n")
    assert _run(site, capsys, "submit", "--site", "alpha", str(site.root / "job.sh"))[0] == 0
    job = Store(site.store_path).get_job("alpha:77")
    for path in (job.stdout_path, job.stderr_path):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text("")
    code, out, err = _run(site, capsys, "logs", "alpha:77")
    assert code == 0 and out == ""
    assert err.strip() == "diamond: alpha:77 has written nothing to its stdout or stderr (yet)"
    Path(job.stdout_path).write_text("hello\n")
    code, out, err = _run(site, capsys, "logs", "alpha:77")
    assert code == 0 and out == "hello\n" and err == ""

"""A copy into a directory follows the rule a fetch follows: it never replaces a file that no
earlier copy to that destination wrote (or that changed since) unless asked to overwrite, and
it lists each file it left as it was. `diamond transfer -r` and a file copied into a
directory, through the command line in this process, on a site `alpha` on the local transport
(no test bed); a job's stage-out goes through the same copy (tests/test_staging.py runs it
on the test bed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diamond_jupyter.cli.main import main
from diamond_jupyter.transfer.sftp import NOT_REPLACED


@pytest.fixture
def here(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("DIAMOND_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "sites.yaml").write_text(
        f"sites:\n  - name: alpha\n    transport: {{kind: local}}\n"
        f"    workdir: {tmp_path / 'work'}\nstore: {tmp_path / 'store.sqlite3'}\n")
    results = tmp_path / "results"
    (results / "sub").mkdir(parents=True)
    (results / "out.txt").write_text("job output 1\n")
    (results / "sub" / "log.txt").write_text("log 1\n")
    (results / "notes.txt").write_text("the job's notes\n")
    return tmp_path


def _transfer(here: Path, capsys, *args: str) -> tuple[int, dict, str]:
    code = main(["transfer", "-r", f"alpha:{here / 'results'}", *args, "--config",
                 str(here / "sites.yaml"), "--json"])
    got = capsys.readouterr()
    return code, json.loads(got.out), got.err


def test_transfer_r_leaves_a_file_it_did_not_write_and_lists_it(here, capsys):
    dest = here / "mine"
    dest.mkdir()
    (dest / "notes.txt").write_text("my own notes, not the job's\n")
    code, rec, _ = _transfer(here, capsys, str(dest))
    assert code == 0 and rec["state"] == "SUCCEEDED", rec
    assert (dest / "notes.txt").read_text() == "my own notes, not the job's\n"  # kept
    assert (dest / "out.txt").read_text() == "job output 1\n"
    assert (dest / "sub" / "log.txt").read_text() == "log 1\n"
    assert rec["data"]["skipped"] == [f"notes.txt: {NOT_REPLACED}"]
    assert sorted(f["path"] for f in rec["data"]["files"]) == ["out.txt", "sub/log.txt"]


def test_transfer_r_again_replaces_only_what_its_earlier_copy_wrote(here, capsys):
    dest = here / "mine"
    assert _transfer(here, capsys, str(dest))[0] == 0
    (here / "results" / "out.txt").write_text("job output 2, longer\n")  # the job ran again
    (here / "results" / "sub" / "log.txt").write_text("log 2\n")
    (dest / "sub" / "log.txt").write_text("edited by hand\n")  # changed since the copy
    code = main(["transfer", "-r", f"alpha:{here / 'results'}", str(dest), "--config",
                 str(here / "sites.yaml")])
    err = capsys.readouterr().err
    assert code == 0
    assert (dest / "out.txt").read_text() == "job output 2, longer\n"  # ours: replaced
    assert (dest / "sub" / "log.txt").read_text() == "edited by hand\n"  # changed: kept
    assert f"diamond: skipped sub/log.txt: {NOT_REPLACED}" in err.splitlines()


def test_transfer_r_overwrite_replaces_every_file(here, capsys):
    dest = here / "mine"
    dest.mkdir()
    (dest / "notes.txt").write_text("my own notes\n")
    code, rec, _ = _transfer(here, capsys, str(dest), "--overwrite")
    assert code == 0 and "skipped" not in rec["data"]
    assert (dest / "notes.txt").read_text() == "the job's notes\n"


def test_a_file_copied_into_a_directory_keeps_the_file_there(here, capsys):
    dest = here / "mine"
    dest.mkdir()
    (dest / "out.txt").write_text("mine\n")
    code = main(["transfer", f"alpha:{here / 'results' / 'out.txt'}", str(dest), "--config",
                 str(here / "sites.yaml")])
    err = capsys.readouterr().err
    assert code == 0 and (dest / "out.txt").read_text() == "mine\n"
    assert f"diamond: skipped out.txt: {NOT_REPLACED}" in err.splitlines()
    # named in full, the destination file is what the user asked to write: replaced
    code = main(["transfer", f"alpha:{here / 'results' / 'out.txt'}", str(dest / "out.txt"),
                 "--config", str(here / "sites.yaml")])
    capsys.readouterr()
    assert code == 0 and (dest / "out.txt").read_text() == "job output 1\n"


async def test_a_jobs_stage_out_leaves_a_file_it_did_not_write_and_says_so(tmp_path,
                                                                           monkeypatch):
    """Stage-out replaced whatever the destination directory held with what the job wrote."""
    import asyncio

    from test_wait_unreachable import Site as FakeSlurm

    from diamond_jupyter.federation import Federation
    from diamond_jupyter.model import JobSpec, JobState, StageEntry

    site = FakeSlurm(tmp_path, monkeypatch)
    results = tmp_path / "results"
    results.mkdir()
    (results / "out.txt").write_text("job output\n")
    (results / "notes.txt").write_text("the job's notes\n")
    dest = tmp_path / "back"
    dest.mkdir()
    (dest / "notes.txt").write_text("my own notes\n")
    site.ends("77")  # the job has ended by the first look at the queue
    fed = Federation(site.config, min_poll_s=0.2, poll_interval_s=0.5)
    await fed.start(recover=False)
    try:
        spec = JobSpec(name="s", command="true", stage_out=[StageEntry(
            source=str(results), destination=str(dest), recursive=True)])
        job = await fed.submit(spec, "alpha")

        async def staged_out():
            async for ev in fed.events(since=0):
                if ev.kind == "stage.out.done" and ev.job_id == job.id:
                    return ev
        done = await asyncio.wait_for(staged_out(), 60)
        assert done.data["skipped"] == [f"{dest}: notes.txt: {NOT_REPLACED}"]
        assert (dest / "notes.txt").read_text() == "my own notes\n"
        assert (dest / "out.txt").read_text() == "job output\n"
        ended = fed.job(job.id)
        assert ended.state == JobState.COMPLETED
        assert ended.reason == f"stage-out left 1 file(s) as they were: {dest}: notes.txt: " \
                               f"{NOT_REPLACED}"
    finally:
        await fed.close()

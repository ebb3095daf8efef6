"""What runs again from the store is what the user gave, secrets included; the store file
itself never holds them in clear (store/seal.py).

Before: a workflow's steps, a stuck job moved elsewhere and a staging resumed after a
restart were submitted from the store's redacted spec, so `export WANDB_API_KEY=...` ran as
`export WANDB_API_KEY=***`."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from diamond_jupyter.federation_stuck import StuckMixin
from diamond_jupyter.model import Dependency, JobSpec
from diamond_jupyter.store import REDACTED, Store
from diamond_jupyter.store.seal import KEY_ENV, SealError, key_file_for

SECRET = "wbk-9f2c1e7d6a5b4c3d2e1f"
SCRIPT = f"#!/bin/bash\n#SBATCH -t 5\nexport WANDB_API_KEY={SECRET}\npython train.py\n"


@pytest.fixture(autouse=True)
def _no_env_key(monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)


def _bytes_on_disk(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*")
                    if p.is_file() and not p.name.endswith(".key"))  # not the .engines dir


def test_a_job_with_a_secret_runs_again_as_given_and_the_store_shows_it_redacted(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    job = store.record_intent("alpha", "tok1", JobSpec(name="train", script=SCRIPT))
    assert f"WANDB_API_KEY={REDACTED}" in store.get_job(job.id).spec.script
    assert store.spec_to_run(job).script == SCRIPT
    assert SECRET.encode() not in _bytes_on_disk(store.path)  # the file, its WAL and shm
    key = key_file_for(store.path)
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    # another process (a restart) opens it with the same key file
    again = Store(tmp_path / "s.sqlite")
    assert again.spec_to_run(again.get_job(job.id)).script == SCRIPT


def test_a_spec_without_secrets_is_not_sealed_and_makes_no_key(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    plain = JobSpec(name="plain", script="#!/bin/bash\necho hi\n")
    job = store.record_intent("alpha", "tok2", plain)
    assert store.spec_to_run(job).script == plain.script
    assert store._read("SELECT sealed_spec FROM jobs")[0][0] is None
    assert not key_file_for(store.path).exists()


def test_upsert_keeps_the_sealed_spec(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    job = store.record_intent("alpha", "tok3", JobSpec(name="t", script=SCRIPT))
    bound = store.bind_native_id("tok3", "42")
    stored = store.upsert_job(bound)
    assert store.spec_to_run(stored).script == SCRIPT, job.id


def test_a_dependency_moved_on_a_queued_job_reaches_its_sealed_spec_too(tmp_path):
    """A workflow retry moves a kept job's afterok (`record_dependencies`): what runs again
    waits on the new job, secrets still as given; the store file still holds none."""
    store = Store(tmp_path / "s.sqlite")
    spec = JobSpec(name="t", script=SCRIPT, dependencies=[Dependency(job_ids=["41"])])
    store.record_intent("alpha", "tok5", spec)
    job = store.bind_native_id("tok5", "42")
    moved = [Dependency(job_ids=["43"]), Dependency(kind="afterany", job_ids=["44"])]
    assert store.record_dependencies(job.id, moved) is not None
    again = Store(tmp_path / "s.sqlite")
    assert again.get_job(job.id).spec.dependencies == moved
    assert again.spec_to_run(again.get_job(job.id)).dependencies == moved
    assert again.spec_to_run(again.get_job(job.id)).script == SCRIPT
    assert store.record_dependencies(job.id, moved) is None  # said once
    assert SECRET.encode() not in _bytes_on_disk(store.path)


def test_a_workflow_runs_its_steps_as_given(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    spec = {"name": "w", "steps": [{"name": "a", "script": SCRIPT}]}
    rec = store.create_workflow("w", spec, ["a"])
    assert REDACTED in rec.spec["steps"][0]["script"]
    assert store.workflow_spec_to_run(rec) == spec
    assert SECRET.encode() not in _bytes_on_disk(store.path)


def test_a_lost_key_is_an_error_never_the_redacted_text(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    job = store.record_intent("alpha", "tok4", JobSpec(name="t", script=SCRIPT))
    rec = store.create_workflow("w", {"name": "w", "steps": [{"name": "a", "script": SCRIPT}]},
                                ["a"])
    key_file_for(store.path).unlink()
    fresh = Store(tmp_path / "s.sqlite")
    with pytest.raises(SealError, match=r"no key to open sealed secrets.*s\.sqlite\.key"):
        fresh.spec_to_run(job)
    with pytest.raises(SealError, match="no key"):
        fresh.workflow_spec_to_run(rec)
    # a key made since (another one) does not open it either, and says so
    other = Store(tmp_path / "t.sqlite")
    other.record_intent("alpha", "tok5", JobSpec(name="t", script=SCRIPT))
    key_file_for(store.path).write_bytes(key_file_for(other.path).read_bytes())
    key_file_for(store.path).chmod(0o600)  # the user's own (one others read is refused)
    with pytest.raises(SealError, match="cannot be opened with this key"):
        Store(tmp_path / "s.sqlite").spec_to_run(job)


def test_the_key_can_come_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, Fernet.generate_key().decode())
    store = Store(tmp_path / "s.sqlite")
    job = store.record_intent("alpha", "tok6", JobSpec(name="t", script=SCRIPT))
    assert store.spec_to_run(job).script == SCRIPT
    assert not key_file_for(store.path).exists()  # no key written beside the store
    monkeypatch.setenv(KEY_ENV, "not-a-key")
    with pytest.raises(SealError, match=rf"\${KEY_ENV} is not a Fernet key"):
        Store(tmp_path / "s.sqlite").spec_to_run(job)


def test_a_stuck_job_is_resubmitted_with_its_secret(tmp_path):
    class Fed(StuckMixin):
        sites: dict = {}

    fed = Fed()
    fed.store = Store(tmp_path / "s.sqlite")
    job = fed.store.record_intent("alpha", "tok7", JobSpec(name="t", script=SCRIPT))
    assert fed.original_spec(fed.store.get_job(job.id)).script == SCRIPT


def test_the_key_file_is_made_once_by_concurrent_stores(tmp_path):
    a, b = Store(tmp_path / "s.sqlite"), Store(tmp_path / "s.sqlite")
    ja = a.record_intent("alpha", "tok8", JobSpec(name="t", script=SCRIPT))
    jb = b.record_intent("alpha", "tok9", JobSpec(name="t", script=SCRIPT))
    assert a.spec_to_run(jb).script == SCRIPT and b.spec_to_run(ja).script == SCRIPT
    assert os.path.getsize(key_file_for(a.path)) == 45  # one key and its newline


def test_a_flux_arrays_task_ids_keep_the_secret_metadata_of_its_sealed_spec(tmp_path):
    """A job array bound with its tasks' ids (a Flux site's): the ids join the sealed copy's
    metadata as given, not the store's redacted metadata over it."""
    store = Store(tmp_path / "s.sqlite")
    spec = JobSpec(name="t", script=SCRIPT, metadata={"api_token": SECRET, "run": "7"})
    store.record_intent("alpha", "tok5", spec)
    job = store.bind_native_id("tok5", "f1", task_ids={"1": "f1", "2": "f2"})
    assert job.spec.metadata["api_token"] == REDACTED
    ran = store.spec_to_run(job)
    assert ran.metadata == {"api_token": SECRET, "run": "7",
                            "flux_task_ids": {"1": "f1", "2": "f2"}}
    assert ran.script == SCRIPT

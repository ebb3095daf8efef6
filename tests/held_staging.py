"""A held job whose stage-in is still copying, without the test bed: a local Slurm site
(`here`, fake `sbatch`/`squeue`/`scontrol` that note each call) and a data site `archive`
whose SSH host refuses connections, so its copies wait out a long retry; a later sites file
makes `archive` a local directory, so an engine started on it finishes the stage-in."""

from __future__ import annotations

import getpass
from pathlib import Path
from typing import Any

import yaml
from local_slurm import LocalSlurmQueue

from diamond_jupyter.federation import Federation
from diamond_jupyter.model import JobSpec, StageEntry
from diamond_jupyter.sites import token_tag
from diamond_jupyter.store import Store

NATIVE_ID = "4301"


class HeldStaging:
    def __init__(self, tmp_path: Path, *, backoff_s: float = 3600) -> None:
        self.tmp = tmp_path
        self.backoff_s = backoff_s  # the wait before a copy's second try
        self.queue = LocalSlurmQueue(tmp_path, "here")
        self.store = tmp_path / "store.sqlite"
        self.calls = tmp_path / "scheduler-calls.txt"
        self.calls.write_text("")
        self.data = tmp_path / "archive"
        self.data.mkdir()
        (self.data / "in.dat").write_text("input words\n")
        (tmp_path / "wd").mkdir()
        bin_dir = self.queue.bin_dir
        line = (f"{NATIVE_ID}|PENDING|N/A|N/A|2026-01-01T00:00:00|10:00|1|1|"
                f"{getpass.getuser()}|debug|N/A||JobHeldUser|$tok|staged")
        for name, body in (
                ("sbatch", f'for last; do :; done\n'
                           f'tok=$(grep -o "{token_tag("")}[0-9a-f]*" "$last" | head -n 1)\n'
                           f'echo "{line}" >> {self.queue.queue}\necho {NATIVE_ID}\n'),
                ("scontrol", ""), ("scancel", "")):
            path = bin_dir / name
            path.write_text(f'#!/bin/sh\necho "{name} $*" >> {self.calls}\n{body}')
            path.chmod(0o755)

    def sites_file(self, *, archive_reachable: bool) -> Path:
        """The sites file: `archive` an SSH host nobody listens on (its copies retried
        `backoff_s` later), or, once reachable, a local directory."""
        archive: dict[str, Any] = {"name": "archive", "transport": (
            {"kind": "local"} if archive_reachable else
            {"kind": "ssh", "host": "127.0.0.1", "port": 9, "connect_timeout_s": 2})}
        path = self.tmp / f"sites-{'up' if archive_reachable else 'down'}.yaml"
        path.write_text(yaml.safe_dump({
            "sites": [self.queue.site.cfg.model_dump(mode="json"), archive],
            "transfers": {"attempts": 2, "backoff_s": self.backoff_s}, "store": str(self.store)}))
        path.chmod(0o600)
        return path

    def engine(self, *, archive_reachable: bool) -> Federation:
        return Federation(self.sites_file(archive_reachable=archive_reachable),
                          store=Store(self.store), poll_interval_s=3600, min_poll_s=3600)

    def spec(self, *, stage_out: bool = False) -> JobSpec:
        """The job: its stage-in from archive; with `stage_out`, its input copied back
        after it (its staging then lasts until the job has ended)."""
        outs = [StageEntry(source="in.dat", destination=f"archive:{self.data}/out.dat")]
        return JobSpec(name="staged", command="cat in.dat",
                       working_directory=str(self.tmp / "wd"),
                       stage_in=[StageEntry(source=f"archive:{self.data}/in.dat",
                                            destination="in.dat")],
                       stage_out=outs if stage_out else [])

    def releases(self) -> list[str]:
        return [c for c in self.calls.read_text().splitlines()
                if c.startswith("scontrol release")]

"""A local Slurm site at the wire level: a real `Site` on the local transport whose `squeue`
prints the queue a test writes (a line of SQUEUE_FIELDS per job), for recovery by token
without the test bed."""

from __future__ import annotations

import getpass
from pathlib import Path

from diamond_jupyter.config import SiteConfig, TransportConfig
from diamond_jupyter.sites import Site, token_tag


class LocalSlurmQueue:
    def __init__(self, tmp_path: Path, site: str = "alpha") -> None:
        bin_dir = tmp_path / f"bin-{site}"
        bin_dir.mkdir()
        self.queue = tmp_path / f"queue-{site}.txt"
        self.queue.write_text("")
        squeue = bin_dir / "squeue"
        squeue.write_text(f"#!/bin/sh\ncat {self.queue}\n")
        squeue.chmod(0o755)
        self.site = Site(SiteConfig(name=site, scheduler="slurm",
                                    transport=TransportConfig(kind="local"),
                                    preamble=f'PATH={bin_dir}:"$PATH"; export PATH'))

    def add(self, native_id: str, token: str, name: str | None) -> None:
        """The job reaches the queue, pending, with the token in its comment, owned by the
        login (as squeue prints a job the login submitted)."""
        with self.queue.open("a") as f:
            f.write(f"{native_id}|PENDING|N/A|N/A|2026-01-01T00:00:00|10:00|1|1|"
                    f"{getpass.getuser()}|debug|N/A|"
                    f"|Priority|{token_tag(token)}|{name or 'job'}\n")

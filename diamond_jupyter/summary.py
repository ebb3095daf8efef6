"""One row per site, the same for every face (the sidebar, the CLI, the magics, the agent):
capacity and occupancy from a snapshot, counted with the node-usability rule placement uses,
so every face reports the free CPUs placement plans with."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .config import SiteConfig
from .model import SiteSnapshot
from .placement_fit import node_usable

# the sidebar's and the dashboard's site rows carry the first few of a snapshot's warnings
# (a site may print thousands of unreadable lines; the snapshot itself keeps them all) and
# how many there are. Not in SiteSummary: a warning may quote another user's text (a job's
# name), which the agent's tools would have to mark as untrusted.
MAX_ROW_WARNINGS = 10


def row_warnings(snap: SiteSnapshot | None) -> tuple[list[str], int]:
    """The first MAX_ROW_WARNINGS of `snap`'s warnings and how many it has (`warnings`,
    `warnings_total` of a REST site row); none without a snapshot."""
    if snap is None:
        return [], 0
    return snap.warnings[:MAX_ROW_WARNINGS], len(snap.warnings)


class PartitionSummary(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str
    default: bool = False
    max_time_s: int | None = None
    max_nodes: int | None = None
    total_nodes: int = 0


class SiteSummary(BaseModel):
    """A site's row. Counts are None when unknown: no snapshot (offline), no node list (the
    capacity counts), or an unreachable site whose queue was never seen (running, pending)."""

    model_config = ConfigDict(extra="ignore")
    name: str
    scheduler: str
    host: str | None = None
    reachable: bool | None = None
    error: str | None = None
    queue_error: str | None = None  # reachable, but its queue is unknown: why
    taken_at: datetime | None = None
    nodes: int | None = None
    nodes_free: int | None = None  # usable and idle
    cpus_total: int | None = None
    cpus_free: int | None = None  # on usable nodes: what placement can plan with
    gpus_total: int | None = None
    gpus_free: int | None = None
    running: int | None = None
    pending: int | None = None
    partitions: list[PartitionSummary] = Field(default_factory=list)
    speed_factor: float = 1.0
    charge_factor: float = 1.0
    metadata: dict[str, Any] = Field(default_factory=dict)


def site_summary(cfg: SiteConfig, snap: SiteSnapshot | None) -> SiteSummary:
    """The row of one site from its configuration and (unless offline) its snapshot."""
    row = SiteSummary(name=cfg.name, scheduler=cfg.scheduler, host=cfg.transport.host,
                      speed_factor=cfg.speed_factor, charge_factor=cfg.charge_factor,
                      metadata=cfg.metadata)
    if snap is None:
        return row
    row.reachable, row.error, row.taken_at = snap.reachable, snap.error, snap.taken_at
    row.queue_error = snap.queue_error
    row.partitions = [PartitionSummary.model_validate(p.model_dump()) for p in snap.partitions]
    if (snap.reachable and not snap.queue_error) or snap.jobs:
        row.running, row.pending = len(snap.running), len(snap.pending)
    row.nodes = len(snap.nodes)
    if snap.nodes:
        usable = [n for n in snap.nodes if node_usable(n)]
        row.nodes_free = sum(1 for n in usable if n.state.lower().startswith("idle"))
        row.cpus_total = sum(n.cpus for n in snap.nodes)
        row.cpus_free = sum(max(n.cpus - n.cpus_allocated, 0) for n in usable)
        row.gpus_total = sum(n.gpus for n in snap.nodes)
        row.gpus_free = sum(max(n.gpus - n.gpus_allocated, 0) for n in usable)
    return row

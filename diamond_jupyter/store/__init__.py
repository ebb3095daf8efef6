"""The store: one SQLite file shared by the server, the CLI and kernels; it loses nothing.

Durability and concurrency choices:
- WAL mode: readers never block the writer; several processes share the file, each with its
  own connection. Every write is one short `BEGIN IMMEDIATE` transaction, so the write lock is
  taken up front and waits in `busy_timeout` (a deferred read-then-write transaction could
  fail with SQLITE_BUSY without waiting). Writes are serialized, so event seqs become visible
  in commit order: a reader following `events_since(last)` never skips one.
- `synchronous=NORMAL` by default: in WAL mode a commit survives a process crash (SIGKILL)
  and can only be lost on power/OS failure. The submit intent (and transfer submissions) are
  written with `synchronous=FULL`: if the intent were lost after the scheduler accepted the
  job, a restart could neither find nor dedupe that job. A FULL commit also syncs every
  earlier NORMAL commit in the WAL. The binding of a native id is NORMAL: see
  `bind_native_id`.
- Event and state change are written in the same transaction (`apply_state`).
- Secrets have no column; every JSON blob and free text goes through `redact()`.
"""

from __future__ import annotations

from .codec import REDACTED, hold_secret_values, hold_site_token, redact, redact_environment
from .db import SCHEMA_VERSION, StoreError, default_store_path
from .fetches import FetchesMixin
from .hedges import HedgeRecord, HedgesMixin
from .jobs import FinishedJobs, JobsMixin, plan_taken, unknown_job_message
from .model import TaskRecord, TaskStep, TransferRecord
from .tasks import TasksMixin
from .transfers import NewestTransfers, TransfersMixin
from .usage import UsageMixin
from .waits import WaitsMixin
from .windows import NewestJobs, WindowsMixin
from .workflows import StepRecord, WorkflowRecord, WorkflowsMixin

__all__ = ["REDACTED", "SCHEMA_VERSION", "FinishedJobs", "HedgeRecord", "NewestJobs",
           "NewestTransfers", "Store",
           "StoreError",
           "TaskRecord", "TaskStep", "TransferRecord", "StepRecord", "WorkflowRecord",
           "default_store_path", "hold_secret_values", "hold_site_token", "plan_taken", "redact",
           "redact_environment", "unknown_job_message"]


class Store(JobsMixin, TasksMixin, TransfersMixin, WorkflowsMixin, HedgesMixin, WaitsMixin,
            UsageMixin, FetchesMixin, WindowsMixin):
    """SQLite store; one connection per process, guarded by a lock (thread-safe)."""

"""The store's own records: transfers and agent tasks (jobs and events are in `..model`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field


class TransferRecord(BaseModel):
    id: str
    submission_id: str | None = None  # Globus idempotency key
    kind: str  # globus, sftp, ...
    src: str
    dst: str
    state: str = "PENDING"
    bytes: int | None = None
    checksum: str | None = None
    error: str | None = None
    data: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
    updated_at: datetime


class TaskStep(BaseModel):
    task_id: str
    n: int
    kind: str
    at: datetime
    data: dict[str, Any] = Field(default_factory=dict)


class TaskRecord(BaseModel):
    id: str
    state: str = "running"  # running, waiting, done, failed, cancelled (not enforced)
    prompt: str
    data: dict[str, Any] = Field(default_factory=dict)
    waiting_on: list[str] = Field(default_factory=list)  # job ids / transfer ids / event kinds
    created_at: datetime
    updated_at: datetime
    steps: list[TaskStep] = Field(default_factory=list)

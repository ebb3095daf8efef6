"""Globus Transfer: documents from the sites config, idempotent submission, task status.

Blocking calls (the SDK uses requests); the manager runs them in threads. The submission id
is obtained and stored BEFORE the submit, so a retry (after a timeout, a 5xx, or a restart)
resubmits with the same id and Globus creates at most one task.
"""

from __future__ import annotations

import re
import time
from typing import Any

import globus_sdk

from ..config import SiteConfig
from ..model import BadInput, SiteError, visible
from .globus_auth import GlobusAuth

TERMINAL = {"SUCCEEDED", "FAILED"}


class GlobusUnreachable(SiteError):
    """Globus could not be asked (network error, 5xx, 429): worth asking again later."""


def _transient(e: globus_sdk.GlobusAPIError) -> bool:
    return e.http_status >= 500 or e.http_status == 429


def map_path(cfg: SiteConfig, path: str) -> str:
    """A path on the site as the site's collection names it (longest `globus_path_map` prefix;
    `~` is the collection's home `/~/`)."""
    if not cfg.globus_collection:
        raise BadInput(f"site {cfg.name} has no globus_collection")
    best = ""
    for prefix in cfg.globus_path_map:
        p = prefix.rstrip("/") or "/"
        if (path == p or path.startswith(p if p == "/" else p + "/")) and len(p) > len(best):
            best = p
    if best:
        target = cfg.globus_path_map.get(best) or cfg.globus_path_map.get(best + "/") or "/"
        rest = path[len(best):].lstrip("/")
        return target.rstrip("/") + "/" + rest if rest else target
    if path == "~" or path.startswith("~/"):
        return "/~/" + path[2:]
    if not path.startswith("/"):
        return "/~/" + path  # relative: the login home, as over SSH
    return path


# A Globus task id is a UUID. The SDK puts it in the request's path as given
# (`/v0.10/task/{id}/cancel`): an answer carrying `../endpoint/...` would have sent the user's
# token to another route of the API.
_TASK_ID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")


def task_id_of(value: Any, where: str) -> str:
    """`value` as a Globus task id; SiteError naming `where` it came from otherwise."""
    if not isinstance(value, str) or not _TASK_ID.fullmatch(value):
        raise SiteError(f"Globus task id {visible(repr(value))[:80]} from {where} is not a "
                        "task id (a UUID): not used")
    return value


class GlobusMover:
    def __init__(self, auth: GlobusAuth | None = None, *, retries: int = 3,
                 retry_delay_s: float = 1.0) -> None:
        self.auth = auth or GlobusAuth()
        self.retries, self.retry_delay_s = retries, retry_delay_s
        self._client: globus_sdk.TransferClient | None = None

    @property
    def client(self) -> globus_sdk.TransferClient:
        if self._client is None:
            self._client = self.auth.transfer_client()
        return self._client

    def submission_id(self) -> str:
        return str(self.client.get_submission_id()["value"])

    @staticmethod
    def describe(src: SiteConfig, src_path: str, dst: SiteConfig, dst_path: str,
                 recursive: bool) -> dict[str, Any]:
        """What is stored with the record and becomes the document (no secrets)."""
        return {"source_collection": src.globus_collection, "source_path": map_path(src, src_path),
                "destination_collection": dst.globus_collection,
                "destination_path": map_path(dst, dst_path), "recursive": recursive}

    @staticmethod
    def document(d: dict[str, Any], submission_id: str, label: str) -> globus_sdk.TransferData:
        doc = globus_sdk.TransferData(d["source_collection"], d["destination_collection"],
                                      label=label[:128], submission_id=submission_id,
                                      verify_checksum=True)
        doc.add_item(d["source_path"], d["destination_path"], recursive=d["recursive"])
        if d.get("skip_hidden"):  # a tool call's copy: no hidden entry, at any depth
            doc.add_filter_rule(".*", method="exclude")
        return doc

    def submit(self, d: dict[str, Any], submission_id: str, label: str) -> str:
        """Submit (retrying transient failures with the same submission id); the task id."""
        doc = self.document(d, submission_id, label)
        last: Exception | None = None
        for attempt in range(self.retries):
            try:
                res = self.client.submit_transfer(doc)
                return task_id_of(res["task_id"], "the answer to a transfer submit")
            except globus_sdk.GlobusAPIError as e:
                if not _transient(e):
                    raise SiteError(f"Globus refused the transfer: {e.code}: {e.message}") \
                        from None
                last = e
            except globus_sdk.NetworkError as e:
                last = e
            if attempt + 1 < self.retries and self.retry_delay_s:
                time.sleep(self.retry_delay_s * 2 ** attempt)  # retry pacing, in a thread
        raise SiteError(f"Globus submit failed after {self.retries} attempts: {last}")

    def task(self, task_id: str) -> dict[str, Any]:
        """The task document, its fields checked (`checked_task`); GlobusUnreachable when
        Globus could not answer, SiteError when its answer is no task document."""
        task_id_of(task_id, "the transfer's record")
        try:
            return checked_task(self.client.get_task(task_id).data, task_id)
        except globus_sdk.GlobusAPIError as e:
            cls = GlobusUnreachable if _transient(e) else SiteError
            raise cls(f"Globus task {task_id}: {e.http_status} {e.code}: {e.message}") from None
        except globus_sdk.NetworkError as e:
            raise GlobusUnreachable(f"Globus task {task_id}: network error: {e}") from None

    def cancel(self, task_id: str) -> str:
        task_id_of(task_id, "the transfer's record")
        try:
            return str(self.client.cancel_task(task_id)["code"])
        except globus_sdk.GlobusAPIError as e:
            raise SiteError(f"cannot cancel Globus task {task_id}: {e.message}") from None

    @staticmethod
    def failure(task: dict[str, Any]) -> str:
        fatal = task.get("fatal_error")
        fatal = fatal if isinstance(fatal, dict) else {}
        said = [fatal.get("description"), task.get("nice_status_details"),
                task.get("nice_status"), fatal.get("code")]
        return next((v for v in said if isinstance(v, str) and v), "the task failed")


STATUSES = ("ACTIVE", "INACTIVE", "SUCCEEDED", "FAILED")
COUNTS = ("bytes_transferred", "bytes_expected", "files", "files_transferred")
MAX_COUNT = 2 ** 62  # bytes or files: past what SQLite's integers and JSON readers keep


def checked_task(data: Any, task_id: str) -> dict[str, Any]:
    """Globus's answer about task `task_id` as the engine reads it: a mapping whose status is
    one of STATUSES and whose counts (COUNTS) are whole numbers from 0 to MAX_COUNT (or
    absent). SiteError naming the field otherwise: a count of "lots", 1e400 or 10**30
    stopped the transfer's follower with a Python error (the transfer stayed ACTIVE for
    ever), and an unknown status kept it asking for ever."""
    def bad(what: str) -> SiteError:
        return SiteError(f"Globus task {task_id}: {what}: not a task document's; the "
                         "transfer is not followed further")
    if not isinstance(data, dict):
        raise bad(f"the answer is {type(data).__name__}, not a mapping")
    status = data.get("status", "ACTIVE")
    if status not in STATUSES:
        raise bad(f"status {visible(repr(status))[:80]} (one of {', '.join(STATUSES)})")
    for key in COUNTS:
        v = data.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)
                              or not 0 <= v <= MAX_COUNT):
            raise bad(f"{key} {visible(repr(v))[:80]} (a whole number from 0 to {MAX_COUNT})")
    return dict(data)

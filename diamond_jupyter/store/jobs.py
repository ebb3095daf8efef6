"""Jobs and events in the store: submission intents, native-id binding, state changes (each
written with its event in one transaction) and the event log readers follow."""

from __future__ import annotations

import json
import re
import sqlite3
import time
import unicodedata
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, NamedTuple

from .. import leases
from ..model import (
    TASK_IDS,
    TASKS_EXPANDED,
    BadInput,
    Dependency,
    DiamondError,
    Event,
    Job,
    JobSpec,
    JobState,
    JobStatus,
    SiteError,
    array_task_counts,
    hedged_reason,
    provisional_id,
    utcnow,
)
from ..model import task_ids as task_ids_of
from .codec import (
    from_ts,
    redact,
    redacted_js,
    row_to_event,
    row_to_job,
    row_to_job_fields,
    spec_js_sealed,
    to_js,
    to_ts,
)
from .db import IN_CHUNK, Database

_PENDING_ID = re.compile(r"^(?P<site>[^:]+):pending-(?P<token>.+)$")
# what no scheduler's job id holds and a path or a command line would read otherwise
_UNUSABLE_ID = re.compile(r"[/\\\s\x00-\x1f\x7f-\x9f\u2028\u2029]|\.\.")
MAX_EVENT_PREFIXES = 200  # "KIND.*" terms of one query (SQLite nests ORs at most 1,000 deep)
# a job id's number, as typed: after blanks, a colon typed twice (`alpha::42`) or zeros
# no scheduler writes (`alpha:042`)
_LEADING_NUMBER = re.compile(r"[\s:]*0*([0-9]{1,19})(?![0-9])")
_TERMINAL_SQL = "state IN ('COMPLETED','FAILED','CANCELLED','TIMEOUT')"
# the `jobs_waiting` index's WHERE (schema v13), as written there
_WAITING_SQL = (f"native_id IS NOT NULL AND NOT {_TERMINAL_SQL} AND "
                "json_array_length(spec, '$.dependencies') > 0")
_TIME_FIELDS = ("submitted_at", "started_at", "ended_at")


class FinishedJobs(NamedTuple):
    """The store's recently finished jobs (`JobsMixin.finished_jobs`), newest first."""
    ended: list[Job]  # COMPLETED, FAILED or TIMEOUT
    completed: list[Job]  # COMPLETED only, as far back as the limit takes them


MAX_SHOWN_ID = 80  # an unknown job id longer than this is shown cut in its error


def plan_taken(token: str, job: Job) -> DiamondError:
    """The refusal of submission `token` (an approved plan) that `job` already holds: the
    same words whichever check of whichever engine finds it. Closed as never submitted:
    BadInput (sending it again would not help), else SiteError (sent, or being sent)."""
    if job.state.terminal and job.native_id is None:
        return BadInput(f"the submission {token} was closed as never submitted ({job.id}: "
                        f"{job.reason or job.state.value}): a plan is sent once; approve a "
                        "new plan to submit the job")
    return SiteError(f"the submission {token} is already in flight ({job.id}): it is sent once")


def unknown_job_message(job_id: str, meant: list[str] | None = None) -> str:
    """Not found vs malformed, so the message never contradicts the id it names; `meant`:
    stored ids the user probably meant (`12345` copied from squeue, `Alpha:7` for alpha:7)."""
    site, sep, native = job_id.partition(":")
    hint = f"did you mean {' or '.join(meant[:3])}? " if meant else ""
    # a pasted blob (10 kB) is named by its start and length, not echoed whole
    shown = repr(job_id) if len(job_id) <= MAX_SHOWN_ID else \
        f"{job_id[:MAX_SHOWN_ID // 2]!r}... ({len(job_id)} characters)"
    if sep and site and native:
        return f"no job {shown} in the store ({hint}`diamond jobs` lists the known ones)"
    return (f"job ID {shown} is malformed: expected SITE:NUMBER, e.g. alpha:42 (or a "
            f"job's submission token){'; ' + hint.rstrip() if hint else ''}")


class JobsMixin(Database):
    """Events and jobs."""

    if TYPE_CHECKING:
        def _rekey_waiting(self, c: sqlite3.Connection, old: str, new: str) -> None: ...

    # -- events ---------------------------------------------------------------------------------

    def _event(self, c: sqlite3.Connection, kind: str, job_id: str | None = None,
               site: str | None = None, data: dict[str, Any] | None = None,
               at: datetime | None = None) -> Event:
        at = at or utcnow()
        blob, stored = redacted_js(data or {})
        cur = c.execute("INSERT INTO events (kind, at, job_id, site, data) VALUES (?,?,?,?,?)",
                        (kind, to_ts(at), job_id, site, blob))
        return Event(seq=cur.lastrowid, kind=kind, at=at, job_id=job_id, site=site,
                     data=stored)

    def _events(self, c: sqlite3.Connection, kind: str,
                rows: list[tuple[str | None, str | None, dict[str, Any]]]) -> None:
        """`_event` of `kind` for each (job id, site, data) of `rows`, in that order, with one
        statement (a batch's thousand steps: one insert, not one a step)."""
        at = to_ts(utcnow())
        c.executemany("INSERT INTO events (kind, at, job_id, site, data) VALUES (?,?,?,?,?)",
                      [(kind, at, job_id, site, redacted_js(data)[0])
                       for job_id, site, data in rows])

    def append_event(self, event: Event, fence: leases.Fence | None = None) -> Event:
        """Store `event`; with `fence`, only while that lease holds (else LeaseLost)."""
        with self._write() as c:
            self._check_fence(c, fence)
            return self._event(c, event.kind, event.job_id, event.site, event.data, event.at)

    def events_since(self, seq: int = 0, kinds: Iterable[str] | None = None,
                     job_id: str | None = None, limit: int | None = 1000) -> list[Event]:
        """Events with seq > `seq`, oldest first. A kind "job.*" matches by prefix, as
        written (a `%` or `_` in it is no wildcard, case counts). Any number of kinds: the
        exact ones are one parameter (a thousand `OR`s was an SQLite error, a 500 over
        REST), the prefixes one term each (at most MAX_EVENT_PREFIXES)."""
        where, args = ["seq > ?"], [seq]
        if kinds is not None:
            kinds = list(dict.fromkeys(kinds))
            exact = [k for k in kinds if not k.endswith(".*")]
            prefixes = [k[:-1] for k in kinds if k.endswith(".*")]
            if len(prefixes) > MAX_EVENT_PREFIXES:
                raise BadInput(f"kinds: at most {MAX_EVENT_PREFIXES} prefixes (KIND.*), not "
                               f"{len(prefixes)}")
            alts = ["kind IN (SELECT value FROM json_each(?))"] if exact else []
            args += [json.dumps(exact)] if exact else []
            for prefix in prefixes:
                alts.append("substr(kind, 1, ?) = ?")
                args += [len(prefix), prefix]
            where.append(f"({' OR '.join(alts) or '0'})")
        if job_id is not None:
            where.append("job_id = ?")
            args.append(self._resolve_id(job_id))
        sql = f"SELECT * FROM events WHERE {' AND '.join(where)} ORDER BY seq LIMIT ?"
        return [row_to_event(r) for r in self._read(sql, [*args, -1 if limit is None else limit])]

    def last_seq(self) -> int:
        return self._read("SELECT COALESCE(MAX(seq), 0) FROM events")[0][0]

    # -- jobs: submission intents ---------------------------------------------------------------

    def record_intent(self, site: str, token: str, spec: JobSpec | dict[str, Any] | None,
                      placement: dict[str, Any] | None = None,
                      origin: dict[str, Any] | None = None,
                      hedge_group: str | None = None, fence: leases.Fence | None = None,
                      only_new: bool = False) -> Job:
        """Durably record "about to submit" BEFORE the submit command runs (idempotent).
        `hedge_group`: this is one copy of a hedged submission (`create_hedge` first).
        `fence`: the lease of the workflow whose step this is: LeaseLost, and nothing
        recorded, when another engine took the workflow over. `only_new`: SiteError when
        the token is recorded already (another engine submits the same approved plan: it
        alone sends it)."""
        with self._write(durable=True) as c:
            self._check_fence(c, fence)
            job = self._insert_intent(c, site, token, spec, placement, origin, hedge_group,
                                      only_new)
            assert job is not None  # (read back)
            return job

    def _insert_intent(self, c: sqlite3.Connection, site: str, token: str,
                       spec: JobSpec | dict[str, Any] | None,
                       placement: dict[str, Any] | None = None,
                       origin: dict[str, Any] | None = None, hedge_group: str | None = None,
                       only_new: bool = False, read_back: bool = True) -> Job | None:
        """`record_intent`'s row and event, inside the caller's transaction `c`; the job
        read back unless `read_back` is False (a batch's reservation reads none)."""
        if not site or ":" in site or not token or any(ch.isspace() for ch in token):
            raise BadInput(f"bad site {site!r} or token {token!r} for a submission")
        spec = JobSpec.model_validate(spec) if isinstance(spec, dict) else spec
        row = c.execute("SELECT * FROM jobs WHERE token = ?", (token,)).fetchone()
        if row is not None:
            if row["site"] != site:
                raise BadInput(f"token {token!r} already used for {row['id']}")
            if only_new:
                raise plan_taken(token, row_to_job(row))
            return row_to_job(row)
        now, job_id = to_ts(utcnow()), provisional_id(site, token)
        shown, sealed = spec_js_sealed(spec, self.sealer)
        c.execute(
            "INSERT INTO jobs (id, site, name, state, token, workdir, stdout_path, stderr_path,"
            " spec, sealed_spec, placement, origin, created_at, updated_at, hedge_group)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (job_id, site, spec.name if spec else None, JobState.UNKNOWN.value, token,
             spec.working_directory if spec else None, spec.stdout if spec else None,
             spec.stderr if spec else None, shown, sealed, to_js(placement), to_js(origin),
             now, now, hedge_group))
        said: dict[str, Any] = {"name": spec.name if spec else None}
        if hedge_group:
            said["hedge_group"] = hedge_group
        self._event(c, "job.submitting", job_id, site, said)
        return self._job(c, job_id) if read_back else None

    def fill_intent(self, token: str, spec: JobSpec, placement: dict[str, Any] | None = None,
                    fence: leases.Fence | None = None) -> None:
        """The intent of `token`, reserved before its spec was prepared for its site (a
        workflow's batch, `WorkflowsMixin.reserve_step_submits`), given that spec: its name,
        directories and paths as the submit sends them (NORMAL, as a bind: a process crash
        loses nothing in WAL mode; the reserved row is already durable). `fence` as for
        `record_intent`. BadInput for a token without an intent, or one already bound. The
        job is not read back (its bind, next, returns it)."""
        with self._write() as c:
            self._check_fence(c, fence)
            row = c.execute("SELECT * FROM jobs WHERE token = ?", (token,)).fetchone()
            if row is None or row["native_id"] is not None:
                raise BadInput(f"submission {token!r} has no open intent to fill")
            shown, sealed = spec_js_sealed(spec, self.sealer)
            c.execute("UPDATE jobs SET name = ?, workdir = ?, stdout_path = ?, stderr_path = ?,"
                      " spec = ?, sealed_spec = ?, placement = COALESCE(?, placement),"
                      " updated_at = ? WHERE token = ?",
                      (spec.name, spec.working_directory, spec.stdout, spec.stderr, shown,
                       sealed, to_js(placement), to_ts(utcnow()), token))

    def bind_native_id(self, token: str, native_id: str,
                       submitted_at: datetime | None = None,
                       warnings: list[str] | None = None,
                       task_ids: dict[str, str] | None = None) -> Job:
        """The submit returned `native_id`: re-key the intent to "SITE:NATIVE" (idempotent).
        `task_ids`: a job array a Flux site runs as one job per task, each task's id by its
        index (`native_id` the first's), kept in the spec's metadata (TASK_IDS).
        `warnings`: what the submit changed or left out to fit the site, one line each, kept
        as a `job.warnings` event in the same transaction (a crash keeps both or neither).

        Events reference the job id; they are re-keyed in the same transaction, as are agent
        tasks waiting on the provisional id. The provisional id still resolves afterwards.
        A job the monitor already recorded under the new id is merged into the intent.
        Schedulers reuse native ids (a counter wraps, a cluster is rebuilt): an older job
        already holding "SITE:NATIVE" is another job. It is kept, renamed
        "SITE:NATIVE@SUBMITTED" and marked `reused_by`; the plain id names the newest job.
        """
        if not (native_id := str(native_id).strip()):
            raise BadInput("empty native job id")
        if _UNUSABLE_ID.search(native_id) or native_id[0] in "-.":
            # the id becomes "SITE:ID", a fetch's directory "SITE-ID" and an argument
            raise BadInput(f"native job id {native_id[:80]!r} is not a job id: '/', '\\', "
                           "'..', blanks, control characters and a leading '-' or '.' are "
                           "not accepted")
        # NORMAL, not FULL (one fsync less per submit): a bind lost to a power/OS failure (a
        # process crash loses nothing in WAL mode) leaves its FULL intent unbound, the state
        # after a crash between submit and bind: `Federation.recover` finds the job by the
        # token in its name and binds it again. Nothing later in the WAL survives a lost bind.
        with self._write() as c:
            row = c.execute("SELECT * FROM jobs WHERE token = ?", (token,)).fetchone()
            if row is None:
                raise BadInput(f"unknown submission token {token!r}")
            job = row_to_job_fields(row)  # (its spec is not read here)
            if job.native_id is not None:
                if job.native_id == native_id:
                    return row_to_job(row)
                raise DiamondError(f"token {token!r} is already bound to {job.id}; refusing to "
                                   f"also bind {native_id} (duplicate submission?)")
            old_id, new_id = job.id, f"{job.site}:{native_id}"
            other_row = c.execute("SELECT * FROM jobs WHERE id = ?", (new_id,)).fetchone()
            other = row_to_job_fields(other_row) if other_row is not None else None
            if other is not None and (other.token == token or (
                    other.token is None and other_row["created_at"] >= row["created_at"])):
                c.execute("DELETE FROM jobs WHERE id = ?", (new_id,))  # this job, seen first
            elif other is not None:
                self._retire(c, other, new_id)
                other = None
            submitted = to_ts(submitted_at or utcnow())
            c.execute("UPDATE jobs SET id = ?, native_id = ?, submitted_at = COALESCE(submitted_at,"
                      " ?), updated_at = ? WHERE token = ?",
                      (new_id, native_id, submitted, to_ts(utcnow()), token))
            c.execute("UPDATE events SET job_id = ? WHERE job_id = ?", (new_id, old_id))
            self._rekey_waiting(c, old_id, new_id)
            self._event(c, "job.submitted", new_id, job.site,
                        {"native_id": native_id, "previous_id": old_id})
            if warnings:
                self._event(c, "job.warnings", new_id, job.site, {"warnings": warnings})
            if task_ids:
                spec_row = c.execute("SELECT spec, sealed_spec FROM jobs WHERE id = ?",
                                     (new_id,)).fetchone()
                shown = json.loads(spec_row["spec"] or "{}")
                self._update_spec(c, new_id, shown, spec_row["sealed_spec"], {},
                                  metadata={TASK_IDS: task_ids})
            if other is not None:
                self._apply(c, new_id, other.state, source="merge",
                            **{f: getattr(other, f) for f in (*_TIME_FIELDS, "exit_code",
                                                               "reason")})
            source, bound = "submit", None
            if job.state.terminal:  # closed as never submitted, yet the scheduler has it: reopen
                c.execute("UPDATE jobs SET state = 'UNKNOWN', reason = NULL, exit_code = NULL,"
                          " ended_at = NULL WHERE id = ?", (new_id,))
                source = f"submit (reopened from {job.state.value})"
            elif other is None:  # the row as just written: not read again
                bound = job.model_copy(update={
                    "id": new_id, "native_id": native_id,
                    "submitted_at": job.submitted_at or from_ts(submitted)})
            self._apply(c, new_id, JobState.PENDING, source=source,  # no-op if already later
                        job=bound)
            return self._job(c, new_id)

    def _retire(self, c: sqlite3.Connection, old: Job, newer_id: str) -> str:
        """Rename a job whose native id a newer job got to "SITE:NATIVE@SUBMITTED" (UTC),
        with its events and waiting tasks; its token keeps resolving it."""
        when = (old.submitted_at or from_ts(c.execute("SELECT created_at FROM jobs WHERE id = ?",
                                                 (old.id,)).fetchone()[0]))
        base = f"{old.id}@{when.astimezone(timezone.utc):%Y-%m-%dT%H:%M:%SZ}"
        explicit, n = base, 1
        while c.execute("SELECT 1 FROM jobs WHERE id = ?", (explicit,)).fetchone():
            n += 1
            explicit = f"{base}-{n}"
        c.execute("UPDATE jobs SET id = ?, reused_by = ?, updated_at = ? WHERE id = ?",
                  (explicit, newer_id, to_ts(utcnow()), old.id))
        c.execute("UPDATE events SET job_id = ? WHERE job_id = ?", (explicit, old.id))
        self._rekey_waiting(c, old.id, explicit)
        self._event(c, "job.updated", explicit, old.site, {
            "state": old.state.value, "previous": old.state.value,
            "changed": ["id", "reused_by"], "native_id": old.native_id,
            "previous_id": old.id, "reused_by": newer_id,
            "note": f"native id reused by a newer job ({newer_id}); this one is now {explicit}"})
        return explicit

    def intents_without_native_id(self, older_than_s: float | None = None) -> list[Job]:
        """Unbound, unfinished intents: after a crash, look each token up in the queue. Pass
        `older_than_s` > the submit timeout, or another process's submit in flight looks lost."""
        where, args = ["native_id IS NULL", f"NOT {_TERMINAL_SQL}"], []
        if older_than_s is not None:
            where.append("created_at < ?")
            args.append(to_ts(datetime.fromtimestamp(time.time() - older_than_s, timezone.utc)))
        rows = self._read(f"SELECT * FROM jobs WHERE {' AND '.join(where)} ORDER BY created_at",
                          args)
        return [row_to_job(r) for r in rows]

    def intent_age_s(self, token: str) -> float | None:
        """Seconds since the intent with `token` was recorded, by its stored time (so the
        same in every process and after a restart); None for an unknown token."""
        rows = self._read("SELECT created_at FROM jobs WHERE token = ?", (token,))
        made = from_ts(rows[0]["created_at"]) if rows else None
        return None if made is None else time.time() - made.timestamp()

    def mark_never_submitted(self, token: str, reason: str = "never submitted") -> Event | None:
        """Recovery found no job for this intent: close it as FAILED (terminal, kept). Looked
        at under the write transaction: an intent another engine bound meanwhile is not
        closed (DiamondError)."""
        with self._write() as c:
            row = c.execute("SELECT id, native_id FROM jobs WHERE token = ?",
                            (token,)).fetchone()
            if row is None:
                raise BadInput(f"unknown submission token {token!r}")
            if row["native_id"] is not None:
                raise DiamondError(f"{row['id']} was submitted; not marking it "
                                   "never-submitted")
            return self._apply(c, row["id"], JobState.FAILED, reason=reason,
                               source="recovery")

    def set_placement(self, job_id: str, placement: dict[str, Any],
                      said: dict[str, Any] | None = None) -> Event:
        """Record a placement made after the submit (the predicted start of a job sent to an
        explicit site) and, in the same transaction, a "job.updated" event with `said`."""
        with self._write() as c:
            job = self._job(c, self._resolve_id(job_id, c))
            c.execute("UPDATE jobs SET placement = ?, updated_at = ? WHERE id = ?",
                      (to_js(placement), to_ts(utcnow()), job.id))
            # the state it had then: a replay says what a live client was told
            return self._event(c, "job.updated", job.id, job.site,
                               {"state": job.state.value, **(said or {})})

    def record_task_states(self, job_id: str,
                           tasks: dict[str, JobState]) -> tuple[Job, Job] | None:
        """Merge a job array's task states, as its scheduler lists them now, into the stored
        ones (a task's state only moves forward, its first end final, as a job's); (the job
        before, the job after) when a task's state changed, else None. A change is said in
        the same transaction by a "job.updated" event with the array's counts
        (`array_tasks`, as `job_json` gives them): the sidebar's counts follow it."""
        with self._write() as c:
            job = self._job(c, self._resolve_id(job_id, c))
            merged = dict(job.tasks or {})
            for task, state in tasks.items():
                old = merged.get(task)
                # a task not yet kept only while fewer than TASKS_EXPANDED are: a site
                # listing other tasks at each poll grew the row (and every event) unbounded
                if old is None and len(merged) >= TASKS_EXPANDED:
                    continue
                if old is None or (not old.terminal and state.rank >= old.rank):
                    merged[task] = state
            if merged == (job.tasks or {}):
                return None
            c.execute("UPDATE jobs SET tasks = ?, updated_at = ? WHERE id = ?",
                      (to_js({k: v.value for k, v in merged.items()}), to_ts(utcnow()),
                       job.id))
            after = job.model_copy(update={"tasks": merged})
            # the state it had then: a replay says what a live client was told
            self._event(c, "job.updated", job.id, job.site,
                        {"state": job.state.value, "array_tasks": array_task_counts(after)})
            return job, after

    def job_by_token(self, token: str, read_only: bool = False) -> Job | None:
        """The job of submission `token` (None: no intent has it). `read_only`: the job an
        earlier read of the same row returned, shared and unchangeable (store/frozen.py):
        a job read again and again while its row stays the same (a workflow's upstream, a
        followed job at each poll) is decoded once."""
        rows = self._read("SELECT * FROM jobs WHERE token = ?", (token,))
        return row_to_job(rows[0], shared=read_only) if rows else None

    # -- jobs -----------------------------------------------------------------------------------

    def _resolve_id(self, job_id: str, c: sqlite3.Connection | None = None) -> str:
        """Map a provisional "SITE:pending-TOKEN" id, or a bare submission token, to the
        job's current id (ids change on binding and when a newer job reuses the native id)."""
        m = _PENDING_ID.match(job_id)
        if m is not None:
            sql, args = "SELECT id FROM jobs WHERE token = ? AND site = ?", (m["token"], m["site"])
        elif ":" not in job_id and job_id:
            sql, args = "SELECT id FROM jobs WHERE token = ?", (job_id,)
        else:
            return job_id
        rows = c.execute(sql, args).fetchall() if c is not None else self._read(sql, args)
        return rows[0][0] if rows else job_id

    def _job(self, c: sqlite3.Connection, job_id: str, read_only: bool = False,
             spec: bool = True) -> Job:
        """The stored job `job_id` (`read_only`: `row_to_job`'s shared; without `spec`, its
        spec left None: `row_to_job_fields`)."""
        row = c.execute("SELECT * FROM jobs WHERE id = ?", (self._resolve_id(job_id, c),))
        row = row.fetchone()
        if row is None:
            raise BadInput(unknown_job_message(job_id, self._meant(c, job_id)))
        return row_to_job(row, shared=read_only) if spec else row_to_job_fields(row)

    @staticmethod
    def _meant(c: sqlite3.Connection, job_id: str) -> list[str]:
        """Stored job ids an unknown `job_id` probably stands for: a bare native id's jobs on
        every site, the same id in another case, else the jobs its number names (an array
        task or a step of it, `alpha:42_3`, `alpha:42.batch`, a blank copied with it, a
        number of another site's: `beta:42` for alpha:42), this site's first. Full-width
        digits or colon (`alpha:４２`, `alpha：42`, from an input method) are read as ASCII."""
        folded = unicodedata.normalize("NFKC", job_id).strip()
        if folded != job_id and (found := JobsMixin._meant(c, folded)):
            return found
        if ":" not in job_id:
            sql = "SELECT id FROM jobs WHERE native_id = ? ORDER BY created_at DESC"
            return [r[0] for r in c.execute(sql, (job_id,)).fetchall()]
        sql = "SELECT id FROM jobs WHERE id = ? COLLATE NOCASE ORDER BY created_at DESC"
        if found := [r[0] for r in c.execute(sql, (job_id,)).fetchall()]:
            return found
        site, _, native = job_id.partition(":")
        # a task of a job array its Flux site runs as one job per task (its own flux id, as
        # `flux jobs` lists it): the array it belongs to
        sql = ("SELECT jobs.id FROM jobs, json_each(jobs.spec, ?) AS task WHERE jobs.site = ? "
               "AND task.value = ? ORDER BY jobs.created_at DESC")
        if arrays := [r[0] for r in c.execute(sql, (f'$.metadata."{TASK_IDS}"', site.strip(),
                                                    native.strip()))]:
            return arrays
        if not (number := _LEADING_NUMBER.match(native)):
            return []
        sql = ("SELECT id FROM jobs WHERE native_id = ? OR substr(native_id, 1, ?) = ? "
               "ORDER BY site = ? DESC, created_at DESC")  # `42.server`: a PBS id
        n = number.group(1)
        return [r[0] for r in c.execute(sql, (n, len(n) + 1, n + ".", site.strip()))
                if r[0] != job_id]

    def sites_of_native_id(self, native_id: str) -> set[str]:
        """The sites whose stored jobs carry `native_id` (its array, for a task's
        `123_4`/`123[4]`; a PBS `123.server` for `123`, and the reverse)."""
        base = re.split(r"[_\[]", native_id, maxsplit=1)[0]
        names = {native_id, base, base.split(".", 1)[0]} - {""}
        marks = ",".join("?" * len(names))
        sql = (f"SELECT DISTINCT site FROM jobs WHERE native_id IN ({marks})"
               + " OR substr(native_id, 1, ?) = ?" * len(names))
        args: list[Any] = [*names]
        for n in names:
            args += [len(n) + 1, n + "."]
        return {r[0] for r in self._read(sql, args)}

    def get_job(self, job_id: str, read_only: bool = False) -> Job:
        """The job `job_id` names (its id, provisional id or token); BadInput when none.
        `read_only` as for `job_by_token`."""
        with self._lock:
            return self._job(self._conn(), job_id, read_only)

    def jobs_with_ids(self, job_ids: Iterable[str]) -> dict[str, Job]:
        """The stored jobs of `job_ids` (SITE:NATIVE, exactly) by id, an unknown id left out:
        one read per IN_CHUNK of ids, however many there are."""
        wanted = sorted(set(job_ids))
        out: dict[str, Job] = {}
        for i in range(0, len(wanted), IN_CHUNK):
            part = wanted[i:i + IN_CHUNK]
            for r in self._read(f"SELECT * FROM jobs WHERE id IN ({','.join('?' * len(part))})",
                                part):
                out[r["id"]] = row_to_job(r)
        return out

    def task_run_arrays(self, site: str) -> list[Job]:
        """The job arrays of `site` run as one job per task (a Flux site's: TASK_IDS in
        their spec), newest first."""
        rows = self._read("SELECT * FROM jobs WHERE site = ? AND spec LIKE ? "
                          "ORDER BY created_at DESC, rowid DESC", [site, f'%"{TASK_IDS}"%'])
        return [job for r in rows if task_ids_of(job := row_to_job(r))]

    def jobs_with_tokens(self, tokens: Iterable[str]) -> dict[str, Job]:
        """The stored jobs of submission `tokens` by token, an unknown one left out: one read
        per IN_CHUNK of tokens."""
        wanted = sorted(set(tokens))
        out: dict[str, Job] = {}
        for i in range(0, len(wanted), IN_CHUNK):
            part = wanted[i:i + IN_CHUNK]
            for r in self._read("SELECT * FROM jobs WHERE token IN "
                                f"({','.join('?' * len(part))})", part):
                out[r["token"]] = row_to_job(r)
        return out

    def states_of_tokens(self, tokens: Iterable[str]) -> dict[str, JobState]:
        """The stored state of the jobs of submission `tokens` by token, an unknown one left
        out (a state this version does not know read as UNKNOWN): no job decoded, one read
        per IN_CHUNK of tokens."""
        wanted = sorted(set(tokens))
        out: dict[str, JobState] = {}
        for i in range(0, len(wanted), IN_CHUNK):
            part = wanted[i:i + IN_CHUNK]
            for token, state in self._read("SELECT token, state FROM jobs WHERE token IN "
                                           f"({','.join('?' * len(part))})", part):
                out[token] = JobState(state) if state in JobState.__members__ \
                    else JobState.UNKNOWN
        return out

    def state_learned_at(self, job_id: str) -> datetime | None:
        """When the last change of job `job_id`'s state or details (its "job.state" and
        "job.updated" events: a poll's, a push's) was recorded; None when none was (a job
        just submitted: its PENDING, the submit's own, is no observation)."""
        rows = self._read("SELECT at FROM events WHERE job_id = ? AND kind IN ('job.state', "
                          "'job.updated') AND json_extract(data, '$.source') IS NOT 'submit' "
                          "ORDER BY seq DESC LIMIT 1", (job_id,))
        return from_ts(rows[0]["at"]) if rows else None

    def spec_to_run(self, job: Job) -> JobSpec | None:
        """The job's spec as it was given, to submit it again: the stored one where nothing
        was redacted, else the sealed one (SealError when it cannot be opened: the redacted
        text is never what runs)."""
        rows = self._read("SELECT sealed_spec FROM jobs WHERE id = ?", (job.id,))
        if not rows or not rows[0]["sealed_spec"]:
            return job.spec
        whole = self.sealer.unseal(rows[0]["sealed_spec"])
        return JobSpec.model_validate_json(whole, context={"stored": True})

    def record_dependencies(self, job_id: str, deps: list[Dependency],
                            fence: leases.Fence | None = None) -> Event | None:
        """The dependencies job `job_id`'s scheduler now holds for it (changed while it was
        queued) written into its stored spec, the sealed copy too, with a
        "job.dependencies" event ({dependencies, previous}) in the same transaction. None,
        and nothing written, when the record says so already. `fence` as for
        `record_intent`. SealError (nothing written) when its sealed copy cannot be opened:
        what runs again must not keep the old dependencies."""
        new = [d.model_dump(mode="json") for d in deps]
        with self._write() as c:
            self._check_fence(c, fence)
            job = self._job(c, self._resolve_id(job_id, c))
            row = c.execute("SELECT spec, sealed_spec FROM jobs WHERE id = ?",
                            (job.id,)).fetchone()
            if not row["spec"]:
                raise BadInput(f"{job.id}: the store has no description of this job to "
                               "record its dependencies in")
            shown = json.loads(row["spec"])
            previous = shown.get("dependencies") or []
            if previous == new:
                return None
            self._update_spec(c, job.id, shown, row["sealed_spec"], {"dependencies": new})
            return self._event(c, "job.dependencies", job.id, job.site,
                               {"dependencies": new, "previous": previous})

    def _update_spec(self, c: sqlite3.Connection, job_id: str, shown: dict[str, Any],
                     sealed: str | None, fields: dict[str, Any],
                     metadata: dict[str, Any] | None = None) -> None:
        """Write `fields` into a job's stored spec (`shown`, as stored) and its sealed copy,
        and `metadata`'s keys into each one's own metadata (the sealed copy's secrets kept,
        not replaced by the shown copy's redacted ones)."""
        def updated(spec: dict[str, Any]) -> dict[str, Any]:
            more = {"metadata": {**(spec.get("metadata") or {}), **metadata}} if metadata \
                else {}
            return {**spec, **fields, **more}

        if sealed:
            whole = json.loads(self.sealer.unseal(sealed))
            sealed = self.sealer.seal(json.dumps(updated(whole), separators=(",", ":")))
        c.execute("UPDATE jobs SET spec = ?, sealed_spec = ?, updated_at = ? WHERE id = ?",
                  (to_js(updated(shown)), sealed, to_ts(utcnow()), job_id))

    def upsert_job(self, job: Job) -> Job:
        """Insert a job, or merge non-empty fields into the stored one; state goes through
        the same forward-only rules as `apply_state` (and emits its events)."""
        plain = f"{job.site}:{job.native_id}"
        if not job.id.startswith(f"{job.site}:") or (
                job.native_id and job.id != plain and not job.id.startswith(plain + "@")):
            raise BadInput(f"job id {job.id!r} must be '{job.site}:NATIVE_ID'")
        shown, sealed = spec_js_sealed(job.spec, self.sealer)
        desc = {"name": job.name, "native_id": job.native_id, "token": job.token,
                "workdir": job.workdir, "stdout_path": job.stdout_path,
                "stderr_path": job.stderr_path, "spec": shown, "sealed_spec": sealed,
                "placement": to_js(job.placement), "origin": to_js(job.origin)}
        with self._write() as c:
            now = to_ts(utcnow())
            try:
                if c.execute("SELECT 1 FROM jobs WHERE id = ?", (job.id,)).fetchone() is None:
                    cols = ["id", "site", "state", "created_at", "updated_at", *desc]
                    c.execute(f"INSERT INTO jobs ({','.join(cols)}) VALUES "
                              f"({','.join('?' * len(cols))})",
                              (job.id, job.site, JobState.UNKNOWN.value, now, now, *desc.values()))
                    self._event(c, "job.created", job.id, job.site, {"name": job.name})
                else:
                    sets = [f"{k} = COALESCE(?, {k})" for k in desc]
                    c.execute(f"UPDATE jobs SET {', '.join(sets)}, updated_at = ? WHERE id = ?",
                              (*desc.values(), now, job.id))
            except sqlite3.IntegrityError as e:
                raise BadInput(f"job {job.id}: token {job.token!r} already used ({e})") from e
            self._apply(c, job.id, job.state, exit_code=job.exit_code, reason=job.reason,
                        **{f: getattr(job, f) for f in _TIME_FIELDS})
            return self._job(c, job.id)

    def _filters(self, site: str | None, states: Iterable[JobState | str] | None,
                 name_like: str | None) -> tuple[str, list[Any]]:
        where: list[str] = []
        args: list[Any] = []
        if site is not None:
            where.append("site = ?")
            args.append(site)
        if states is not None:
            vals = [JobState(s).value for s in states]
            where.append(f"state IN ({','.join('?' * len(vals))})" if vals else "0")
            args.extend(vals)
        if name_like:  # case-insensitive substring; % and _ are literal
            esc = name_like.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            where.append("name LIKE ? ESCAPE '\\'")
            args.append(f"%{esc}%")
        return (" WHERE " + " AND ".join(where)) if where else "", args

    def list_jobs(self, site: str | None = None, states: Iterable[JobState | str] | None = None,
                  name_like: str | None = None, limit: int | None = 50, offset: int = 0,
                  order: str = "desc", read_only: bool = False) -> list[Job]:
        """Jobs by creation time ("desc": newest first). `read_only`: for a caller that never
        changes them: shared with other reads (decoded once per row content) and read-only,
        to any depth (a change raises TypeError)."""
        if order.lower() not in ("asc", "desc") or offset < 0 or (limit is not None and limit < 0):
            raise BadInput("order must be asc|desc, limit and offset non-negative")
        o = order.upper()
        vals = None if states is None else list(dict.fromkeys(JobState(s).value
                                                              for s in states))
        if vals and len(vals) > 1 and limit is not None:
            sql, args = self._per_state(vals, site, name_like, o, limit + offset)
            sql += f" ORDER BY created_at {o}, row_order {o} LIMIT ? OFFSET ?"
        else:
            where, args = self._filters(site, vals, name_like)
            sql = f"SELECT * FROM jobs{where} ORDER BY created_at {o}, rowid {o} LIMIT ? OFFSET ?"
        rows = self._read(sql, [*args, -1 if limit is None else limit, offset])
        return [row_to_job(r, read_only) for r in rows]

    def _per_state(self, states: list[str], site: str | None, name_like: str | None,
                   order: str, limit: int) -> tuple[str, list[Any]]:
        """Each state's first `limit` jobs in creation `order` ("ASC"/"DESC"), read from the
        end of its index (jobs_state_created, jobs_site_state_created) and put together,
        with their rowid as `row_order`: how the newest jobs of several states are read
        without sorting every job of those states (`state IN (...)` sorts them all)."""
        where, args = self._filters(site, None, name_like)
        part = (f"SELECT * FROM (SELECT *, rowid AS row_order FROM jobs"
                f"{where}{' AND' if where else ' WHERE'} state = ? "
                f"ORDER BY created_at {order}, rowid {order} LIMIT ?)")
        return (" UNION ALL ".join([part] * len(states)),
                [a for state in states for a in (*args, state, limit)])

    def finished_jobs(self, limit: int) -> FinishedJobs:
        """In one read, newest first: the last `limit` jobs that ended COMPLETED, FAILED or
        TIMEOUT, and the last `limit` that ended COMPLETED (further back where jobs failed):
        what `list_jobs` gives for those states with that limit, without reading twice. For
        estimates: they may be shared with other reads (`list_jobs`' read_only)."""
        ended = [JobState.COMPLETED.value, JobState.FAILED.value, JobState.TIMEOUT.value]
        newest, args = self._per_state(ended, None, None, "DESC", limit)  # 3 x limit at most
        order = "ORDER BY created_at DESC, row_order DESC"
        rows = self._read(
            "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (" + order + ") AS ended_rank, "
            "ROW_NUMBER() OVER (PARTITION BY state = ? " + order + ") AS state_rank "
            f"FROM ({newest})) WHERE ended_rank <= ? OR (state = ? AND state_rank <= ?) "
            + order, [ended[0], *args, limit, ended[0], limit])
        out = FinishedJobs([], [])
        for r in rows:
            job = row_to_job(r, shared=True)
            if r["ended_rank"] <= limit:
                out.ended.append(job)
            if r["state"] == ended[0] and r["state_rank"] <= limit:
                out.completed.append(job)
        return out

    def count_jobs(self, site: str | None = None,
                   states: Iterable[JobState | str] | None = None,
                   name_like: str | None = None) -> int:
        where, args = self._filters(site, states, name_like)
        return self._read(f"SELECT COUNT(*) FROM jobs{where}", args)[0][0]

    def unfinished_jobs(self, site: str | None = None) -> list[Job]:
        """Natively bound jobs not yet in a terminal state (what the monitor follows)."""
        sql = f"SELECT * FROM jobs WHERE native_id IS NOT NULL AND NOT {_TERMINAL_SQL}"
        args: list[Any] = []
        if site is not None:
            sql += " AND site = ?"
            args.append(site)
        return [row_to_job(r) for r in self._read(sql + " ORDER BY created_at", args)]

    def waiting_jobs(self, site: str) -> list[Job]:
        """`site`'s unfinished jobs whose spec holds a scheduler dependency (those a state
        change of another job of the site may release). Read through the `jobs_waiting`
        partial index (schema v13): only those rows, whatever the site's history."""
        return [row_to_job(r) for r in self._read(
            f"SELECT * FROM jobs INDEXED BY jobs_waiting WHERE site = ? AND {_WAITING_SQL} "
            "ORDER BY created_at", (site,))]

    # -- state changes --------------------------------------------------------------------------

    def apply_state(self, job_id: str, state: JobState | str, *, exit_code: int | None = None,
                    reason: str | None = None, submitted_at: datetime | None = None,
                    started_at: datetime | None = None, ended_at: datetime | None = None,
                    native_state: str | None = None, source: str | None = None,
                    at: datetime | None = None) -> Event | None:
        """Apply one observation of a job; the only place a job's state changes.

        States only move forward (JobState.rank); the first terminal state is final, a later
        terminal observation only fills a missing exit code or times. Emits, in the same
        transaction, a "job.state" event when the state changed, a "job.updated" event when
        only details changed (reason, times, exit code), and nothing for a duplicate.
        """
        with self._write() as c:
            return self._apply(c, job_id, state, exit_code=exit_code, reason=reason,
                               submitted_at=submitted_at, started_at=started_at,
                               ended_at=ended_at, native_state=native_state, source=source,
                               at=at)

    def apply_status(self, job_id: str, status: JobStatus,
                     source: str | None = None) -> Event | None:
        """`apply_state` from a dialect's JobStatus observation."""
        return self.apply_state(job_id, status.state, exit_code=status.exit_code,
                                reason=status.reason, submitted_at=status.submitted_at,
                                started_at=status.started_at, ended_at=status.ended_at,
                                native_state=status.native_state, source=source)

    @staticmethod
    def _wrapper_overrules(c: sqlite3.Connection, job: Job, obs: JobState,
                           exit_code: int | None, source: str | None) -> bool:
        """Whether the job's wrapper (whose end line is signed with the job's own secret)
        reports an exit code other than the one a poll of the scheduler ended the job with.
        Only between COMPLETED and FAILED: a scheduler's CANCELLED or TIMEOUT stands."""
        if not (source == "wrapper" and exit_code is not None and job.exit_code is not None
                and exit_code != job.exit_code
                and job.state in (JobState.COMPLETED, JobState.FAILED)
                and obs in (JobState.COMPLETED, JobState.FAILED)):
            return False
        row = c.execute("SELECT data FROM events WHERE job_id = ? AND kind = 'job.state' "
                        "ORDER BY seq DESC LIMIT 1", (job.id,)).fetchone()
        ended_by = json.loads(row[0]).get("source") if row else None
        return ended_by == "poll"

    @staticmethod
    def _hedge_loss(c: sqlite3.Connection, job: Job, obs: JobState) -> str | None:
        """The reason an ended hedged copy is recorded CANCELLED with, whatever its scheduler
        says (None: as it says): a copy its scheduler took (a copy never submitted stays
        so) other than its group's claimed winner. Only the winner is ever told "go"; a
        loser told "no" exits 0 without running the body (its scheduler says COMPLETED),
        and one that ended otherwise never ran it either; so it shows no exit code."""
        if not (job.hedge_group and job.native_id and obs.terminal):
            return None
        row = c.execute("SELECT h.winner, w.id FROM hedges h LEFT JOIN jobs w ON w.token = "
                        "h.winner AND w.hedge_group = h.id WHERE h.id = ?",
                        (job.hedge_group,)).fetchone()
        if row is None or row[0] is None or row[0] == job.token:
            return None
        return hedged_reason(row[1])

    def _apply(self, c: sqlite3.Connection, job_id: str, state: JobState | str, *,
               exit_code: int | None = None, reason: str | None = None,
               submitted_at: datetime | None = None, started_at: datetime | None = None,
               ended_at: datetime | None = None, native_state: str | None = None,
               source: str | None = None, at: datetime | None = None,
               job: Job | None = None) -> Event | None:
        """Observed `state` (and the rest) applied to job `job_id`, with its event (None when
        nothing changed). `job`: its fields as stored now, when the caller holds them (its
        spec not needed: not read again)."""
        job = job or self._job(c, job_id, spec=False)
        if reason:  # a site's refusal may quote what it was given (a URL, a command line)
            reason = redact(reason)
        try:
            obs = JobState(state)
        except ValueError as e:
            raise BadInput(f"unknown job state {state!r}") from e
        old = job.state
        lost = self._hedge_loss(c, job, obs)
        if lost is not None:  # a loser never ran the body: its scheduler's exit code is not its
            obs, reason, exit_code = JobState.CANCELLED, lost, None
        upd: dict[str, Any] = {}
        if obs.rank > old.rank:
            upd["state"], upd["reason"] = obs, reason  # a new state's reason replaces the old
        new = upd.get("state", old)
        # Same state again: a queue reason may change; a terminal reason is only filled in.
        if (obs == new and "state" not in upd and reason is not None
                and (not new.terminal or job.reason is None)):
            upd["reason"] = reason
        if obs.terminal and new.terminal and exit_code is not None and job.exit_code is None:
            upd["exit_code"] = exit_code
        elif self._wrapper_overrules(c, job, obs, exit_code, source):
            # the scheduler's answer (unsigned text: a hostile site, or a record forged into
            # it) came first and differs from the job's own signed end line: the line counts
            upd["state"], upd["exit_code"] = obs, exit_code
            upd["reason"] = (f"{reason or f'exit code {exit_code}'} (the job's signed end "
                             f"line; the scheduler had reported {old.value} with exit code "
                             f"{job.exit_code})")
            new = obs
        for f, v in zip(_TIME_FIELDS, (submitted_at, started_at, ended_at), strict=True):
            if v is not None and getattr(job, f) is None:
                upd[f] = v
        changed = {k: v for k, v in upd.items() if getattr(job, k) != v}
        if not changed:
            return None
        cols = [f"{k} = ?" for k in changed]
        vals = [v.value if isinstance(v, JobState) else to_ts(v) if isinstance(v, datetime) else v
                for v in changed.values()]
        c.execute(f"UPDATE jobs SET {', '.join(cols)}, updated_at = ? WHERE id = ?",
                  (*vals, to_ts(utcnow()), job.id))
        data: dict[str, Any] = {"state": new.value, "previous": old.value,
                                "changed": sorted(changed), "native_id": job.native_id}
        data.update({k: v for k, v in changed.items() if k != "state"})
        if native_state is not None:
            data["native_state"] = native_state
        if source is not None:
            data["source"] = source
        kind = "job.state" if "state" in changed else "job.updated"
        return self._event(c, kind, job.id, job.site, data, at)

"""Small helpers for the words a user reads (pure: no I/O)."""

from __future__ import annotations


def quantity(n: float, noun: str, plural: str | None = None) -> str:
    """`n` with `noun` in the number it takes: "1 GPU", "2 GPUs", "0 nodes" (`plural`
    where adding an "s" is wrong)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def agree(n: float, one: str = "is", many: str = "are") -> str:
    """The verb that agrees with a count of `n`: "1 job is", "3 jobs are"."""
    return one if n == 1 else many


def cancel_note(job_id: str, site: str, before: str, ended_before: bool, ended_now: bool,
                look: str = "diamond status") -> str | None:
    """What a cancel did, in the same words on every face: nothing to a job that had already
    ended (`before`: its state then), a request sent to one still queued or running (`look`:
    the face's command that shows the state), nothing to add when the job shows its end at
    once."""
    if ended_before:
        return f"{job_id} had already ended ({before}): nothing to cancel"
    if not ended_now:
        return (f"cancel of {job_id} sent to {site}; its state changes once {site} confirms "
                f"(`{look} {job_id}`)")
    return None


def more_jobs_note(shown: int, option: str) -> str:
    """What a listing of jobs cut at its limit says (every face): how many it shows and how
    to see the rest."""
    return (f"the {shown} newest jobs shown; the store holds more ({option} N lists more; "
            "--state and --site narrow the list)")


def meant(given: str, accepted: list[str]) -> str:
    """"did you mean X? " when `given` (a slip: another case, a letter off) nearly spells one
    of `accepted`, else ""."""
    import difflib

    key = given.strip().lower()
    near = [a for a in accepted if a.lower() == key] \
        or difflib.get_close_matches(key, accepted, n=1, cutoff=0.6)
    return f"did you mean {near[0]}? " if near and near[0] != given else ""


def unknown_field(key: object, accepted: list[str], where: str) -> str:
    """A key no field is named by, in the same words on every face (`where`: "the body" of a
    REST request, "the arguments" of an MCP or agent tool): the key cut to 60 characters, the
    field it nearly spells, and the fields accepted."""
    import difflib

    near = difflib.get_close_matches(key, accepted, n=1, cutoff=0.75) \
        if isinstance(key, str) else []
    meant = f"did you mean {near[0]!r}? " if near else ""
    return f"unknown field {str(key)[:60]!r} in {where} ({meant}accepted: {', '.join(accepted)})"

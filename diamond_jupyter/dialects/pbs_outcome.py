"""How a finished PBS Pro or Torque job ended, from what the server keeps of it (pure): its
Exit_status, its substate (deleted), and its walltime used against its limit. The queue's
history (`qstat -x`) and the server's logs (`tracejob`) read alike through it."""

from __future__ import annotations

from ..model import JobState
from .outputs_common import OUT_OF_MEMORY, signal_number, signed32

# Torque's own negative codes for a job its mom killed over a limit (PBS Pro's are -24 to
# -29; its -10 to -12 mean other things): memory, walltime, CPU time
_TORQUE_OVERLIMIT = {-10: "memory", -11: "walltime", -12: "cput"}
# PBS Pro's codes (job.h JOB_EXEC_KILL_*) for a job killed over a memory limit, and which
_PBS_PRO_MEMORY = {-26: "vmem", -27: "mem", -31: "hpmem"}
# the codes (job.h JOB_EXEC_*, both flavours) of a job whose script never started: its start
# failed (-1 before its files, -2 after them, -3 to be retried), and PBS Pro's globus
# start (-8, -9), bad uid or gid (-10) and bad password (-13), Torque's command or output
# file that could not be opened (-8, -9)
_NEVER_RAN = frozenset({-1, -2, -3, -8, -9}) | frozenset({-10, -13})
# those of a job that had started when PBS ended it (both flavours for -4 to -7; -11 and -12
# PBS Pro's: Torque's are limit kills)
ENDED_RUNNING = {
    -4: "aborted when its MoM restarted",
    -5: "aborted when its MoM restarted (checkpointed, not to be moved)",
    -6: "aborted when its MoM restarted (checkpointed, to be moved)",
    -7: "its restart from a checkpoint failed",
    -11: "rerun by PBS",
    -12: "checkpointed and killed",
}
# how `_negative` says the end of a job PBS ended after its start ({how}: one of
# ENDED_RUNNING's), or by a code not read here; `dialects.reasons` knows both as the
# dialect's own sentences
ENDED_RUNNING_SAID = "ended by PBS after it started: {how} (Exit_status {num})"
NOT_READ_SAID = ("ended by PBS with Exit_status {num}, a code not read here (whether the job "
                 "ran is not known)")


def _out_of_memory(limit: str, exit_status: int) -> str:
    return f"{OUT_OF_MEMORY} (killed by PBS over its {limit} limit, Exit_status {exit_status})"


def _no_signal(exit_status: int) -> str:
    return (f"Exit_status {exit_status} not read: above 256 it is 256 + the signal that "
            f"killed the job, and {exit_status - 256} is no signal")


def _negative(exit_status: int, torque: bool) -> str:
    """What a negative Exit_status other than a limit kill says of the job: never started,
    ended by PBS after it started (how), or a code not read here (said, not guessed)."""
    if exit_status in _NEVER_RAN and not (torque and exit_status in (-10, -13)):
        return f"job never ran (Exit_status {exit_status})"
    if (how := ENDED_RUNNING.get(exit_status)) and not (torque and exit_status < -7):
        return ENDED_RUNNING_SAID.format(how=how, num=exit_status)
    return NOT_READ_SAID.format(num=exit_status)


def finished_state(
    exit_status: int | None, substate: int | None, used_s: int | None, limit_s: int | None,
    *, torque: bool = False,
) -> tuple[JobState, int | None, str | None]:
    """(state, exit_code, reason) of a finished PBS job (`torque`: Torque's exit codes)."""
    if exit_status is not None:  # (-1 printed unsigned is still PBS's own -1)
        exit_status = signed32(exit_status)
    killed = signal_number(exit_status - 256) if exit_status and exit_status > 256 else None
    if substate == 91:  # JOB_SUBSTATE_TERMINATED: deleted by qdel
        # killed by a signal (256 + N) as a shell says it, 128 + N, as for other jobs
        if exit_status and exit_status > 256 and not killed:
            return JobState.CANCELLED, None, f"deleted (qdel); {_no_signal(exit_status)}"
        return JobState.CANCELLED, 128 + killed if killed else exit_status, "deleted (qdel)"
    if exit_status is None:
        return (JobState.FAILED if substate == 93 else JobState.UNKNOWN), None, None
    timed_out = used_s is not None and limit_s is not None and used_s >= limit_s
    if exit_status < 0:
        if torque and exit_status == -10:
            return JobState.FAILED, exit_status, _out_of_memory("memory", exit_status)
        if not torque and exit_status in _PBS_PRO_MEMORY:
            return JobState.FAILED, exit_status, _out_of_memory(_PBS_PRO_MEMORY[exit_status],
                                                                exit_status)
        if torque and exit_status in _TORQUE_OVERLIMIT:
            if exit_status == -11:
                return JobState.TIMEOUT, exit_status, "killed by PBS: walltime exceeded"
            return JobState.FAILED, exit_status, f"killed by PBS: resource limit ({exit_status})"
        if exit_status == -29:
            return JobState.TIMEOUT, exit_status, "killed by PBS: walltime exceeded"
        if -29 <= exit_status <= -24:
            return JobState.FAILED, exit_status, f"killed by PBS: resource limit ({exit_status})"
        return JobState.FAILED, exit_status, _negative(exit_status, torque)
    if exit_status > 256:
        if not (sig := killed):  # 600: neither an exit code nor a signal's; said, not guessed
            return JobState.FAILED, None, _no_signal(exit_status)
        if timed_out:
            return JobState.TIMEOUT, 128 + sig, f"walltime exceeded (signal {sig})"
        return JobState.FAILED, 128 + sig, f"killed by signal {sig}"
    if exit_status == 0:
        return JobState.COMPLETED, 0, None
    if timed_out:
        return JobState.TIMEOUT, exit_status, "walltime exceeded"
    return JobState.FAILED, exit_status, None

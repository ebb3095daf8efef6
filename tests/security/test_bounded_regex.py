"""Regexes run in linear time on hostile input: the secret redactor (job output and prompts
pass through it), the four dialects' script parsers (user scripts) and output parsers.

Each case took seconds before (figures in the ids, measured on this machine); the bound is
generous (a linear pass over these sizes takes milliseconds)."""

from __future__ import annotations

import json
import time

import pytest

from diamond_jupyter.dialects import get_commands, get_script_dialect
from diamond_jupyter.dialects.outputs_common import expand_hostlist
from diamond_jupyter.store import REDACTED, redact

# CPU time of this thread (backtracking burns CPU; other processes on a busy machine do not
# add to it, where they would to a wall-clock bound)
BOUND_S = 0.5
N = 20_000


def timed(fn, *args):
    t0 = time.thread_time()
    out = fn(*args)
    return out, time.thread_time() - t0


@pytest.mark.parametrize("text", [
    pytest.param("token" * 16_000, id="token-x16000-was-13.9s"),
    pytest.param("a_token_" * 10_000, id="a_token_-x10000-was-8.8s"),
    pytest.param("-----BEGIN RSA PRIVATE KEY-----" * 5_200, id="pem-begins-160k-was-5s"),
])
def test_redactor_is_linear_on_hostile_text(text):
    _, secs = timed(redact, text)
    assert secs < BOUND_S, f"redact took {secs:.2f} s on {len(text)} characters"


def test_redactor_still_redacts():
    pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----"
    text = (f"export GITHUB_TOKEN='abc def'; curl https://x/?api_key=xyz&n=1 TOKENS=3 "
            f"password=hunter2 url=https://h/?token=t0p\n{pem}\nafter")
    out = redact(text)
    for secret in ("abc def", "xyz", "hunter2", "t0p", "b3BlbnNzaC1rZXk"):
        assert secret not in out
    assert "TOKENS=3" in out and out.endswith(f"{REDACTED}\nafter")
    assert f"GITHUB_TOKEN={REDACTED}" in out and "n=1" in out


@pytest.mark.parametrize(("line", "was"), [
    ("#BSUB -R " + "a" * N, "2.9s"),
    ("#BSUB -R " + "_" * N, "4.6s"),
    ("#BSUB -R select[" + "a" * N, "2.4s"),
    ("#BSUB -J " + "[" * (2 * N), "1.2s"),
])
def test_lsf_script_parser_is_linear(line, was):
    lsf = get_script_dialect("lsf")
    t0 = time.thread_time()
    try:
        lsf.parse_script(f"#!/bin/bash\n{line}\necho hi\n")
    except Exception:  # noqa: BLE001 (only the time matters here)
        pass
    secs = time.thread_time() - t0
    assert secs < BOUND_S, f"{line[:20]}...: {secs:.2f} s (was {was})"


def test_lsf_array_name_still_parsed():
    # -n 8: ptile spreads a job's slots (without -n the job has one, on one host)
    spec = get_script_dialect("lsf").parse_script("#BSUB -J sweep[1-10]%2\n#BSUB -n 8 -R "
                                                   "span[ptile=4]\necho\n")
    assert spec.name == "sweep" and spec.array.expression == "1-10%2"
    assert spec.resources.tasks_per_node == 4


def test_hostlist_expansion_is_linear_and_bounded():
    _, secs = timed(expand_hostlist, "[" * N)  # was 7.4 s
    assert secs < BOUND_S
    hosts, secs = timed(expand_hostlist, "c[1-999999999],gpu[01-03]")
    assert secs < BOUND_S and hosts[-3:] == ["gpu01", "gpu02", "gpu03"]
    assert expand_hostlist("c[1-3,7],gpu01") == ["c1", "c2", "c3", "c7", "gpu01"]


def test_lsf_time_with_a_long_blank_run_is_linear():
    rec = {"JOBID": "1", "STAT": "RUN", "START_TIME": "Dec  1 10:00" + " " * N + "x"}
    _, secs = timed(get_commands("lsf").parse_status, json.dumps({"RECORDS": [rec]}))
    assert secs < BOUND_S, f"{secs:.2f} s (was 4 s)"


HOSTILE = {"a": "a" * N, "[": "[" * N, "blank": "a" + " " * N + "x", "_": "_" * N,
           "digits": "1" * N + "x", "a=": "a=" * (N // 2), "<": "<" * N, "a[": "a[" * (N // 2)}
OPTIONS = {
    "slurm": ("#SBATCH --{}={}", ["job-name", "time", "nodes", "mem", "gres", "gpus",
                                 "constraint", "dependency", "array", "output", "chdir",
                                 "export", "mail-type", "nodelist", "comment"]),
    "pbs": ("#PBS {} {}", ["-N", "-l", "-q", "-o", "-W", "-J", "-v", "-M"]),
    "lsf": ("#BSUB {} {}", ["-J", "-n", "-W", "-R", "-gpu", "-o", "-w", "-env", "-M", "-cwd"]),
    "flux": ("# flux: {} {}", ["-N", "-n", "-t", "--job-name", "-g", "--setattr",
                               "--requires", "--dependency", "--output"]),
}


@pytest.mark.parametrize("dialect", sorted(OPTIONS))
def test_every_directive_parses_hostile_values_in_linear_time(dialect):
    fmt, opts = OPTIONS[dialect]
    parser = get_script_dialect(dialect)
    slow = []
    for opt in opts:
        for name, value in HOSTILE.items():
            t0 = time.thread_time()
            try:
                parser.parse_script(f"#!/bin/bash\n{fmt.format(opt, value)}\necho hi\n")
            except Exception:  # noqa: BLE001 (only the time matters here)
                pass
            if (secs := time.thread_time() - t0) > BOUND_S:
                slow.append(f"{opt} {name}: {secs:.2f} s")
    assert not slow, slow

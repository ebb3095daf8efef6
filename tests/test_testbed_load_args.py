"""`diamond testbed load`'s numbers refused as every other subcommand refuses an option's
value (`diamond submit --hedge x`): exit 2, the subcommand's usage, then one error line
naming the option, what it takes and what was given; with --json, the same reason as JSON on
stdout. No test bed: each run is a `--dry-run`, refused before anything is read.

Faults found and fixed, shown by tests here that failed before:
- `--seed 1.5` said argparse's "invalid int value: '1.5'" and `--scale x` "invalid float
  value: 'x'": neither said what the option takes.
- `--scale -1`, `--duration 0` and `--history -5` were checked after parsing and refused in
  another form than the option's other values (no usage, no "argument --scale").
"""

from __future__ import annotations

import json

import pytest

from diamond_jupyter.cli.main import main as cli


def _refusal(capsys, *args: str) -> tuple[list[str], str]:
    """The stderr lines and stdout of a command line refused as bad input."""
    with pytest.raises(SystemExit) as e:
        cli(list(args))
    captured = capsys.readouterr()
    assert e.value.code == 2, captured
    return captured.err.rstrip("\n").splitlines(), captured.out


@pytest.mark.parametrize("option, value, takes", [
    ("--start", "2h", "a number of log seconds such as 3600 or 1.5e5, without a unit"),
    ("--duration", "x", "a number of real seconds above 0 such as 60 or 1.5e3, without a unit"),
    ("--duration", "0", "a number of real seconds above 0"),
    ("--scale", "-1", "a number of center seconds per real second above 0, such as 60"),
    ("--scale", "x", "a number of center seconds per real second above 0"),
    ("--time-scale", "inf", "a number of center seconds per real second above 0"),
    ("--seed", "1.5", "a whole number such as 1 or 42"),
    ("--seed", "one", "a whole number such as 1 or 42"),
    ("--history", "-5", "a number of real seconds, 0 or more, such as 600"),
])
def test_a_bad_number_is_refused_as_submit_refuses_one(capsys, option: str, value: str,
                                                       takes: str) -> None:
    err, out = _refusal(capsys, "testbed", "load", option, value, "--dry-run")
    hedge, _ = _refusal(capsys, "submit", "--hedge", "x", "job.sh")
    # the same shape as `submit --hedge x`: the subcommand's usage, then one error line
    assert hedge[0].startswith("usage: diamond submit ")
    assert hedge[-1].startswith("diamond submit: error: argument --hedge: ")
    assert err[0].startswith("usage: diamond testbed load ")
    assert sum("error" in line for line in err) == 1 and out == ""
    assert err[-1].startswith("diamond testbed load: error: argument "), err
    assert option in err[-1] and f"expected {takes}" in err[-1], err[-1]
    assert err[-1].endswith(f"(got {value!r})") or f"(got {value!r});" in err[-1], err[-1]


@pytest.mark.parametrize("option, value", [("--scale", "-1"), ("--seed", "1.5")])
def test_with_json_the_refusal_is_json_on_stdout_too(capsys, option: str, value: str) -> None:
    err, out = _refusal(capsys, "testbed", "load", option, value, "--dry-run", "--json")
    reply = json.loads(out)
    assert reply["reason"] == "bad-input" and "\n" not in reply["message"]
    assert reply["message"].startswith("diamond testbed load: argument ")
    assert option in reply["message"] and f"(got {value!r})" in reply["message"]
    assert err[-1].endswith(reply["message"].split(": argument ", 1)[1])


@pytest.mark.parametrize("args", [("--seed", "-3"), ("--scale", "0.5"), ("--duration", "1e1"),
                                  ("--history", "0", "--trace", "x.swf", "--site", "omega")])
def test_numbers_in_range_are_taken(capsys, args: tuple[str, ...]) -> None:
    """What the types take goes on to the command (an unknown site, refused after parsing,
    shows the --history was read)."""
    code = cli(["testbed", "load", *args, "--dry-run", "--json"])
    out = capsys.readouterr().out
    if "--trace" in args:
        assert code == 2 and "unknown test-bed site 'omega'" in json.loads(out)["message"]
    else:
        assert code == 0 and json.loads(out), out

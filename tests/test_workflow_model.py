"""Workflow files: parsing, every validation error (named, exit 2), the store's records,
and the input-copy lines a same-site step runs (no test bed)."""

from __future__ import annotations

import sqlite3
import subprocess
import textwrap

import pytest

from diamond_jupyter.cli import main
from diamond_jupyter.model import BadInput, JobSpec
from diamond_jupyter.store import Store
from diamond_jupyter.workflow.engine import copy_lines, with_prologue
from diamond_jupyter.workflow.model import load_workflow

SITES = ["alpha", "beta"]
EXAMPLE = textwrap.dedent("""\
    name: demo
    steps:
      - name: prep
        site: alpha
        script: |
          #!/bin/bash
          #SBATCH -N 1
          #SBATCH -t 5
          ./prepare > out.bin
        outputs: [out.bin]
      - name: train
        needs: [prep]
        inputs: [{from: prep, path: out.bin, size: 100M}]
        gang: g1
        retries: 1
        on_failure: resubmit-elsewhere
        script: |
          #!/bin/bash
          sha256sum out.bin
      - name: analyse
        needs: [train]
        inputs: [{from: prep, path: out.bin, as: data/in.bin}]
        script: "echo done"
    """)


def bad(text: str) -> str:
    with pytest.raises(BadInput) as e:
        load_workflow(text, sites=SITES)
    msg = str(e.value)
    assert "\n" not in msg
    return msg


def test_the_example_parses():
    wf = load_workflow(EXAMPLE, sites=SITES)
    assert wf.order() == ["prep", "train", "analyse"]
    train = wf.step("train")
    assert train.inputs[0].from_ == "prep" and train.inputs[0].size == 100 << 20
    assert train.retries == 1 and train.on_failure == "resubmit-elsewhere" and train.gang == "g1"
    assert wf.step("analyse").inputs[0].dest == "data/in.bin"
    assert wf.upstream("analyse") == {"prep", "train"}
    assert wf.downstream("prep") == {"train", "analyse"}
    prep = wf.step("prep").spec()
    assert prep.resources.nodes == 1 and prep.resources.walltime_s == 300
    assert prep.name == "prep"


def test_order_puts_every_step_after_what_it_needs():
    wf = load_workflow(textwrap.dedent("""\
        name: w
        steps:
          - {name: c, needs: [b], script: x}
          - {name: a, script: x}
          - {name: b, needs: [a], script: x}
          - {name: d, script: x}
        """))
    assert wf.order() == ["a", "d", "b", "c"]


def test_a_cycle_is_named_with_its_steps():
    msg = bad(textwrap.dedent("""\
        name: w
        steps:
          - {name: a, needs: [c], script: x}
          - {name: b, needs: [a], script: x}
          - {name: c, needs: [b], script: x}
          - {name: d, script: x}
        """))
    assert "cycle" in msg
    path = msg.split("cycle: ")[1].split(" (line ")[0].split(" -> ")
    assert path[0] == path[-1] and sorted(path[:-1]) == ["a", "b", "c"]
    assert "d" not in path
    assert "needs itself" in bad("name: w\nsteps:\n  - {name: a, needs: [a], script: x}\n")


@pytest.mark.parametrize("text,want", [
    ("name: w\nsteps:\n  - {name: a, needs: [nope], script: x}\n",
     "step 'a' needs unknown step 'nope' (steps: a)"),
    ("name: w\nsteps:\n  - {name: a, script: x}\n  - {name: b, script: x,"
     " inputs: [{from: a, path: o}]}\n",
     "step 'b': inputs[0] is from 'a', which is not upstream of it"),
    ("name: w\nsteps:\n  - {name: a, script: x, inputs: [{from: zz, path: o}]}\n",
     "step 'a': inputs[0] is from unknown step 'zz'"),
    ("name: w\nsteps:\n  - {name: a, site: gamma, script: x}\n",
     "step 'a': unknown site 'gamma' (known: alpha, beta, or auto)"),
    ("name: w\nsteps:\n  - {name: a, script: x, retry: 1}\n",
     "steps['a'].retry: unknown field (accepted: name, script, script_file, site, needs, inputs"),
    ("name: w\nsteps:\n  - {name: a, script: x, inputs: [{from: a, path: o, sz: 1}]}\n",
     "steps['a'].inputs[0].sz: unknown field (accepted: from, path, as, size)"),
    ("name: w\nsteps:\n  - {name: a, script: x, on_failure: retry}\n",
     "steps['a'].on_failure: Input should be 'resubmit-elsewhere' or 'stop'"),
    ("name: w\nsteps:\n  - {name: a, script: x, retries: -1}\n",
     "steps['a'].retries: retries must be a whole number from 0 to 10, not -1"),
    ("name: w\nsteps:\n  - {name: a, script: x, outputs: [../etc/passwd]}\n",
     "steps['a'].outputs: output '../etc/passwd' must name a file inside"),
    ("name: w\nsteps:\n  - {name: a, script: x, outputs: [/abs]}\n",
     "must be relative to the step's working directory"),
    ("name: w\nsteps:\n  - {name: a, script: x}\n  - {name: a, script: y}\n",
     "step name 'a' is used twice"),
    ("name: w\nsteps:\n  - {name: 'a b', script: x}\n",
     "steps['a b'].name: 'a b' is not a valid name"),
    ("name: w\nsteps:\n  - {name: a}\n", "steps['a'].script: is required"),
    ("name: w\nsteps: []\n", "steps: no steps: a workflow has at least one"),
    ("- just a list\n", "expected a mapping with `name` and `steps`, got list"),
    ("name: w\nsteps:\n  - {name: a, script: x}\n  - {name: b, needs: [a], script: x, gang: g}"
     "\n  - {name: c, needs: [b], script: x, gang: g}\n",
     "gang 'g': step 'c' waits for 'b' of the same gang"),
    ("name: w\nsteps:\n  - {name: a, script: x, inputs: [{from: a, path: o, size: lots}]}\n",
     "size 'lots' is not a number of bytes"),
    ("name: w\nsteps:\n  - {name: a, script: x, inputs: [{from: a, path: o, size: '"
     + "9" * 400 + "G'}]}\n", "is not a number of bytes"),  # float infinity
    ("name: w\nsteps:\n  - {name: a, script: x}\n  - {name: b, needs: [a], script: x, inputs: "
     "[{from: a, path: o}, {from: a, path: p/o, as: o}]}\n",
     "step 'b': two inputs arrive as 'o'"),
    ("name: w\nsteps:\n  - {name: a, script: x, dialect: nosuch}\n",
     "steps['a'].dialect: unknown dialect 'nosuch'"),
])
def test_each_problem_is_named(text, want):
    assert want in bad(text)


def test_yaml_syntax_errors_name_the_line(tmp_path):
    p = tmp_path / "w.yaml"
    p.write_text("name: w\nsteps:\n  - {name: a, script: x\n  - b\n")
    with pytest.raises(BadInput) as e:
        load_workflow(p, sites=SITES)
    assert str(e.value).startswith(f"{p}: not valid YAML at line ")
    with pytest.raises(BadInput, match="cannot read .*missing.yaml: No such file"):
        load_workflow(tmp_path / "missing.yaml")



@pytest.mark.parametrize(("value", "said", "line"), [
    ('    note: "\\uD800"\n', "steps['a'].note: unknown field", 6),
    ('    retries: "\\uD800"\n', "steps['a'].retries", 6),
])
def test_a_file_only_libyaml_refuses_still_names_the_line(tmp_path, value, said, line):
    """A lone surrogate escape (`"\\uD800"`): libyaml refuses it, PyYAML's own reader takes
    it. Before: the lines were looked up in a second reading by libyaml, which failed, so
    the error named no line. Now value and lines come from one reading."""
    p = tmp_path / "w.yaml"
    p.write_text("name: w\nsteps:\n  - name: a\n    site: alpha\n    script: ./x\n" + value)
    with pytest.raises(BadInput) as e:
        load_workflow(p, sites=SITES)
    assert said in str(e.value) and str(e.value).endswith(f"(line {line})"), e.value

def test_the_cli_exits_2_naming_the_problem(tmp_path, capsys):
    cfg = tmp_path / "sites.yaml"
    cfg.write_text(f"sites:\n  - name: alpha\n    transport: {{kind: ssh, host: 192.0.2.1}}\n"
                   f"store: {tmp_path / 's.sqlite'}\n")
    wf = tmp_path / "w.yaml"
    wf.write_text("name: w\nsteps:\n  - {name: a, needs: [b], script: x}\n"
                  "  - {name: b, needs: [a], script: x}\n")
    assert main(["workflow", "run", str(wf), "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"diamond: {wf}: workflow 'w' has a cycle: ") and err.count("\n") == 1
    wf.write_text(EXAMPLE.replace("site: alpha", "site: beta"))  # not in this sites file
    assert main(["workflow", "run", str(wf), "--config", str(cfg), "--json"]) == 2
    assert capsys.readouterr().err == (f"diamond: {wf}: step 'prep': unknown site 'beta' "
                                       "(known: alpha, or auto) (line 4)\n")
    assert main(["workflow", "status", "wf-nope", "--config", str(cfg)]) == 2
    assert "no workflow 'wf-nope'" in capsys.readouterr().err


def test_the_store_keeps_workflows_and_their_events(tmp_path):
    with Store(tmp_path / "s.sqlite") as st:
        assert st._read("PRAGMA user_version")[0][0] >= 4
        rec = st.create_workflow("demo", {"name": "demo"}, ["a", "b"], owner="e1")
        assert [s.phase for s in rec.steps] == ["waiting", "waiting"]
        st.update_step(rec.id, "a", phase="queued", site="alpha", token="abc123abc123",
                       data={"afterok": []}, job_id="alpha:7")
        assert st.workflow_of_token("abc123abc123") == (rec.id, "a")
        st.update_step(rec.id, "a", token="")  # cleared
        assert st.get_workflow(rec.id).step("a").token is None
        st.set_workflow_state(rec.id, "RUNNING")
        st.set_workflow_state(rec.id, "COMPLETED")
        assert st.set_workflow_state(rec.id, "FAILED").state == "COMPLETED"  # the end stays
        evs = st.events_since(0, kinds=["workflow.*"])
        assert [e.kind for e in evs] == ["workflow.created", "workflow.step", "workflow.step",
                                         "workflow.state", "workflow.state"]
        assert evs[1].job_id == "alpha:7" and evs[1].data["phase"] == "queued"
        assert evs[-1].data == {"workflow_id": rec.id, "name": "demo", "state": "COMPLETED",
                                "previous": "RUNNING", "reason": None}
        with pytest.raises(BadInput, match="no workflow 'x'"):
            st.get_workflow("x")
        # a second engine cannot claim what a live one drives; a dead one's can be taken
        assert st.claim_workflow(rec.id, "e1") is not None
        st.release_workflow(rec.id, "e1")
        assert st.get_workflow(rec.id).data["owner"] is None


def test_a_v3_store_is_migrated(tmp_path):
    from diamond_jupyter.store.db import MIGRATIONS, apply_migration

    p = tmp_path / "old.sqlite"
    db = sqlite3.connect(p)
    for m in MIGRATIONS[:3]:
        apply_migration(db, m)
    db.execute("PRAGMA user_version = 3")
    db.commit()
    db.close()
    with Store(p) as st:
        assert st.list_workflows() == []
        assert st.create_workflow("w", {}, ["a"]).steps[0].name == "a"


def test_copy_lines_quote_every_path(tmp_path):
    """A hostile file name is copied as a name, never run."""
    up = tmp_path / "up dir"
    up.mkdir()
    name = "o$(touch PWNED); 'x'.bin"
    (up / name).write_text("data")
    lines = copy_lines([(str(up / name), "sub dir/in.bin"), (str(up / "missing"), "m")])
    run = subprocess.run(["bash", "-c", lines + "echo after"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert (tmp_path / "sub dir" / "in.bin").read_text() == "data"
    assert not (tmp_path / "PWNED").exists() and not list(up.glob("PWNED"))
    assert run.returncode == 1 and "after" not in run.stdout
    assert "workflow input m could not be copied from" in run.stderr
    home = copy_lines([("~/a b", "c")])
    assert home.startswith("cp -p -- \"$HOME\"/'a b' c ||")


def test_the_prologue_keeps_the_interpreter_line_first():
    spec = with_prologue(JobSpec(script="#!/bin/bash\necho hi\n"), "cp -p -- a b\n")
    assert spec.script == "#!/bin/bash\ncp -p -- a b\necho hi\n"
    spec = with_prologue(JobSpec(command="echo hi"), "cp x y\n")
    assert spec.script == "cp x y\necho hi\n" and spec.command is None


def test_the_dag_card_lays_steps_out_by_depth_and_escapes_text():
    from diamond_jupyter.kernel.workflowcard import bundle, depths, render_text

    wf = {"id": "wf-1", "name": "demo", "state": "FAILED", "reason": "<script>x</script>",
          "steps": [
              {"name": "a", "site": "alpha", "job": "alpha:1", "state": "COMPLETED",
               "needs": []},
              {"name": "b", "site": "beta", "job": "beta:2", "state": "FAILED",
               "needs": ["a"], "reason": "exit <7>", "attempt": 1},
              {"name": "c", "site": None, "job": None, "state": "CANCELLED",
               "needs": ["a", "b"], "gang": "g"}]}
    assert depths(wf["steps"]) == {"a": 0, "b": 1, "c": 2}
    b = bundle(wf)
    assert "<script>" not in b["text/html"] and "&lt;script&gt;" in b["text/html"]
    assert "exit &lt;7&gt;" in b["text/html"] and "(attempt 2)" in b["text/html"]
    assert b["application/vnd.diamond.workflow+json"]["workflow"] == wf
    text = render_text(wf)
    assert text.splitlines()[0] == "workflow demo wf-1: FAILED (<script>x</script>)"
    assert "      c: CANCELLED - - [gang g] <- a, b" in text


def test_the_python_api_builds_the_same_workflow():
    from diamond_jupyter.workflow import Step, StepInput, Workflow, parse_workflow

    wf = Workflow(name="py", steps=[
        Step(name="prep", site="alpha", script="#!/bin/bash\necho > out.bin\n"),
        Step(name="train", needs=["prep"], gang="g1", retries=1,
             on_failure="resubmit-elsewhere",
             inputs=[StepInput.model_validate({"from": "prep", "path": "out.bin",
                                               "size": "2M"})],
             script="#!/bin/bash\nsha256sum out.bin\n")])
    assert parse_workflow(wf, sites=SITES) is wf
    again = load_workflow(__import__("yaml").safe_dump(wf.model_dump(by_alias=True)),
                          sites=SITES)
    assert again == wf and again.step("train").inputs[0].size == 2 << 20
    with pytest.raises(BadInput, match="step 'prep': unknown site 'alpha'"):
        parse_workflow(wf, sites=["beta"])

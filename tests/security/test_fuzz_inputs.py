"""Property-based tests of the other ways in: the sites file, REST bodies (through a real
Jupyter server), job specs as JSON, and the job event lines a site sends back. Whatever
arrives, the answer is a result or a BadInput with a message (HTTP 400/404 with a JSON
reason), never a crash or a 500."""

from __future__ import annotations

import json

import pytest
import sweep_helpers
import yaml
from hostile_corpus import ALL, EVENT_LINES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diamond_jupyter.config import load_config
from diamond_jupyter.model import BadInput, JobSpec
from diamond_jupyter.monitor import parse_event_line, same_native

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")

FUZZ = settings(max_examples=80, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))
hostile = st.one_of(st.sampled_from(ALL), st.text(max_size=30))
json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                      hostile)
json_value = st.recursive(json_leaf, lambda kids: st.one_of(
    st.lists(kids, max_size=3), st.dictionaries(hostile, kids, max_size=3)), max_leaves=8)


# -- the sites file ---------------------------------------------------------------------------

SITE_KEYS = ["name", "scheduler", "transport", "commands", "preamble", "env", "workdir",
             "default_partition", "allowed_partitions", "charge_factor", "metadata", "bogus"]
site_entry = st.dictionaries(st.sampled_from(SITE_KEYS), json_value, max_size=6)
sites_doc = st.one_of(
    st.fixed_dictionaries({"sites": st.lists(site_entry, max_size=3)},
                          optional={"store": json_value}),
    json_value)


@FUZZ
@given(st.one_of(sites_doc.map(lambda d: yaml.safe_dump(d, allow_unicode=True)),
                 st.text(max_size=200), st.sampled_from(ALL)))
def test_any_sites_file_loads_or_is_bad_input(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("cfg") / "sites.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        load_config(path)
    except BadInput as e:
        assert str(e).startswith(f"sites file {path}") and "\n" not in str(e).strip()


# -- job specs as JSON (what REST, MCP and the agent's tools send) ------------------------------

spec_body = st.dictionaries(
    st.sampled_from(["name", "script", "command", "shell", "queue", "working_directory",
                     "stdout", "resources", "environment", "constraints", "stage_in",
                     "unknown", "metadata", "array", "dependencies", "bogus"]),
    json_value, max_size=5)


@FUZZ
@given(spec_body)
def test_any_json_spec_validates_or_is_refused_with_a_reason(body):
    try:
        JobSpec.model_validate(body)
    except BadInput as e:
        assert str(e).strip() and "\n" not in str(e)
    except ValueError as e:  # pydantic's ValidationError: the REST face answers 400
        assert "validation error" in str(e)


# -- event lines --------------------------------------------------------------------------------

@FUZZ
@given(st.one_of(st.text(max_size=200), st.sampled_from(EVENT_LINES + ALL),
                 st.lists(st.sampled_from(["1700000000.5", "end", "start", "abcdef012345",
                                           "77", "0", "300", "a" * 64, "nan", "-", ""]),
                          min_size=4, max_size=7).map(" ".join)))
def test_event_lines_parse_or_are_dropped(line):
    ev = parse_event_line(line)
    if ev is not None:
        assert ev.kind in ("start", "end") and 0 <= ev.rc < 1000 and len(ev.mac) == 64
        assert same_native(ev.native_id, ev.native_id)
        assert isinstance(same_native(ev.native_id, line[:20]), bool)


# -- REST bodies through a real server (one site reached locally; nothing is submitted) ----------

def _draw(strategy, n: int) -> list:
    """`n` values of a strategy (drawn synchronously; the server test is async)."""
    out: list = []

    @settings(max_examples=n, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(x):
        out.append(x)

    collect()
    return out




jp_server_config = sweep_helpers.one_local_site_server


rest_bodies = st.one_of(
    st.fixed_dictionaries({"script": hostile, "site": st.sampled_from(["nowhere", "x\ny"])},
                          optional={"dialect": hostile, "name": hostile}),
    st.fixed_dictionaries({"spec": spec_body, "site": st.just("nowhere")}),
    st.dictionaries(hostile, json_value, max_size=4),
)
translate_bodies = st.fixed_dictionaries(
    {"script": st.one_of(hostile, st.sampled_from(
        ["#!/bin/bash\n#SBATCH -J x\n#SBATCH -D -delete\necho\n",
         "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --time=1:00\necho\n"])),
     "to": st.sampled_from(["slurm", "pbs", "lsf", "flux", "sge", "x\ny"])},
    optional={"from": st.sampled_from(["slurm", "pbs", "lsf", "flux", "bogus"])})


async def test_hostile_rest_bodies_get_a_reasoned_4xx(api):
    for path, bodies in (("jobs", _draw(rest_bodies, 40)),
                         ("translate", _draw(translate_bodies, 40))):
        for body in bodies:
            raw = json.dumps(body).encode()
            r = await api.call("POST", path, raw=raw, expect=None, validate=True)
            assert r.code in (200, 400), (path, body, r.code, r.body)
            if r.code == 400:
                assert r.body["reason"] == "bad-input" and r.body["message"], (body, r.body)
    assert (await api.get("jobs"))["total"] == 0  # nothing was recorded


@pytest.mark.parametrize(("text", "said", "line"), [
    ('"\\uD800"', "one value, '\\ud800' (line 1), not a mapping", 1),
    ('# a comment\n"\\uD800"', "one value, '\\ud800' (line 2), not a mapping", 2),
    ('sites:\n  - name: a\n    scheduler: slurm\n    note: "\\uD800"\n',
     "site 'a' (sites[0]): note: unknown key", 4),
])
def test_a_sites_file_libyaml_refuses_is_read_once_with_its_lines(tmp_path, text, said, line):
    """Found by the fuzz test above in session 44's last suite: `"\\uD800"` (a lone
    surrogate escape) is refused by libyaml and read by PyYAML's own reader, and a second
    reading for line numbers (by libyaml) raised yaml's ScannerError. The file is read
    once, its lines taken from that reading: BadInput, with the line."""
    path = tmp_path / "sites.yaml"
    path.write_text(text)
    with pytest.raises(BadInput) as e:
        load_config(path)
    assert said in str(e.value) and f"(line {line})" in str(e.value), e.value


def test_the_tree_read_with_the_value_keeps_its_merge_keys():
    """Merging (`<<: *a`) rewrites the mapping nodes it builds from; the tree given back
    with the value is the one written, so lines are looked up as the file has them."""
    from diamond_jupyter.strict_yaml import MERGE_TAG, strict_read
    data, root = strict_read("x: &a {p: 1, q: 2}\ny:\n  <<: *a\n  q: 3\n")
    assert data["y"] == {"p": 1, "q": 3}
    y = root.value[1][1]
    assert [k.tag == MERGE_TAG or k.value for k, _ in y.value] == [True, "q"]

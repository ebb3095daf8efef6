"""The slurmrestd paths diamond asks and the replies its tests record, checked against what
the installed slurmrestd's plugins declare (their OpenAPI specs, read offline from the
plugins: tests/slurmrestd_spec.py) and write (the keys of their parse tables). Slurm
22.05.8 here offers v0.0.36 to v0.0.38 (slurm and slurmdb); later versions are not
installed, so not checked here (their replies follow the documented data parser).

What was found: the dbv0.0.38 spec declares fewer QOS and association fields than its
plugin writes (GrpJobs, GrpTRES, MaxSubmitJobsPerUser of a QOS; GrpJobs, GrpSubmitJobs,
MaxJobs, MaxSubmitJobs of an association are keys of its parse tables, not of its spec),
names an association's QOS list `QOS` where the plugin writes `qos`, and a QOS's `id` a
string where the plugin writes a number. Those departures are allowed below, each one
checked to be a key the plugin holds; any other fails. Paths are asked without the spec's
trailing slash, as slurmrestd 22.05.8 answers them (tests/fixtures/outputs/slurmrestd)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import slurmrestd_spec
from slurmrestd_spec import departures, installed_plugins, plugin_has_key, plugin_spec

from diamond_jupyter.dialects import slurm_rest

FIXTURES = Path(__file__).parent / "fixtures" / "outputs" / "slurmrestd"
PLUGINS = installed_plugins()
needs_plugins = pytest.mark.skipif(not PLUGINS, reason="no slurmrestd plugins installed")

# departures of the written replies from the dbv0.0.38 and v0.0.38 specs -> the key the
# installed plugin writes them under (None: seen in the recorded reply jobs.json instead)
WRITTEN_NOT_DECLARED = {
    "qos/limits/grace_time": ("dbv0_0_38", "limits/grace_time"),
    "qos/limits/max/active_jobs": ("dbv0_0_38", "limits/max/active_jobs/count"),
    "qos/limits/max/jobs/per": ("dbv0_0_38", "limits/max/jobs/per/user"),
    "qos/limits/max/tres/total": ("dbv0_0_38", "limits/max/tres/total"),
    "qos/id: integer, declared string": ("dbv0_0_38", "id"),
    "associations/qos": ("dbv0_0_38", "qos"),
    "associations/max/jobs/per/count": ("dbv0_0_38", "max/jobs/per/count"),
    "associations/max/jobs/per/accruing": ("dbv0_0_38", "max/jobs/per/accruing"),
    "associations/max/jobs/per/submitted": ("dbv0_0_38", "max/jobs/per/submitted"),
    "associations/max/jobs/active": ("dbv0_0_38", "max/jobs/active"),
    "associations/max/jobs/accruing": ("dbv0_0_38", "max/jobs/accruing"),
    "associations/max/jobs/total": ("dbv0_0_38", "max/jobs/total"),
    "associations/max/tres/group": ("dbv0_0_38", "max/tres/group/minutes"),
    **{f"meta/Slurm/version/{k}: integer, declared string": None
       for k in ("major", "minor", "micro")},
    "meta": None,  # (every reply's head; the licenses schema leaves it out)
}

REPLIES = [
    ("qos_v0.0.38.json", "dbv0_0_38", "dbv0.0.38_qos_info"),
    ("qos_no_slurmdbd.json", "dbv0_0_38", "dbv0.0.38_qos_info"),
    *[(f"associations_{who}_v0.0.38.json", "dbv0_0_38", "dbv0.0.38_associations_info")
      for who in ("alice", "proj", "root")],
    ("licenses_v0.0.38.json", "v0_0_38", "v0.0.38_licenses"),
    *[(f"jobs_{name}_v0.0.38.json", "v0_0_38", "v0.0.38_jobs_response")
      for name in ("resumed", "suspended")],
]


def _spec(plugin: str) -> dict:
    spec = plugin_spec(plugin)
    if spec is None:
        pytest.skip(f"slurmrestd plugin {plugin} is not installed")
    return spec


def _departures(name: str, plugin: str, schema: str) -> set[str]:
    spec = _spec(plugin)
    return set(departures(json.loads((FIXTURES / name).read_text()),
                          {"$ref": f"#/components/schemas/{schema}"}, spec))


@needs_plugins
@pytest.mark.parametrize("name, plugin, schema", REPLIES)
def test_each_written_reply_holds_only_what_the_installed_plugin_declares_or_writes(
        name, plugin, schema):
    assert _departures(name, plugin, schema) - WRITTEN_NOT_DECLARED.keys() == set()


@needs_plugins
def test_each_allowed_departure_is_a_key_the_plugin_writes_or_a_recorded_reply_holds():
    recorded = _departures("jobs.json", "v0_0_38", "v0.0.38_jobs_response")
    for departure, where in WRITTEN_NOT_DECLARED.items():
        if where is None:
            assert departure in recorded or departure == "meta", departure
        else:
            assert plugin_has_key(*where), (departure, where)
    # the paths read of a v0.0.38 QOS are its parse table's: MaxJobsPerUser under
    # active_jobs, MaxSubmitJobsPerUser beside it (its spec declares the first only)
    assert plugin_has_key("dbv0_0_38", "limits/max/jobs/active_jobs/per/user")
    # the checker finds what departs: a key of no schema, a number declared a string
    spec = _spec("dbv0_0_38")
    assert departures({"qos": [{"name": 7, "limits": {"max": {"oops": 1}}}]},
                      {"$ref": "#/components/schemas/dbv0.0.38_qos_info"}, spec) == [
        "qos/name: integer, declared string", "qos/limits/max/oops"]


@needs_plugins
@pytest.mark.parametrize("plugin", PLUGINS)
def test_the_paths_diamond_asks_are_the_installed_plugins(plugin):
    spec = _spec(plugin)
    api, version = ("slurmdb", plugin[2:]) if plugin.startswith("db") else ("slurm", plugin)
    dotted = version.replace("_", ".")
    # the transport asks {url}/{api}/{api_version}/{path}
    assert spec["servers"] == [{"url": f"/{api}/{dotted}/"}]
    paths = spec["paths"]
    if api == "slurmdb":
        assert "get" in paths["/qos/"] and "get" in paths["/associations/"]
        filters = {p["name"] for p in paths["/associations/"]["get"].get("parameters", [])}
        # v0.0.36 and v0.0.37 answer every association: another user's are left out
        assert ({"user", "account"} <= filters) == (dotted == "v0.0.38"), filters
        return
    for path in ("/jobs/", "/nodes/", "/partitions/", "/job/submit", "/job/{job_id}"):
        assert path in paths, path
    # GET licenses is asked where the plugin has it, from v0.0.38 on
    assert ("/licenses/" in paths) == (
        slurm_rest.api_number(dotted) >= slurm_rest.LICENSES_SINCE)
    licensed = spec["components"]["schemas"].get(f"{dotted}_license", {})
    if licensed:
        assert {"LicenseName", "Total", "Used", "Free", "Reserved"} <= licensed[
            "properties"].keys()


QOS_KEYS = [f"limits/max/{k}" for k in (
    "active_jobs/count", "jobs/active_jobs/per/account", "jobs/active_jobs/per/user",
    "accruing/per/account", "accruing/per/user", "jobs/per/account", "jobs/per/user")]
ASSOC_KEYS = [f"max/jobs/{k}" for k in ("per/count", "per/accruing", "per/submitted",
                                        "active", "accruing", "total")]


@needs_plugins
def test_the_plugins_parse_tables_put_each_job_limit_where_it_is_read():
    offsets = _offsets("dbv0_0_38", QOS_KEYS + ASSOC_KEYS)
    # slurmdb_qos_rec_t: grp_jobs, grp_submit_jobs, ... max_jobs_pa, max_jobs_pu,
    # max_jobs_accrue_pa, max_jobs_accrue_pu, max_submit_jobs_pa, max_submit_jobs_pu
    # (uint32 each): the user's running-jobs limit is under active_jobs, the submitted
    # one beside it, and no key reads grp_submit_jobs (GrpSubmitJobs: not known)
    grp_jobs, pa, *others = (offsets[k] for k in QOS_KEYS)
    assert others == [pa + 4 * i for i in range(1, 6)]
    assert grp_jobs + 4 not in offsets.values()
    # slurmdb_assoc_rec_t: grp_jobs, grp_jobs_accrue, grp_submit_jobs ... max_jobs,
    # max_jobs_accrue, max_submit_jobs
    count, accruing, submitted, active, most_accruing, total = (
        offsets[k] for k in ASSOC_KEYS)
    assert (accruing, submitted) == (count + 4, count + 8)
    assert (most_accruing, total) == (active + 4, active + 8)


def _offsets(plugin: str, keys: list[str]) -> dict[str, int]:
    """Each key's one field offset in the plugin's parse tables (skipped where they cannot
    be read here)."""
    found = slurmrestd_spec.parse_table_offsets(plugin, keys)
    if found is None:
        pytest.skip(f"the parse tables of {plugin} are not readable here")
    assert all(len(v) == 1 for v in found.values()), found
    return {k: v[0] for k, v in found.items()}

"""The load kinds' registry (loads/kinds/): every kind is one module listed once in KINDS,
and a kind is complete only when the module, the profile schema and docs/profiles.md agree.
This is the checklist for adding a kind; it fails on the first thing missing."""

import pytest

from airbase.paths import ROOT
from loads import kinds
from loads.profiles import KIND_FIELDS

SCHEMA = kinds.profile_schema()
PROCESS = SCHEMA["$defs"]["process"]
COMMON = {"name", "kind", "count", "threads", "start_s", "duration_s", "stop_s", "cpus", "stand_in_for", "fallback"}


def test_the_schema_names_exactly_the_registered_kinds():
    assert sorted(PROCESS["properties"]["kind"]["enum"]) == sorted(kinds.KINDS)


@pytest.mark.parametrize("name", sorted(kinds.KINDS))
def test_a_registered_kind_is_complete(name):
    mod = kinds.KINDS[name]
    assert mod.NAME == name and (mod.__doc__ or "").strip(), f"{name}: a module docstring says what it runs"
    for fn in ("availability", "describe", "command", "figures", "doctor_lines"):
        assert callable(getattr(mod, fn, None)), f"{name}: no {fn}()"
    assert set(mod.REQUIRED) <= set(mod.SCHEMA), f"{name}: requires a field it does not declare"
    for field in mod.SCHEMA:
        assert mod.SCHEMA[field].get("description", "").startswith(f"{name}: "), f"{name}: {field} needs a description"
        assert field in PROCESS["properties"], f"{name}: its field {field} is not in the profile schema"
        assert KIND_FIELDS[field] == name, f"{field} is claimed by two kinds"
    guide = (ROOT / "docs" / "profiles.md").read_text()
    assert f"| `{name}` |" in guide, f"{name}: no row in docs/profiles.md's kind table"


def test_every_kind_specific_schema_field_belongs_to_a_kind():
    """A field in the schema that no kind reads would be accepted and ignored."""
    assert set(PROCESS["properties"]) - COMMON == set(KIND_FIELDS)


def test_cpu_demand_is_one_definition_with_each_kinds_duty_cycle():
    """Tables, predictions, timeline figures and the estimate all count a load's CPUs with
    loads.kinds.cpu_demand: threads x the measured busy share, else the kind's nominal duty."""
    from analysis import aggregate, predict, tracking
    from loads.kinds import cpu_demand
    assert cpu_demand({"kind": "cpu", "threads": 2}) == 2
    assert cpu_demand({"kind": "onoff", "threads": 2}) == 1.0  # nominal: half the time busy
    measured = {"kind": "onoff", "threads": 1, "figures": {"busy_share": 0.4}}
    assert cpu_demand(measured) == 0.4 and cpu_demand(measured, measured=False) == 0.5
    assert cpu_demand({"kind": "onoff", "threads": 1, "busy_share": 0.7}) == 0.7
    assert aggregate.n_loads({"processes": [{"kind": "cpu"}, {"kind": "onoff"}]}) == 1.5
    whole = [{"kind": "onoff", "threads": 1, "start_s": 0, "stop_s": None, "figures": {"busy_share": 0.4}}]
    assert tracking.loads_running(whole, 1.0) == 0.4
    assert predict.load_intervals(whole)[0][2] == 0.4

"""The gang setup with a real private SLURM (munged, slurmctld, slurmd started by the
runner): the engine and a CPU load are separate jobs that SLURM time-slices, which the
job states sampled during the run show; afterwards no daemon, job or process is left."""
import json

import jsonschema
import pytest

from trial_helpers import AIRLAB, SCHEMA, run
from workflows.setups import open_setup


def test_gang_jobs_alternate(tmp_path):
    ok, why = open_setup("gang").availability()
    if not ok:
        pytest.skip(f"gang cannot run here: {why}")
    out = tmp_path / "gang.json"
    # About 12 s of engine work: SLURM suspends the second job as it starts (the first
    # switch comes ~10 s in), then the engine and the load take turns every 5 s slice.
    engine = ["--mode", "fm", "--threads", "2", "--lps-per-pe", "1000", "--remote", "0.2", "--end-time", "70000"]
    r = run(out, setup="gang", engine=engine)
    assert r.returncode == 0, r.stderr
    assert r.left_behind() == [], "SLURM daemons, jobs or loads outlived the trial"
    d = json.loads(out.read_text())
    jsonschema.validate(d, SCHEMA)
    applied = d["setup"]["applied"]
    assert applied["preempt_mode"] == "GANG"
    assert applied["jobs_alternated"], applied["job_states"]
    assert d["loads"][0]["cpu_s"] > 0.5, "the load never got its turn"
    assert applied["jobs_left_at_end"] == []

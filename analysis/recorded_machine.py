"""The machine an experiment ran on, as its trials recorded it, not the host that analyses
them (under the SLURM profile the analysis runs on a login node)."""
import json
from pathlib import Path

from workflows import machine


def trial_machines(experiments):
    """The machines the trials ran on, as the trials recorded them (results/<scale>/trials/
    <experiment>/*.json beside the tables), distinct ones in order; [] when none is found.
    experiments: (name, _, table path) triples."""
    seen = []
    for name, _, table in experiments:
        folder = Path(table).parent.parent / "trials" / name
        for p in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            try:
                m = json.loads(p.read_text()).get("machine")
            except (OSError, ValueError):
                continue
            if m:
                if m not in seen:
                    seen.append(m)
                break  # one record per experiment: a run's trials share their machine
    return seen


def machine_facts(experiments):
    """The first recorded machine; without any trial record the analysing host's facts,
    marked recorded: False so the report can say so."""
    machines = trial_machines(experiments)
    return machines[0] if machines else {**machine.facts(), "recorded": False}

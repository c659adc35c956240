"""`airlab doctor`: every section is there, facts match the machine, every "no" has a
reason, and setups the machine cannot apply are reported as such (the same availability
the trial runner uses, so doctor and trials never disagree)."""
import os
import re
import subprocess

from trial_helpers import AIRLAB
from workflows.setups import list_setups, open_setup


def test_doctor_reports_every_section_with_reasons():
    r = subprocess.run([AIRLAB, "doctor", "--quick"], capture_output=True, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    for section in ("machine", "engine", "cgroups", "perf", "setups", "load kinds", "profiles"):
        assert re.search(rf"^{section}$", out, re.M), section
    assert f"{len(os.sched_getaffinity(0))} usable" in out
    assert re.search(r"topology: .*(Machine|Package|Core|hwloc)", out)
    assert re.search(r"software counters", out)
    for line in out.splitlines():
        if line.startswith("  no  "):
            assert ": " in line and len(line.split(": ", 1)[1]) > 5, f"a no without its reason: {line}"
    for name in list_setups():
        ok, why = open_setup(name).availability()
        line = next(ln for ln in out.splitlines() if re.match(rf"  (yes|no)\s+{re.escape(name)} \(", ln))
        assert line.startswith("  yes" if ok else "  no"), line
    assert re.search(r"^  (yes|no)\s+parsec", out, re.M)

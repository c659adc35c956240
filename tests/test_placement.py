"""Waiting for the host to run the CPUs near each other (workflows/placement.py): the
decision on synthetic probes, the level kept per boot, and real trials with --wait-near
(a level of 1 ns makes every real probe "far", which this VM cannot be made to do)."""
import json
import tempfile
from pathlib import Path

import jsonschema
import pytest

from trial_helpers import SCHEMA, run
from workflows import placement

NO_LOAD_ENGINE = ["--mode", "fm", "--threads", "2", "--lps-per-pe", "300", "--remote", "0.2", "--end-time", "2000"]


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t

    def sleep(self, s):
        self.t += s


def probes(*pingpongs):
    it = iter(pingpongs)
    return lambda: {"chase_ns": 10.0, "compute_ns": 1.0, "pingpong_ns": next(it)}


def test_far_is_relative_to_the_level_and_unknown_is_not_far():
    assert placement.is_far({"pingpong_ns": 320}, 50)
    assert placement.is_far({"pingpong_ns": 150}, 50)  # exactly 3x
    assert not placement.is_far({"pingpong_ns": 149}, 50)
    assert not placement.is_far({"pingpong_ns": None}, 50)  # one CPU
    assert not placement.is_far({"error": "no airprobe"}, 50)
    assert not placement.is_far({"pingpong_ns": 320}, None)  # no level yet


def _handoff(**by_ns):
    """A barrier_handoff histogram with counts at these bucket starts: _handoff(n96=900)."""
    counts = [0] * 65
    for k, n in by_ns.items():
        counts[min(int(k[1:]) // 16, 64)] += n
    return {"bucket_ns": 16, "counts": counts}


def test_far_share_counts_spinning_waits_at_far_speed():
    # a near run (the VM: 80-130 ns), a far one (240-300 ns), one that moved midway
    assert placement.far_share(_handoff(n80=200, n96=700, n112=100)) == 0.0
    assert placement.far_share(_handoff(n256=800, n288=200)) == 1.0
    assert placement.far_share(_handoff(n96=750, n272=250)) == 0.25
    # the threshold: 160-175 ns is near, 176 ns on far
    assert placement.far_share(_handoff(n160=100)) == 0.0 and placement.far_share(_handoff(n176=100)) == 1.0
    # yielded, slept or switched-out waits (>= 1024 ns) say nothing about placement
    assert placement.far_share(_handoff(n96=300, n2000=5000)) == 0.0
    # too few spinning waits, no histogram (an older engine, seq), an empty one
    assert placement.far_share(_handoff(n96=99, n2000=5000)) is None
    assert placement.far_share(None) is None and placement.far_share({"bucket_ns": 16, "counts": []}) is None
    # with a near level the threshold is 3.5x it: 40 ns -> 140 ns
    assert placement.far_share(_handoff(n144=100), near_ns=40) == 1.0 and placement.far_share(_handoff(n128=100), 40) == 0.0
    # with a near hand-off level too, at most 2x it: the b6bf153 pair's near ping-pong of 118 ns
    # put 3.5x at 413 ns, above its far runs' hand-offs (288-304 ns; near ones 128 ns)
    far_run, near_run = _handoff(n288=600, n304=400), _handoff(n128=900, n144=100)
    assert placement.far_share(far_run, near_ns=118) == 0.0
    assert placement.far_share(far_run, 118, near_handoff_ns=136) == 1.0
    assert placement.far_share(near_run, 118, near_handoff_ns=136) == 0.0
    # the lower of the two thresholds counts: a high hand-off level never hides a far run
    assert placement.far_share(_handoff(n144=100), 40, near_handoff_ns=500) == 1.0


def test_the_median_hand_off_is_the_middle_of_its_bucket():
    assert placement.median_handoff_ns(_handoff(n128=900, n288=100)) == 136
    assert placement.median_handoff_ns(_handoff(n128=400, n288=600)) == 296
    assert placement.median_handoff_ns(_handoff(n96=99, n2000=5000)) is None  # too few spinning


def test_a_run_is_far_by_its_waits_else_by_the_probe_after_it():
    assert placement.ran_far(0.25, False) and not placement.ran_far(0.24, False)
    # with a far probe after the run a tenth of its waits far is enough (FAR_AFTER_SHARE)
    assert placement.ran_far(0.10, True) and not placement.ran_far(0.09, True)
    assert placement.ran_far(None, True) and not placement.ran_far(None, False)
    # re-runs for far placement: by ran_far where recorded, else by far_after (older records)
    nz = {"attempts": [{"ran_far": True, "far_after": False, "disturbed": False},
                       {"ran_far": False, "far_after": True, "disturbed": False},
                       {"far_after": True, "disturbed": False}, {"ran_far": True, "disturbed": True}, {}]}
    assert placement.far_reruns(nz) == 2


def test_the_level_is_one_the_host_held_on_this_boot(tmp_path):
    path = tmp_path / "cal" / placement.LEVEL_FILE
    level = placement.NearLevel(path)
    assert level.get() is None
    assert level.note({"pingpong_ns": 320}) == 320  # the first probe, far or not
    assert level.note({"pingpong_ns": 52}, {"error": "x"}) == 320  # the highest while fewer than CONFIRM
    for x in (60, 55, 58):
        assert level.note({"pingpong_ns": x}) == 320
    assert level.note({"pingpong_ns": 54}) == 60  # five near probes: the fifth lowest
    assert placement.NearLevel(path).get() == 60  # kept for the next trial
    # one probe far below the host's usual near (39 ns once, c0399cb run A) moves the level
    # to the next confirmed value, not to itself
    assert level.note({"pingpong_ns": 39}) == 58
    assert not placement.is_far({"pingpong_ns": 120}, placement.NearLevel(path).get())
    d = json.loads(path.read_text())
    path.write_text(json.dumps({**d, "boot_id": "another boot"}))
    assert placement.NearLevel(path).get() is None  # another boot may be another host
    path.write_text("{half a fi")
    assert placement.NearLevel(path).get() is None


def _held(level, **probe):
    """Note the same value CONFIRM times: a level the host held."""
    for _ in range(placement.CONFIRM):
        got = level.note_handoff(probe["handoff"]) if "handoff" in probe else level.note(probe)
    return got


def test_the_hand_off_level_is_one_the_runs_held_on_this_boot(tmp_path):
    path = tmp_path / placement.LEVEL_FILE
    level = placement.NearLevel(path)
    assert level.note_handoff(None) is None
    assert level.note_handoff(_handoff(n288=500)) == 296  # the first run, far or not
    assert level.note({"pingpong_ns": 118}) == 118  # the ping-pong level keeps the hand-off one
    assert _held(level, handoff=_handoff(n128=500)) == 136
    assert level.note_handoff(_handoff(n96=50, n2000=900)) == 136  # too few spinning waits
    assert _held(level, pingpong_ns=100) == 100  # a lower ping-pong level rewrites the file...
    assert placement.NearLevel(path).note_handoff(_handoff(n288=500)) == 136  # ...keeping this
    assert placement.NearLevel(path).get() == 100
    d = json.loads(path.read_text())
    path.write_text(json.dumps({**d, "boot_id": "another boot"}))
    assert placement.NearLevel(path).note_handoff(_handoff(n288=500)) == 296  # another boot


def test_a_level_that_cannot_be_kept_still_holds_for_this_runner(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    level = placement.NearLevel(blocker / placement.LEVEL_FILE)
    assert _held(level, pingpong_ns=52) == 52
    assert placement.is_far({"pingpong_ns": 320}, level.note({"pingpong_ns": 320}))


def test_a_configuration_is_far_only_beyond_the_share_it_usually_shows(tmp_path):
    """Some configurations see slow hand-offs in every run (the a185202 pair: every no-load ADM
    run 30-42% past the threshold, every EPG-4000 one 45-65%): a run is far when its share is
    FAR_RERUN_SHARE above the lowest its configuration showed earlier with near probes on both
    sides, the share alone before that; kept per boot beside the level, per configuration."""
    path = tmp_path / placement.LEVEL_FILE
    near, far = {"pingpong_ns": 50}, {"pingpong_ns": 320}
    steady = _handoff(n96=670, n400=330)  # threshold 3.5 x 50 = 175 ns: a third of the waits past it
    moved = _handoff(n96=100, n400=900)
    level = placement.NearLevel(path)
    for _ in range(placement.CONFIRM):
        level.note(near)
    first = level.judge(steady, near, config="adm")
    assert (first["far_share"], first["usual_far_share"], first["ran_far"]) == (0.33, None, True)
    again = placement.NearLevel(path).judge(steady, near, config="adm")  # the next runner reads the file
    assert (again["usual_far_share"], again["ran_far"]) == (0.33, False)
    assert placement.NearLevel(path).judge(moved, near, config="adm")["ran_far"]  # 0.9 >= 0.33 + 0.25
    assert placement.NearLevel(path).judge(steady, near, config="fm")["ran_far"]  # its own, none yet
    # A run with a far probe before or after it is not a configuration's usual share.
    level = placement.NearLevel(path)
    assert level.judge(steady, far, config="x")["ran_far"]
    assert level.judge(steady, near, config="x", started_far=True)["ran_far"]
    assert level.judge(steady, near, config="x")["usual_far_share"] is None
    # A far probe after the run, or a far start: the share alone, whatever the usual one
    # (a usual share seeded by a run that was far all along, probes near on both sides).
    level = placement.NearLevel(path)
    all_far = _handoff(n400=1000)
    assert level.judge(all_far, near, config="y")["ran_far"]  # the first: by its share
    seeded = level.judge(all_far, near, config="y")
    assert (seeded["usual_far_share"], seeded["ran_far"]) == (1.0, False)  # probes near: excused
    for judged in (level.judge(all_far, far, config="y"), level.judge(all_far, near, config="y", started_far=True)):
        assert (judged["usual_far_share"], judged["ran_far"]) == (1.0, True)
    # Without a configuration (the calibration's pilots): the share alone, as before.
    assert placement.NearLevel(path).judge(steady, near)["ran_far"]
    # Another boot may be another host: nothing usual yet.
    d = json.loads(path.read_text())
    path.write_text(json.dumps({**d, "boot_id": "another boot"}))
    assert placement.NearLevel(path).judge(steady, near, config="adm")["usual_far_share"] is None


def test_the_tables_ran_far_is_the_runners_verdict_else_the_share():
    from analysis.baselines import ran_far
    assert not ran_far({"far_share": "0.4", "ran_far": "0", "ended_far": "0"})  # its configuration's usual
    assert ran_far({"far_share": "0.1", "ran_far": "1"})
    assert ran_far({"far_share": "0.4", "ran_far": "", "ended_far": "0"})  # a table from before the column
    assert ran_far({"far_share": "", "ended_far": "1"}) and not ran_far({})


def test_a_workflow_starts_from_the_levels_earlier_workflows_held_on_this_boot(tmp_path):
    """A workflow that starts in a far phase must not learn the far level as near (run B of the
    9e64477 pair did for ~100 s: short end times, far runs kept): with the machine's file its
    runners start from the levels earlier workflows held on this boot."""
    shared = tmp_path / "machine.json"
    earlier = placement.NearLevel(tmp_path / "a" / placement.LEVEL_FILE, shared=shared)
    assert _held(earlier, pingpong_ns=50) == 50
    assert _held(earlier, handoff=_handoff(n96=500)) == 104
    new = placement.NearLevel(tmp_path / "b" / placement.LEVEL_FILE, shared=shared)
    assert new.get() == 50 and new.far({"pingpong_ns": 330})
    assert new.note_handoff(_handoff(n288=500)) == 104  # a far run's hand-offs are not the level
    assert placement.far_share(_handoff(n288=500), new.get(), 104) == 1.0
    shared.unlink()  # from its first values on the workflow holds the levels in its own file
    again = placement.NearLevel(new.path)
    assert again.get() == 50 and again.note_handoff(None) == 104
    # Without it the first probe of a far phase is the level, and near (what run B did).
    alone = placement.NearLevel(tmp_path / "c" / placement.LEVEL_FILE)
    assert not alone.far({"pingpong_ns": 330}) and alone.get() == 330


def test_the_machines_file_gets_what_runners_measured_once(tmp_path):
    """Only measured values go to the machine's file, each once: a seed shared back would
    count one probe twice, and the CONFIRM-th lowest would soon be one probe's reading."""
    shared = tmp_path / "machine.json"
    placement.NearLevel(tmp_path / "a" / placement.LEVEL_FILE, shared=shared).note({"pingpong_ns": 40})
    second = placement.NearLevel(tmp_path / "b" / placement.LEVEL_FILE, shared=shared)
    assert second.note({"pingpong_ns": 60}) == 60  # seeded with 40, then 60: the highest of two
    assert json.loads(shared.read_text())["pingpong_ns_lowest"] == [40, 60]


def test_the_suites_trials_keep_out_of_the_labs_machine_file(monkeypatch, tmp_path):
    """The suite's runners note their probes in the suite's own file (tests/conftest.py), so
    its trials neither start from the lab's levels nor change them."""
    suites = placement.shared_level_file()
    monkeypatch.delenv(placement.SHARED_LEVEL_ENV)
    labs = placement.shared_level_file()
    assert suites is not None and suites != labs
    assert suites.parent == Path(tempfile.gettempdir()) and "airlab-test-placement" in suites.name


def test_the_machines_file_counts_only_on_this_boot_and_for_hours(tmp_path):
    shared = tmp_path / "machine.json"
    _held(placement.NearLevel(tmp_path / "a" / placement.LEVEL_FILE, shared=shared), pingpong_ns=50)
    d = json.loads(shared.read_text())
    fresh = lambda: placement.NearLevel(tmp_path / "b" / placement.LEVEL_FILE, shared=shared).get()
    assert fresh() == 50
    shared.write_text(json.dumps({**d, "updated_unix": d["updated_unix"] - placement.SHARED_MAX_AGE_S - 60}))
    assert fresh() is None  # a VM moved to another host keeps its boot id
    # ...and the next measured value starts the machine's file over (else, written only when
    # its levels change, a steady level would stay aged out for the rest of the boot).
    placement.NearLevel(tmp_path / "c" / placement.LEVEL_FILE, shared=shared).note({"pingpong_ns": 60})
    assert json.loads(shared.read_text())["pingpong_ns_lowest"] == [60] and fresh() == 60
    shared.write_text(json.dumps({**d, "boot_id": "another boot"}))
    assert fresh() is None


def test_the_machines_file_is_named_by_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(placement.SHARED_LEVEL_ENV, str(tmp_path / "x.json"))
    assert placement.shared_level_file() == tmp_path / "x.json"
    monkeypatch.setenv(placement.SHARED_LEVEL_ENV, "")
    assert placement.shared_level_file() is None
    monkeypatch.delenv(placement.SHARED_LEVEL_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert placement.shared_level_file() == tmp_path / "airlab" / "placement-levels.json"


def test_wait_ends_at_the_first_near_probe(tmp_path):
    level = placement.NearLevel(tmp_path / placement.LEVEL_FILE)
    _held(level, pingpong_ns=50)
    clock = FakeClock()
    last, w = placement.wait_until_near(level, probe=probes(330, 320, 55, 400), max_wait_s=15,
                                        poll_s=0.25, sleep=clock.sleep, clock=clock)
    assert last["pingpong_ns"] == 55
    assert w == {"waited_s": 0.5, "probes": 3, "far": False, "near_ns": 50, "max_s": 15}


def test_wait_gives_up_after_its_maximum_and_says_far(tmp_path):
    level = placement.NearLevel(tmp_path / placement.LEVEL_FILE)
    _held(level, pingpong_ns=50)
    clock = FakeClock()
    last, w = placement.wait_until_near(level, probe=probes(*[330] * 100), max_wait_s=2,
                                        poll_s=0.25, sleep=clock.sleep, clock=clock)
    assert w["far"] is True and w["probes"] == 9 and w["waited_s"] == 2.0 and w["max_s"] == 2
    # A machine whose ping-pong never moves: the first probe sets the level and is near.
    fresh = placement.NearLevel(tmp_path / "other.json")
    _, w = placement.wait_until_near(fresh, probe=probes(330), sleep=clock.sleep, clock=clock)
    assert w["probes"] == 1 and w["far"] is False and w["near_ns"] == 330


def _far_level(cal):
    """A level no real probe comes near: every probe of the trial is far."""
    _held(placement.NearLevel(cal / placement.LEVEL_FILE), pingpong_ns=1e-3)


@pytest.fixture
def two_cpus():
    import os
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("the ping-pong needs two CPUs")


def test_calibration_waits_for_near_and_counts_far_pilots_as_disturbed(tmp_path, two_cpus):
    """With a level no probe reaches every pilot ends far: none is clean, all PILOT_TRIES
    run, and the record says so (the trial then warns). Without `near` nothing is waited."""
    from workflows.calibration import PILOT_TRIES, calibrate
    cal = tmp_path / "cal"
    _far_level(cal)
    config = ["--mode", "fm", "--threads", "2", "--lps-per-pe", "300", "--remote", "0.2"]
    rec = calibrate(config, 0.3, cal, near=(placement.NearLevel(cal / placement.LEVEL_FILE), 0.0))
    p = rec["pilot"]
    assert p["waited_for_near"] and p["far_runs"] == PILOT_TRIES == len(p["walls_s"])
    assert p["disturbed"] and p["undisturbed_runs"] == 0
    plain = calibrate(config, 0.3, tmp_path / "plain")["pilot"]
    assert not plain["waited_for_near"] and plain["far_runs"] == 0


def test_a_pilot_that_started_far_counts_as_far_even_if_it_ended_near(tmp_path, two_cpus, monkeypatch):
    """The wait before each pilot ran out while the CPUs were still far; the probe after it
    is near (a fresh level). Such a pilot ran at least partly far and must not set the rate:
    before, only the probe after a pilot decided."""
    from workflows.calibration import PILOT_TRIES, calibrate
    waits = []

    def wait_ran_out(level, max_wait_s):
        waits.append(max_wait_s)
        return {"pingpong_ns": 330.0}, {"waited_s": max_wait_s, "probes": 1, "far": True, "near_ns": 50.0}
    monkeypatch.setattr(placement, "wait_until_near", wait_ran_out)
    cal = tmp_path / "cal"
    config = ["--mode", "fm", "--threads", "2", "--lps-per-pe", "300", "--remote", "0.2"]
    p = calibrate(config, 0.3, cal, near=(placement.NearLevel(cal / placement.LEVEL_FILE), 15.0))["pilot"]
    assert p["far_runs"] == PILOT_TRIES == len(p["walls_s"]) and p["undisturbed_runs"] == 0 and p["disturbed"]
    assert waits and set(waits) == {15.0}


def test_a_trial_waits_for_near_and_records_it(tmp_path, two_cpus):
    cal = tmp_path / "cal"
    out = tmp_path / "t.json"
    r = run(out, profile="none", engine=NO_LOAD_ENGINE, extra=["--wait-near", "--calibration-dir", str(cal)])
    assert r.returncode == 0, r.stderr
    d = json.loads(out.read_text())
    jsonschema.validate(d, SCHEMA)
    ms = d["machine_speed"]
    assert ms["wait"]["probes"] >= 1 and isinstance(ms["far_after"], bool)
    level = placement.NearLevel(cal / placement.LEVEL_FILE).get()
    # measured during the run: a 2-thread run of hundreds of rounds has enough spinning waits
    assert 0.0 <= ms["far_share"] <= 1.0 and d["noise"]["attempts"][-1]["far_share"] == ms["far_share"]
    handoff_level = json.loads((cal / placement.LEVEL_FILE).read_text())["handoff_ns"]
    assert ms["near_handoff_ns"] == handoff_level <= placement.median_handoff_ns(d["engine"]["barrier_handoff"])
    assert ms["far_share"] == placement.far_share(d["engine"]["barrier_handoff"], level, handoff_level)
    # the verdict against its configuration's usual share, of which this was the first run
    assert ms["usual_far_share"] is None
    assert ms["ran_far"] == (ms["far_share"] >= placement.far_share_limit(ms["far_after"]))
    from analysis.aggregate import row_of
    assert row_of(d, "placement", "test")["ran_far"] == int(ms["ran_far"])
    # the level: the highest of the fewer than CONFIRM probes this trial made
    seen = json.loads((cal / placement.LEVEL_FILE).read_text())["pingpong_ns_lowest"]
    assert level == seen[-1] and ms["after"]["pingpong_ns"] in seen and ms["before"]["pingpong_ns"] in seen


def _trial_beside_a_far_level(tmp_path, profile, wait_max, extra=()):
    """A real trial with --wait-near and --reruns 1 whose every probe is far: (stderr, record)."""
    cal = tmp_path / "cal"
    _far_level(cal)
    out = tmp_path / "t.json"
    r = run(out, profile=profile, engine=NO_LOAD_ENGINE,
            extra=["--wait-near", "--wait-near-max", wait_max, "--reruns", "1", "--calibration-dir", str(cal), *extra])
    assert r.returncode == 0, r.stderr
    d = json.loads(out.read_text())
    jsonschema.validate(d, SCHEMA)
    return r.stderr, d


def test_a_trial_in_a_new_calibration_folder_judges_by_the_machines_level(tmp_path, two_cpus, monkeypatch):
    """The runner reads the machine's file ($AIRLAB_PLACEMENT_FILE): with a level there that
    no real probe comes near, a trial whose own folder is new finds its probes far."""
    shared = tmp_path / "machine.json"
    _held(placement.NearLevel(tmp_path / "earlier" / placement.LEVEL_FILE, shared=shared), pingpong_ns=1e-3)
    monkeypatch.setenv(placement.SHARED_LEVEL_ENV, str(shared))
    out = tmp_path / "t.json"
    r = run(out, profile="none", engine=NO_LOAD_ENGINE,
            extra=["--wait-near", "--wait-near-max", "0", "--calibration-dir", str(tmp_path / "new-cal")])
    assert r.returncode == 0, r.stderr
    ms = json.loads(out.read_text())["machine_speed"]
    assert ms["wait"]["near_ns"] == 1e-3 and ms["wait"]["far"] is True and ms["far_after"] is True, ms


def test_a_no_load_trial_that_ends_far_runs_again(tmp_path, two_cpus):
    stderr, d = _trial_beside_a_far_level(tmp_path, "none", "0.3")
    nz, ms = d["noise"], d["machine_speed"]
    # Far by the level: every barrier wait of the run too (the threshold is 3.5x the level).
    assert nz["reruns"] == 1 and [a["far_after"] for a in nz["attempts"]] == [True, True], nz
    assert [(a["far_share"], a["ran_far"]) for a in nz["attempts"]] == [(1.0, True)] * 2, nz
    # Still far when the wait gave up, and only then: after --wait-near-max. Not a probe count:
    # beside a full-core hog one ping-pong probe alone outlasted the 0.3 s (the loop's count
    # is checked on a synthetic clock above).
    w = ms["wait"]
    assert w["far"] is True and w["probes"] >= 1 and w["waited_s"] >= w["max_s"] == 0.3, w
    assert ms["far_after"] is True
    assert "still ran the CPUs far apart" in stderr
    # The re-run's reason: other work on the machine (another test) is named first.
    assert ("100% of its barrier waits far" if not nz["attempts"][0]["disturbed"] else "disturbed (") in stderr, stderr
    assert d["engine"]["committed_events"] > 0
    # Equally far runs: the last is kept unless other work disturbed it, and the record is
    # that run's (its own window).
    from workflows.trial import kept_attempt
    kept = 1 if not nz["attempts"][1]["disturbed"] or nz["attempts"][0]["disturbed"] else 0
    assert nz["kept_attempt"] == kept == kept_attempt(nz["attempts"]), nz
    assert nz["window_s"] == nz["attempts"][kept]["window_s"], nz
    # The table row tells a far re-run from a disturbed one (analysis/caption.py's sentence).
    from analysis.aggregate import row_of
    row = row_of(d, "placement", "test")
    assert row["ended_far"] == 1 and row["far_reruns"] == (0 if nz["attempts"][0]["disturbed"] else 1)
    # Each run records its own waits (--wait-near-max 0.3: every probe far, so each waited
    # it out), and where the trial's time went adds up to its span with both runs counted.
    assert all(0.25 <= a["waited_s"] < 5 and a["settle_s"] >= 0 for a in nz["attempts"]), nz
    assert nz["attempts"][kept]["waited_s"] == ms["wait"]["waited_s"], (nz, ms)
    assert nz["attempts"][kept]["settle_s"] == nz["workflow_settle_s"], nz
    from analysis.time_spent import time_spent
    spent = time_spent([d])
    t = d["trial"]
    assert spent["trials"] == 1 and abs(spent["span_s"] - (t["finished_unix"] - t["started_unix"])) < 1e-9
    parts = spent["parts"]
    assert abs(sum(parts.values()) - spent["span_s"]) < 1e-6 and parts["between"] == 0, spent
    assert parts["engine"] == nz["window_s"], spent
    assert parts["rerun"] == pytest.approx(nz["attempts"][1 - kept]["window_s"], abs=1e-9), spent
    assert parts["near_wait"] == pytest.approx(sum(a["waited_s"] for a in nz["attempts"]), abs=1e-9), spent
    assert parts["runner"] > 0, spent


def test_a_loaded_trial_that_ends_far_is_kept(tmp_path, two_cpus):
    """Loaded trials are long: kept, marked far_after, unless their experiment asks."""
    _, d = _trial_beside_a_far_level(tmp_path, "cpu-1", "0")
    assert d["noise"]["reruns"] == 0 or d["noise"]["attempts"][0]["disturbed"], d["noise"]
    assert d["machine_speed"]["far_after"] is True and d["machine_speed"]["wait"]["probes"] == 1


def test_a_loaded_trial_that_ends_far_runs_again_when_asked(tmp_path, two_cpus):
    """--rerun-far-loaded (an experiment's rerun_far_loaded): a loaded run judged far is run
    again like a no-load one, and the table row counts it as a far re-run of a loaded trial."""
    stderr, d = _trial_beside_a_far_level(tmp_path, "cpu-1", "0", extra=["--rerun-far-loaded"])
    nz = d["noise"]
    assert nz["reruns"] == 1 and [a["ran_far"] for a in nz["attempts"]] == [True, True], nz
    assert "running it again (1 of 1)" in stderr, stderr
    # The reason: far, unless other work (another test) disturbed the first run; only then
    # may a re-run that the flag did not cause satisfy the count above.
    first_disturbed = nz["attempts"][0]["disturbed"]
    assert ("disturbed (" if first_disturbed else "the host ran the CPUs far apart (") in stderr, stderr
    from analysis.aggregate import row_of
    from analysis.caption import noise_sentence
    row = row_of(d, "placement", "test")
    assert row["profile"] != "none" and row["far_reruns"] == (0 if nz["attempts"][0]["disturbed"] else 1)
    if row["far_reruns"]:
        assert "1 trial(s) (1 loaded) were run again because the host ran the CPUs far apart" in \
            noise_sentence([{k: str(v) for k, v in row.items()}])


def test_out_of_re_runs_the_trial_keeps_its_nearest_undisturbed_run():
    from workflows.trial import kept_attempt

    def run_(far_share, disturbed=False, ran_far=None):
        return {"foreign_cpu_s": 0.0, "disturbed": disturbed, "far_share": far_share,
                "ran_far": far_share is not None and far_share >= placement.FAR_RERUN_SHARE if ran_far is None else ran_far}
    # The usual end: the first near run after far ones.
    assert kept_attempt([run_(0.9), run_(0.4), run_(0.01)]) == 2
    assert kept_attempt([run_(0.0)]) == 0
    # Out of re-runs, every run far: the least far, not the last.
    assert kept_attempt([run_(0.9), run_(0.3), run_(0.8)]) == 1
    # Disturbed runs only when nothing else is left; equally far: the last.
    assert kept_attempt([run_(0.3), run_(0.0, disturbed=True), run_(0.0, disturbed=True)]) == 0
    assert kept_attempt([run_(0.0, disturbed=True), run_(0.1, disturbed=True)]) == 1
    assert kept_attempt([run_(1.0), run_(1.0)]) == 1
    # Disturbed, none far (or no level to judge far by): the last, whatever the shares;
    # every run disturbed and far: the least far.
    assert kept_attempt([run_(0.1, True, ran_far=False), run_(0.2, True, ran_far=False)]) == 1
    assert kept_attempt([run_(0.5, disturbed=True), run_(0.9, disturbed=True)]) == 0
    # Too few waits to measure, far by the probe after it: ranked as wholly far.
    assert kept_attempt([run_(0.5), run_(None, ran_far=True)]) == 0
    assert kept_attempt([run_(None, ran_far=True), run_(0.5)]) == 1


def test_wait_near_needs_a_place_for_its_level(tmp_path):
    out = tmp_path / "t.json"
    r = run(out, profile="none", engine=NO_LOAD_ENGINE, extra=["--wait-near"])
    assert r.returncode == 2 and "--calibration-dir" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not out.exists()
    r = run(out, profile="none", engine=NO_LOAD_ENGINE,
            extra=["--wait-near", "--wait-near-max", "-1", "--calibration-dir", str(tmp_path)])
    assert r.returncode == 2 and "--wait-near-max" in r.stderr and not out.exists()


def test_rerun_far_loaded_needs_wait_near(tmp_path):
    """Without --wait-near no run is judged far, so the flag would do nothing: refused."""
    out = tmp_path / "t.json"
    r = run(out, profile="cpu-1", engine=NO_LOAD_ENGINE, extra=["--rerun-far-loaded"])
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "--rerun-far-loaded needs --wait-near" in r.stderr and not out.exists()

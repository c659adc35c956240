"""The real programs as loads: x264 and vips run on the lab's generated input and report
their throughput; stress-ng reports bogo-ops; a command's throughput is read with its
regular expression; `airlab load` prints every figure."""
import os
import subprocess
import time
import uuid

import pytest

from airbase import proctags
from airbase.stop_signals import STOP_SIGNALS
from loads import inputs
from loads.launcher import LoadSet
from loads.profiles import resolve_profile


def run_profile(name_or_path, seconds, tmp_path):
    with LoadSet(resolve_profile(name_or_path), workdir=tmp_path) as loads:
        loads.start()
        time.sleep(seconds)
        return loads.stop()


def test_generated_inputs_are_deterministic():
    a = inputs.y4m_video(60).read_bytes()
    assert a.startswith(b"YUV4MPEG2 W640 H360") and a.count(b"FRAME\n") == 60
    assert inputs.ppm_image(2600).read_bytes()[:15] == b"P6\n2600 2600\n25"


@pytest.mark.parametrize("name,unit", [("x264", "frames/s"), ("vips", "runs/s"),
                                       ("stress-ng-matrix", "bogo ops/s")])
def test_program_reports_throughput(tmp_path, name, unit):
    (rec,) = run_profile(name, 3.0, tmp_path)
    assert rec["available"], rec["reason"]
    assert rec["figures"]["unit"] == unit
    assert rec["figures"]["throughput"] > 0, rec


def test_command_throughput_regex(tmp_path):
    prof = tmp_path / "echo.yaml"
    prof.write_text("description: prints a rate\nprocesses:\n  - kind: command\n"
                    "    argv: [sh, -c, 'echo rate 10; echo rate 42.5; sleep 30']\n"
                    "    throughput_regex: 'rate ([0-9.]+)'\n    throughput_unit: widgets/s\n")
    (rec,) = run_profile(str(prof), 0.5, tmp_path / "w")
    assert rec["figures"] == {"throughput": 42.5, "unit": "widgets/s"}


def test_airlab_load_prints_figures(airlab_cmd):
    out = subprocess.run([airlab_cmd, "load", "onoff-ctp1000", "--duration", "1"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "work units/s" in out.stdout and "on 1" in out.stdout
    bad = subprocess.run([airlab_cmd, "load", "no-such-profile"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "no such profile" in bad.stderr
    for duration in ("0", "nan", "inf"):
        bad = subprocess.run([airlab_cmd, "load", "cpu-1", "--duration", duration],
                             capture_output=True, text=True, timeout=60)
        assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [
            f"airlab load: error: --duration must be a finite number of seconds > 0, got {duration}"]


@pytest.mark.parametrize("sig", STOP_SIGNALS, ids=lambda s: s.name)
def test_interrupted_airlab_load_still_prints_figures(airlab_cmd, sig):
    """Ctrl-C, a kill or a hang-up ends a try-out early: the loads are stopped (nothing
    that `airlab load` started runs on), their figures printed, and the exit status says
    it was interrupted."""
    tag = uuid.uuid4().hex  # everything this command starts inherits it
    p = subprocess.Popen([airlab_cmd, "load", "cpu-1", "--duration", "60"], env={**os.environ, "AIRLAB_TEST_RUN": tag},
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    p.send_signal(sig)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 130 and "interrupted" in err, (p.returncode, err)
    assert "work units/s" in out, out
    assert proctags.find("AIRLAB_TEST_RUN", tag) == []


@pytest.mark.parametrize("sig", STOP_SIGNALS, ids=lambda s: s.name)
def test_a_stopped_run_counts_its_progress(sig):
    """loads.repeat counts the units of the run it stopped (read from the program's stderr),
    so a trial shorter than one run does not report a starved load; whichever stop signal
    ends it, the program it repeats ends with it."""
    import json
    import sys
    tag = uuid.uuid4().hex
    p = subprocess.Popen([sys.executable, "-m", "loads.repeat", "--unit", "frames/s", "--units-per-run", "60",
                          "--partial-regex", r"\] (\d+)/\d+ frames", "--", "sh", "-c",
                          "echo '[5.0%] 3/60 frames' >&2; echo '[11.7%] 7/60 frames' >&2; exec sleep 30"],
                         stdout=subprocess.PIPE, text=True, env={**os.environ, "AIRLAB_TEST_RUN": tag})
    time.sleep(1.0)
    p.send_signal(sig)
    out, _ = p.communicate(timeout=10)
    fig = json.loads(out.strip().splitlines()[-1])
    assert fig["runs"] == 0 and fig["partial_units"] == 7
    assert fig["throughput"] == pytest.approx(7 / fig["wall_s"])
    assert proctags.find("AIRLAB_TEST_RUN", tag) == []


@pytest.mark.parametrize("name", ["x264", "vips"])
def test_short_of_one_run_still_reports_progress(tmp_path, name):
    # About one run long on an idle machine (60 frames, one sharpen), so on a busy one the
    # stop usually interrupts the first run; either way progress must be reported.
    (rec,) = run_profile(name, 1.5, tmp_path)
    fig = rec["figures"]
    assert fig["throughput"] > 0 and (fig["runs"] > 0 or fig["partial_units"] > 0), rec


def test_airlab_load_of_a_profile_this_machine_cannot_run(airlab_cmd, tmp_path):
    """Exit 3, as `airlab trial` for "unavailable here": nothing available, nothing runs;
    partly available, the rest runs and prints its figures, the missing load is named, and
    the status is still 3 because a trial could not use the profile."""
    help_text = subprocess.run([airlab_cmd, "load", "--help"], capture_output=True, text=True, timeout=60).stdout
    assert "3    this machine cannot run the profile" in help_text
    ghost = "  - kind: command\n    name: ghost\n    argv: [no-such-program-anywhere]\n"
    none = tmp_path / "none-here.yaml"
    none.write_text("description: nothing runs here\nprocesses:\n" + ghost)
    t0 = time.monotonic()
    out = subprocess.run([airlab_cmd, "load", str(none), "--duration", "30", "--json", str(tmp_path / "n.json")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 3, (out.stdout, out.stderr)
    assert time.monotonic() - t0 < 20, "nothing to run: it must not wait out --duration"
    assert "unavailable: processes[0] (ghost): command 'no-such-program-anywhere' not found" in out.stderr
    import json
    (rec,) = json.loads((tmp_path / "n.json").read_text())["loads"]
    assert rec["name"] == "ghost" and not rec["available"] and "not found" in rec["reason"]
    part = tmp_path / "part-here.yaml"
    part.write_text("description: half runs here\nprocesses:\n"
                    "  - kind: command\n    name: sleeper\n    argv: [sleep, '30']\n" + ghost)
    out = subprocess.run([airlab_cmd, "load", str(part), "--duration", "0.5"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 3, (out.stdout, out.stderr)
    lines = {line.split()[0]: line for line in out.stdout.splitlines()}
    assert "0.5" in lines["sleeper"] and "not started" not in lines["sleeper"], out.stdout
    assert "not started" in lines["ghost"] and "not found" in lines["ghost"], out.stdout
    assert "1 of 2 load(s) cannot run here (ghost)" in out.stderr


def test_missing_profile_message(airlab_cmd):
    """A path gets "no such profile file" and nothing else; a name gets the shipped
    profiles, on the same single line."""
    for path in ("configs/profiles/no-such.yaml", "elsewhere/no-such", "no-such.yml"):
        out = subprocess.run([airlab_cmd, "load", path], capture_output=True, text=True, timeout=60)
        assert out.returncode == 2 and out.stderr.strip().splitlines() == [
            f"airlab load: error: {path}: no such profile file"], out.stderr
    out = subprocess.run([airlab_cmd, "load", "cpu-9"], capture_output=True, text=True, timeout=60)
    (line,) = out.stderr.strip().splitlines()
    assert out.returncode == 2 and line.startswith("airlab load: error: no such profile 'cpu-9'")
    assert "cpu-1, cpu-2" in line and "onoff-ctp1000" in line

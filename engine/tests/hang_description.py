"""What a driver prints when a run does not finish (airpdes_harness.describe_stuck_process):
a hang seen once on CI is only diagnosable from this text, so it is checked on a real run
that is still going: one line per thread with its state, kernel wait channel and the CPU
ticks it gained in 0.5 s (a busy engine's workers gain some), then every thread's stack
when gdb is installed (make setup installs it), a line saying there are none when not, and
gdb's own reason when the machine refuses the attach (a container without ptrace).
The run is killed afterwards and must be gone."""
import os
import shutil
import subprocess
import tempfile
import time

from airpdes_harness import AIRPDES, check, describe_stuck_process, finish

# Long enough to be still running after both descriptions (gdb attaches in ~1 s).
argv = [AIRPDES, "--mode", "fm", "--threads", 2, "--pes", 2, "--lps-per-pe", 1000, "--remote", 0.2,
        "--end-time", 1e9, "--quiet"]
p = subprocess.Popen([str(a) for a in argv], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    time.sleep(0.5)  # past start-up: the workers are simulating
    tasks = len(os.listdir(f"/proc/{p.pid}/task"))
    text = describe_stuck_process(p.pid)
    lines = text.splitlines()
    per_thread = [ln for ln in lines if ln.startswith("  thread ") and "wchan" in ln]
    check(len(per_thread) == tasks, f"{len(per_thread)} thread lines for {tasks} threads:\n{text}")
    ticks = [int(ln.split(", +")[1].split()[0]) for ln in per_thread]
    check(max(ticks, default=0) > 0, f"no thread of a running engine gained CPU ticks in 0.5 s:\n{text}")
    refused = [ln for ln in lines if "(gdb could not attach" in ln]
    if shutil.which("gdb") and refused:
        print(f"note: gdb is installed but this machine refused the attach, {refused[0].strip()}: "
              "only that line is checked")
    elif shutil.which("gdb"):
        stacks = [ln for ln in lines if ln.lstrip().startswith("#")]
        check(sum(ln.lstrip().startswith("Thread") for ln in lines) == tasks and stacks,
              f"gdb is installed but the description has no stack of each of the {tasks} threads:\n{text}")
        check(any("air_" in ln for ln in stacks), f"no engine function in the stacks:\n{text}")
    else:
        print("note: no gdb here: only the no-gdb branch is checked (make setup installs gdb)")

    # Without gdb on PATH the description says so instead of failing.
    path = os.environ["PATH"]
    with tempfile.TemporaryDirectory() as empty:
        os.environ["PATH"] = empty
        try:
            text = describe_stuck_process(p.pid)
        finally:
            os.environ["PATH"] = path
    check("(no gdb here: no stacks)" in text and "#0" not in text,
          f"without gdb on PATH the description should say so:\n{text}")

    # A gdb the machine refuses (ptrace restricted): its reason is in the description.
    with tempfile.TemporaryDirectory() as fake:
        with open(os.path.join(fake, "gdb"), "w") as f:
            f.write("#!/bin/sh\necho 'ptrace: Operation not permitted.' >&2\nexit 1\n")
        os.chmod(os.path.join(fake, "gdb"), 0o755)
        os.environ["PATH"] = fake + os.pathsep + path
        try:
            text = describe_stuck_process(p.pid)
        finally:
            os.environ["PATH"] = path
    check("(gdb could not attach: ptrace: Operation not permitted.)" in text,
          f"a refused attach should be described with gdb's reason:\n{text}")
    check(p.poll() is None, "the engine run ended during the descriptions (gdb detached badly?)")
finally:
    p.kill()
    p.wait()
check(not os.path.exists(f"/proc/{p.pid}"), f"the engine run {p.pid} outlived the test")
if check(p.returncode == -9, f"the engine run ended with {p.returncode}, not killed (-9)"):
    print("ok   a run that does not finish is described: each thread's state, wait channel, CPU ticks"
          + (", stacks" if shutil.which("gdb") else "") + "; without gdb, or refused by it, a line says so")
finish()

"""Shared by the PCS and conservative-synchronisation tests: run airpdes, read its JSON,
compare runs, and start a real CPU-bound competitor."""
import contextlib
import json
import os
import subprocess
import sys
import tempfile

AIRPDES = sys.argv[1] if len(sys.argv) > 1 else "engine/build/airpdes"
RUN_TIMEOUT_S = 30
failures = []


def run(*args, expect_rc=0):
    """Run airpdes with args (strings) plus --json; return (parsed JSON or None, stderr)."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out.json")
        argv = [AIRPDES, *map(str, args), "--quiet", "--json", out]
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            fail(f"{' '.join(argv[1:])}: did not finish in {RUN_TIMEOUT_S} s (hang?)")
            return None, ""
        if p.returncode != expect_rc:
            fail(f"{' '.join(argv[1:])}: exit {p.returncode}, wanted {expect_rc}; stderr: {p.stderr.strip()}")
            return None, p.stderr
        if expect_rc != 0:
            if os.listdir(d):
                fail(f"{' '.join(argv[1:])}: failed run left files behind: {os.listdir(d)}")
            return None, p.stderr
        with open(out) as f:
            return json.load(f), p.stderr


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg, flush=True)


def check(cond, msg):
    if not cond:
        fail(msg)
    return cond


def outcome(j):
    """What the determinism contract fixes: committed events, checksum, model figures."""
    return (j["committed_events"], j["checksum"], json.dumps(j["model"], sort_keys=True))


def assert_same(ref, j, label):
    if ref is None or j is None:
        return
    if check(outcome(ref) == outcome(j), f"{label}: result differs from seq: "
             f"{outcome(j)[:2]} vs {outcome(ref)[:2]}"):
        print(f"ok   {label}: {j['committed_events']} committed, {j['rollbacks']} rollbacks, checksum {j['checksum']}", flush=True)


def assert_no_rollback(j, label):
    if j is None:
        return
    check(j["rollbacks"] == 0 and j["rolled_back_events"] == 0,
          f"{label}: conservative run rolled back ({j['rollbacks']} rollbacks)")
    check(j["processed_events"] == j["committed_events"],
          f"{label}: processed {j['processed_events']} != committed {j['committed_events']}")


@contextlib.contextmanager
def cpu_competitor():
    """One real CPU-bound process (a busy loop) competing for the cores during the block."""
    p = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield p
    finally:
        p.kill()
        p.wait()


def finish():
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print("all passed")

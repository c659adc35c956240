"""Record a trial whose runner died without writing its own record (a crash, a kill from
outside), so the experiment's table, figure and report still get built and show the failure.

    AIRLAB_RUNNER_STATUS=$? python -m workflows.failed_trial --out T.json --log T.log \
        --profile P --setup S --rep N -- ENGINE OPTIONS

The reason is the runner's last 'failed' line in the log, else the log's last line.
An interrupted runner (Ctrl-C, SIGTERM or a hang-up: exit 130, or 143 / 129 when the signal
came before its handler) is not a failure of the experiment: nothing is recorded and this
exits with the runner's status, so Snakemake keeps the trial incomplete and the next run
reruns it."""
import argparse
import os
import sys
from pathlib import Path

from workflows.trial import write_failure


def reason_from_log(log):
    try:
        lines = [ln.strip() for ln in Path(log).read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "the trial runner exited with an error and left no log"
    failed = [ln for ln in lines if "failed" in ln.lower() and ln.startswith("airlab")]
    last = (failed or lines or ["(empty log)"])[-1]
    return f"the trial runner exited with an error: {last[:300]}"


INTERRUPTED = (130, 143, 129)  # the runner's exit on a stop signal; a shell's 128 + SIGTERM, + SIGHUP


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--profile", required=True)
    ap.add_argument("--setup", required=True)
    ap.add_argument("--rep", type=int, required=True)
    ap.add_argument("--label", action="append", default=[])
    ap.add_argument("--runner-status", type=int, default=int(os.environ.get("AIRLAB_RUNNER_STATUS") or 1),
                    help="the runner's exit status [$AIRLAB_RUNNER_STATUS, else 1]")
    ap.add_argument("engine", nargs="*")
    a = ap.parse_args(argv)
    if Path(a.out).exists():  # the runner did write its record: nothing to add
        return 0
    if a.runner_status in INTERRUPTED:
        print(f"airlab: trial {a.out} was interrupted (runner exit {a.runner_status}): "
              "no record written; the next run reruns it", file=sys.stderr)
        return a.runner_status
    labels = dict(item.split("=", 1) for item in a.label)
    write_failure(a.out, a.profile, a.setup, a.engine, a.rep, reason_from_log(a.log), labels)
    print(f"airlab: recorded failed trial {a.out}: see {a.log}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

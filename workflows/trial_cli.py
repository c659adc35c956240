"""`airlab trial`: run one trial by hand (the workflow runs the same code for every trial)."""
import argparse
import faulthandler
import signal
import sys

from airbase.errors import UsageError
from workflows.placement import WAIT_MAX_S

HELP = """\
Run one trial: the engine (engine/build/airpdes) with the ENGINE OPTIONS after `--`,
next to the loads of --profile, under the scheduling --setup, measured (engine JSON,
timeline, perf counters, each load's own figures) and written atomically to --out.

examples:
  airlab trial --profile cpu-1 --setup cfs --out results/try/fm.json -- \\
      --mode fm --threads 2 --lps-per-pe 1000 --remote 0.4 --end-time 5000
  airlab trial --profile onoff-ctp1000 --setup cpuset --out t.json -- --mode ladm --threads 2
  airlab trial --profile cpu-1 --load-count cores+1 --out t.json -- --mode fm --threads 2

setups (configs/setups/, `airlab doctor` says which this machine can apply): cfs, cpuset,
quota-half, weight-4to1, idle, nice, gang. A gang trial starts a private SLURM (munged,
slurmctld, slurmd) and stops it afterwards; SLURM switches jobs every time slice (5 s at
least), so give it an engine run of several slices (the runner warns when it was shorter).
Progress goes to stderr; the engine options --json, --timeline, --check and --describe belong
to the runner and are refused. The record's `noise` object says how much CPU other work on the
machine used during the run; above --noise-threshold the trial is `disturbed` and a
warning line says so (--reruns runs it again).

exit status (on every non-zero one the engine, every load, the lab's cgroups, SLURM jobs
and daemons are gone and no result file is written):
  0    the result was written (or, with --record-failure / --allow-unavailable, a record
       with status "failed" / "unavailable" and its reasons)
  1    the engine failed (its last stderr lines are printed), or --out could not be written
  2    bad input: unknown profile or setup, engine options airpdes refuses, unwritable --out
  3    this machine cannot run it: a setup or load kind it lacks, or a setup it cannot
       apply (the reason is printed; `airlab doctor` lists what the machine supports)
  124  the engine did not finish within --timeout
  130  interrupted by SIGINT, SIGTERM or SIGHUP
"""


def register(sub):
    p = sub.add_parser("trial", help="run one trial (engine + loads + setup) into a JSON file",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--profile", required=True, help="interference profile name or YAML file")
    p.add_argument("--load-count", metavar="N", default=None,
                   help="run the profile's one process N times (an integer >= 1, or relative to "
                        "this machine's cores: cores, cores-1, cores+1, cores/2, 2*cores); recorded "
                        "as profile NAME-xN with its N processes [the profile's own count]")
    p.add_argument("--setup", default="cfs", help="scheduling setup name or YAML file [cfs]")
    p.add_argument("--out", required=True, help="result JSON file (written atomically)")
    p.add_argument("--rep", type=int, default=0, help="repetition number, recorded [0]")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds before the engine is stopped [600]")
    p.add_argument("--label", action="append", default=[], metavar="KEY=VALUE",
                   help="metadata recorded in trial.labels (repeatable)")
    p.add_argument("--allow-unavailable", action="store_true",
                   help="write a status 'unavailable' record instead of failing when the machine lacks something")
    p.add_argument("--record-failure", action="store_true",
                   help="on an engine error or timeout write a status 'failed' record (exit 0) "
                        "so a workflow reports it and goes on; interrupts still write nothing")
    p.add_argument("--target-s", type=float, default=None, metavar="S",
                   help="run the engine to the end time at which this configuration's no-load FM run "
                        "lasts about S seconds here (calibrated once by pilot runs, cached in "
                        "--calibration-dir); leave --end-time out of the engine options")
    p.add_argument("--calibration-dir", default=None, metavar="DIR",
                   help="where calibrated end times are cached (the workflow: results/<scale>/calibration)")
    p.add_argument("--reruns", type=int, default=0, metavar="N",
                   help="run a disturbed trial (other work used the CPUs) again up to N times; the "
                        "first undisturbed run is kept, or when the re-runs run out the nearest "
                        "undisturbed one (else the last), and says how many re-runs it took [0]")
    p.add_argument("--wait-near", action="store_true",
                   help="start the run when the host runs this machine's CPUs near each other (a "
                        "cache-line ping-pong probe within 3x of the lowest seen, kept in "
                        "--calibration-dir; at most --wait-near-max), and run a no-load trial that "
                        "ended far apart again within --reruns: on a VM that moves its vCPUs apart "
                        "for seconds at a time a no-load run then takes up to 1.5x as long")
    p.add_argument("--rerun-far-loaded", action="store_true",
                   help="with --wait-near (an error without it: a run is judged far against the "
                        "near level that waiting measures), run a loaded trial that ran far apart "
                        "again too (within --reruns), as a no-load one is; the workflow asks for it "
                        "where an experiment says rerun_far_loaded")
    p.add_argument("--wait-near-max", type=float, default=WAIT_MAX_S, metavar="S",
                   help="with --wait-near, wait at most S seconds for near, then run anyway (the "
                        "record says so) [%(default)g]")
    p.add_argument("--pause-workflow", type=int, default=None, metavar="PID",
                   help="stop the workflow process PID (an ancestor of this runner: the workflow "
                        "passes Snakemake's own) from just before the machine probe and the engine "
                        "start until the engine has ended, and around each calibration pilot, so its "
                        "job scheduling takes no CPU from the run; a guard continues it if the "
                        "runner dies")
    p.add_argument("--noise-threshold", type=float, default=0.05, metavar="SHARE",
                   help="a trial is disturbed when other work used more than SHARE of one core "
                        "during the engine's run [0.05]")
    p.add_argument("engine_options", nargs=argparse.REMAINDER, help="-- then the airpdes options")
    p.set_defaults(func=trial_cmd)


def trial_cmd(args):
    from workflows.trial import (TrialError, TrialInterrupted, TrialTimeout, TrialUnavailable,
                                 UsageProblem, run_trial, write_failure)
    # SIGUSR1 prints every thread's stack to stderr and the runner goes on: how a test (or a
    # user) sees where a runner that ignored its interrupt is stuck (tests/trial_helpers.py).
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    opts = args.engine_options
    if opts and opts[0] == "--":
        opts = opts[1:]
    if not opts:
        raise UsageError("give the engine options after --, e.g. -- --mode fm --threads 2")
    if args.timeout <= 0 or args.rep < 0:
        raise UsageError("--timeout must be > 0 and --rep >= 0")
    if args.reruns < 0 or not 0 < args.noise_threshold <= 64:
        raise UsageError("--reruns must be >= 0 and --noise-threshold > 0")
    if args.wait_near_max < 0:
        raise UsageError("--wait-near-max must be >= 0")
    if args.rerun_far_loaded and not args.wait_near:
        raise UsageError("--rerun-far-loaded needs --wait-near: a run is judged far against the near "
                         "level that waiting measures")
    if args.target_s is not None and args.target_s <= 0:
        raise UsageError("--target-s must be > 0")
    from workflows import workflow_pause
    workflow_pause.configure(args.pause_workflow)  # an error unless PID is above this runner
    load_count = None
    if args.load_count is not None:
        from loads.profiles import derived_name, parse_load_count
        try:
            load_count = parse_load_count(args.load_count)
        except ValueError as e:
            raise UsageError(f"--load-count: {e}")
    labels = {}
    for item in args.label:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--label {item!r}: use KEY=VALUE")
        labels[key] = value
    try:
        run_trial(args.profile, args.setup, args.out, opts, rep=args.rep, timeout=args.timeout,
                  labels=labels, allow_unavailable=args.allow_unavailable, load_count=load_count,
                  target_s=args.target_s, calibration_dir=args.calibration_dir, reruns=args.reruns,
                  noise_threshold=args.noise_threshold, wait_near=args.wait_near_max if args.wait_near else None,
                  rerun_far_loaded=args.rerun_far_loaded)
    except UsageProblem as e:
        raise UsageError(str(e))
    except TrialUnavailable as e:
        print(f"airlab trial: unavailable on this machine: {e}", file=sys.stderr)
        return 3
    except TrialInterrupted as e:
        print(f"airlab trial: {e}", file=sys.stderr)
        return 130
    except TrialError as e:
        print(f"airlab trial: failed: {e}", file=sys.stderr)
        if args.record_failure:
            try:
                profile = args.profile if load_count is None else derived_name(args.profile, load_count)
                write_failure(args.out, profile, args.setup, opts, args.rep, str(e), labels)
            except TrialError as w:  # e.g. the failure was that --out cannot be written
                print(f"airlab trial: failed: {w}", file=sys.stderr)
                return 1
            print(f"airlab trial: recorded the failure in {args.out}", file=sys.stderr)
            return 0
        return 124 if isinstance(e, TrialTimeout) else 1
    return 0

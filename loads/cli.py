"""`airlab profiles` and `airlab load`: list, check and try interference profiles (and
`airlab parsec prepare`, loads/parsec_prepare.py)."""
import math
import signal
import sys
import tempfile
import time

from airbase.atomic import write_json
from airbase.errors import UsageError
from airbase.stop_signals import STOP_SIGNALS
from loads.launcher import LoadSet, load_problems
from loads.profiles import ProfileError, list_profiles, load_file, resolve_profile

PROFILES_HELP = """\
Interference profiles are YAML files in configs/profiles/ (guide: docs/profiles.md).

  airlab profiles                 list every profile and whether it can run on this machine
                                  (for PARSEC profiles: real PARSEC here, or which stand-in)
  airlab profiles check FILE...   validate profile files; prints every problem, exit 2 if any
  airlab profiles schema          print the profile JSON schema: the common fields
                                  (configs/schemas/profile.schema.json) and every load kind's

exit status:
  0    every profile listed (or checked) is valid; a valid profile may still be unavailable
       on this machine (the listing says why)
  2    one or more is invalid: each is still listed, marked INVALID, with its errors
"""

LOAD_HELP = """\
Run a profile's loads alone for a while and print each load's own figures, to try a new
profile before an experiment uses it. Offsets (start_s, stop_s) count from the start.

example: airlab load onoff-ctp1000 --duration 3
         airlab load configs/profiles/my-profile.yaml --duration 5 --json out.json

exit status:
  0    every load of the profile can run here and did its work
  1    a load's program failed (a PARSEC run that exited with an error or crashed, a load
       that died on its own): it has no throughput, and its reason and last stderr line
       are printed; a failed run is never counted as a run
  2    bad input: no such profile, an invalid profile, a bad --duration
  3    this machine cannot run the profile, as in `airlab trial`: a load it lacks (a program,
       PARSEC without a stand-in, a CPU). Nothing available: nothing runs. Partly
       available: the loads that can run do, and every one that cannot is named; still 3,
       because a trial with this profile would be unavailable here
  130  interrupted by SIGINT, SIGTERM or SIGHUP (the loads are stopped, their figures printed)
"""


def register(sub):
    p = sub.add_parser("profiles", help="list or check interference profiles",
                       description=PROFILES_HELP, formatter_class=_Raw)
    p.add_argument("action", nargs="?", choices=["list", "check", "schema"], default="list")
    p.add_argument("files", nargs="*", help="profile files (check)")
    p.set_defaults(func=profiles_cmd)

    p = sub.add_parser("load", help="run a profile's loads alone and print their figures",
                       description=LOAD_HELP, formatter_class=_Raw)
    p.add_argument("profile", help="profile name (configs/profiles/NAME.yaml) or a YAML path")
    p.add_argument("--duration", type=float, default=3.0, help="seconds to run [3]")
    p.add_argument("--json", metavar="FILE", help="also write the load records as JSON to FILE")
    p.set_defaults(func=load_cmd)

    from loads import parsec_prepare
    parsec_prepare.register(sub, UsageError, _Raw)


# As in `airlab trial`: the machine cannot run it (a missing program, PARSEC, a CPU).
UNAVAILABLE = 3
LOAD_FAILED = 1  # a load's program failed: no throughput to show


class _Raw(__import__("argparse").RawDescriptionHelpFormatter):
    pass


def profiles_cmd(args):
    if args.action == "schema":
        import json
        from loads.kinds import profile_schema
        print(json.dumps(profile_schema(), indent=2))
        return 0
    if args.action == "check":
        if not args.files:
            raise UsageError("give the profile files to check")
        bad = 0
        for path in args.files:
            try:
                load_file(path)
                print(f"ok   {path}")
            except ProfileError as e:
                bad += 1
                for line in e.errors:
                    print(f"FAIL {line}")
        return 2 if bad else 0
    if args.files:
        raise UsageError("'airlab profiles list' takes no files (did you mean 'check'?)")
    names = list_profiles()
    width = max(map(len, names), default=10)
    pad = f"{'':<{width}}  {'':<11}  "
    invalid = []
    for name in names:
        try:
            r = resolve_profile(name)
        except ProfileError as e:
            invalid.append(name)
            errors = [_without_file(err, name) for err in e.errors]
            print(f"{name:<{width}}  {'INVALID':<11}  {errors[0]}")
            for err in errors[1:]:
                print(f"{pad}{err}")
            continue
        state = "available" if r["available"] else "unavailable"
        tag = " [stand-in]" if r["stand_in"] else ""
        print(f"{name:<{width}}  {state:<11}  {_short(r['description'])}{tag}")
        for reason in r["reasons"]:
            print(f"{pad}why: {reason}")
        # Which program a PARSEC profile really runs depends on this machine, not on its text.
        if any(p["kind"] == "parsec" or p["stand_in"] for p in r["processes"]):
            for runs in dict.fromkeys(p["runs"] for p in r["processes"]):
                print(f"{pad}runs: {runs}")
        replaced = sorted({p["replaces_unavailable"] for p in r["processes"] if p.get("replaces_unavailable")})
        for reason in replaced:
            print(f"{pad}stand-in because: {reason}")
    if invalid:
        print(f"airlab profiles: {len(invalid)} invalid profile(s): {', '.join(invalid)}", file=sys.stderr)
    return 2 if invalid else 0


def _short(text, width=90):
    """The description on one listing line, cut at a word."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width].rsplit(" ", 1)[0] + " ..."


def _without_file(error, name):
    """'configs/profiles/NAME.yaml: field: problem' -> 'field: problem' (the name is shown)."""
    head, sep, rest = error.partition(": ")
    return rest if sep and head.endswith(f"{name}.yaml") else error


def load_cmd(args):
    if not (math.isfinite(args.duration) and args.duration > 0):  # time.sleep takes no nan, inf
        raise UsageError(f"--duration must be a finite number of seconds > 0, got {args.duration:g}")
    try:
        profile = resolve_profile(args.profile)
    except ProfileError as e:
        raise UsageError(e.errors[0] + (f" (and {len(e.errors) - 1} more)" if len(e.errors) > 1 else ""))
    missing = [p["name"] for p in profile["processes"] if not p["available"]]
    for reason in profile["reasons"]:
        print(f"unavailable: {reason}", file=sys.stderr)
    if missing and len(missing) == len(profile["processes"]):
        print(f"airlab load: {profile['name']}: none of its loads can run on this machine", file=sys.stderr)
        if args.json:  # the records still say, load by load, why not
            _write_json(args.json, {"profile": profile, "loads": LoadSet(profile).stop()})
        return UNAVAILABLE
    # SIGTERM and a hang-up end the run like Ctrl-C: the launcher stops every load before we exit.
    for s in set(STOP_SIGNALS) - {signal.SIGINT}:  # SIGINT is KeyboardInterrupt already
        signal.signal(s, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    interrupted = False
    with tempfile.TemporaryDirectory(prefix="airlab-load-") as work:
        with LoadSet(profile, workdir=work) as loads:
            loads.start()
            running = len(profile["processes"]) - len(missing)
            print(f"airlab load: {profile['name']}: {running} process(es) for {args.duration:g} s"
                  + (f" ({len(missing)} more cannot run here)" if missing else ""), file=sys.stderr)
            try:
                time.sleep(args.duration)
            except KeyboardInterrupt:  # ended early: still show what the loads did so far
                interrupted = True
                print("airlab load: interrupted, stopping the loads", file=sys.stderr)
            records = loads.stop()
    for r in records:
        f = r["figures"]
        thr = f"{f['throughput']:.6g} {f['unit']}" if f.get("throughput") is not None else "no figure"
        times = (f"{r['start_s']:.2f}-{r['stop_s']:.2f} s" if r["start_s"] is not None else "not started")
        extra = ""
        if r["kind"] == "onoff" and "mean_on_us" in f:
            extra = f", on {f['mean_on_us']:.1f} us / off {f['mean_off_us']:.1f} us, busy {f['busy_share']:.0%}"
        stand = f" [stand-in for {r['stand_in_for']}]" if r["stand_in"] else ""
        if r.get("parsec"):  # which input and build really ran (chosen here when not named)
            stand += f" [PARSEC {r['parsec']['benchmark']} -i {r['parsec']['input']}, {r['parsec']['build_config']}]"
        if f.get("mean_run_s"):  # a repeated program (PARSEC, x264, vips): is the input right-sized?
            extra += f", {f['runs']} run(s) of {f['mean_run_s']:.3g} s"
        if r["cpu_s"] is not None and r["start_s"] is not None:
            extra += f", {r['cpu_s']:.2f} CPU s"
        why = f" ({r['reason']})" if r["reason"] else ""
        if f.get("error"):
            why += f" ({f['error']})"
        # 0, or killed by the SIGTERM that stopped it, is a normal end; anything else is shown.
        if r["exit_code"] not in (None, 0, -signal.SIGTERM, 128 + signal.SIGTERM) and not f.get("error"):
            why += f" (exit code {r['exit_code']}{': ' + r['stderr_tail'].splitlines()[-1] if r.get('stderr_tail') else ''})"
        print(f"{r['name']:<24} {r['kind']:<9} {times:<14} {thr}{extra}{stand}{why}")
    if args.json:
        _write_json(args.json, {"profile": profile, "loads": records})
    problems = load_problems(records)
    for problem in problems:
        print(f"airlab load: failed: {problem}", file=sys.stderr)
    if interrupted:
        return 130
    if missing:  # ran what it could, but the profile as a whole cannot be used here
        print(f"airlab load: {profile['name']}: {len(missing)} of {len(records)} load(s) cannot run here "
              f"({', '.join(missing)}), so a trial with this profile would be unavailable", file=sys.stderr)
        return UNAVAILABLE
    return LOAD_FAILED if problems else 0


def _write_json(path, data):
    write_json(path, data)

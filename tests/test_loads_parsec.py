"""PARSEC the way researchers run it, on a small PARSEC tree whose benchmarks are real
programs (tests/parsec_tree.py): the binary, input and command line are resolved from
PARSEC's own files (pkgconf, runconf, the inst/<plat>.<config> build); the load runs the
benchmark itself, each process in its own run folder outside the tree, and reports the
program's runs/s and CPU seconds; a failed run is never a run; availability names what the
tree has; `airlab parsec prepare` builds and reports."""
import json
import os
import subprocess
import tarfile
import time
from pathlib import Path

import pytest

from loads import parsec
from loads.launcher import LoadSet, load_problem
from loads.profiles import ProfileError, load_file, resolve_profile
from parsec_tree import make_tree, tree_state
from trial_helpers import AIRLAB


@pytest.fixture(autouse=True)
def lab_cache(tmp_path, monkeypatch):
    """The lab's input cache in this test's folder, and no PARSEC from the environment."""
    monkeypatch.setattr(parsec, "CACHE", tmp_path / "cache")
    monkeypatch.delenv("PARSEC_HOME", raising=False)
    parsec.runconf.cache_clear()


def profile(tmp_path, home, bench="canneal", **fields):
    text = f"description: real {bench}\nprocesses:\n  - kind: parsec\n    benchmark: {bench}\n" \
           f"    parsec_home: {home}\n" + "".join(f"    {k}: {v}\n" for k, v in fields.items())
    path = tmp_path / f"p-{bench}-{len(list(tmp_path.glob('p-*')))}.yaml"
    path.write_text(text)
    return str(path)


def run_loads(prof, seconds, workdir):
    with LoadSet(resolve_profile(prof), workdir=workdir) as loads:
        loads.start()
        time.sleep(seconds)
        return loads.stop()


def test_binary_input_and_arguments_come_from_parsec_files(tmp_path):
    home = make_tree(tmp_path, exports="export IM_CONCURRENCY=${NTHREADS}\n")
    res = parsec.resolve({"benchmark": "canneal", "parsec_home": str(home)}, threads=3)
    pkg = home / "pkgs" / "kernels" / "canneal"  # group from config/packages/parsec.canneal.pkgconf
    assert res["binary"] == str(pkg / "inst" / "amd64-linux.gcc-pthreads" / "bin" / "canneal")
    # simsmall and simlarge have runconfs but no input archive here: simdev is the largest input.
    assert res["input"] == "simdev" and res["build_config"] == "gcc-pthreads"
    assert res["args"] == ["3", "in_simdev.txt", "out.txt"]  # run_args with ${NTHREADS} = 3
    assert res["input_archive"] == str(pkg / "inputs" / "input_simdev.tar")
    assert res["env"]["IM_CONCURRENCY"] == "3"  # what the runconf exports (vips's thread count)
    assert res["env"]["LD_LIBRARY_PATH"].startswith("/usr/lib:/usr/lib64")  # CC_HOME of the bldconf
    named = parsec.resolve({"benchmark": "blackscholes", "parsec_home": str(home), "input": "test"}, threads=1)
    assert named["input"] == "test" and named["args"] == ["1", "in_test.txt", "out.txt"]
    assert named["binary"].endswith("pkgs/apps/blackscholes/inst/amd64-linux.gcc-pthreads/bin/blackscholes")


def test_availability_names_what_the_tree_has(tmp_path):
    home = make_tree(tmp_path, built=("blackscholes",))
    cases = {
        ("canneal", "simlarge", None): "PARSEC canneal: input simlarge is not in",
        ("blackscholes", None, "gcc"): "PARSEC blackscholes is not built with gcc for amd64-linux "
                                       "(builds here: gcc-pthreads; build with: parsecmgmt -a build -p blackscholes -c gcc)",
        ("canneal", None, None): "PARSEC canneal is not built with gcc-pthreads for amd64-linux (builds here: none; "
                                 "build with: parsecmgmt -a build -p canneal -c gcc-pthreads)",
        ("x264", None, None): "has no benchmark x264 (benchmarks here: blackscholes, canneal)",
    }
    for (bench, inp, config), says in cases.items():
        spec = {"kind": "parsec", "benchmark": bench, "parsec_home": str(home)}
        spec.update({k: v for k, v in (("input", inp), ("build_config", config)) if v})
        ok, why = parsec.availability(spec)
        assert not ok and says in why, why
    ok, why = parsec.availability({"benchmark": "canneal", "parsec_home": str(home), "input": "simlarge"})
    assert "(inputs here: test, simdev;" in why
    empty = tmp_path / "empty"
    empty.mkdir()
    ok, why = parsec.availability({"benchmark": "canneal", "parsec_home": str(empty)})
    assert not ok and "is not a PARSEC tree" in why
    ok, why = parsec.availability({"benchmark": "canneal"})
    assert not ok and why == parsec.HELP


def test_profiles_check_rejects_unknown_benchmarks_and_inputs(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("description: typos\nprocesses:\n  - kind: parsec\n    benchmark: nosuchbench\n"
                   "    input: simhuge\n")
    with pytest.raises(ProfileError) as e:
        load_file(bad)
    text = "\n".join(e.value.errors)
    assert "processes[0].benchmark: 'nosuchbench' is not one of blackscholes" in text
    assert "processes[0].input: 'simhuge' is not one of test, simdev" in text
    other = tmp_path / "other.yaml"
    other.write_text("description: a field of parsec\nprocesses:\n  - kind: cpu\n    build_config: gcc\n")
    with pytest.raises(ProfileError) as e:
        load_file(other)
    assert "processes[0]: build_config does not apply to kind cpu (only to parsec)" in "\n".join(e.value.errors)
    good = tmp_path / "good.yaml"
    good.write_text("description: ok\nprocesses:\n  - kind: parsec\n    benchmark: splash2x.fft\n"
                    "    input: native\n    build_config: gcc-serial\n")
    load_file(good)
    r = subprocess.run([AIRLAB, "profiles", "check", str(bad)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "nosuchbench" in r.stdout and "simhuge" in r.stdout


def test_the_load_runs_the_benchmark_itself_in_its_own_run_folder(tmp_path):
    """Two copies side by side: each runs the binary (not parsecmgmt) in a run folder of its
    own outside the tree, counts the program's runs and CPU time, records the input and
    build chosen; the PARSEC tree is not touched."""
    home = make_tree(tmp_path)
    before = tree_state(home)
    prof = profile(tmp_path, home, threads=2, count=2)
    r = resolve_profile(prof)
    assert r["available"] and not r["stand_in"]
    assert [p["input"] for p in r["processes"]] == ["simdev", "simdev"]  # chosen, recorded
    assert r["processes"][0]["runs"] == f"real PARSEC (parsec_home={home}): canneal -i simdev -n 2, gcc-pthreads build"
    records = run_loads(prof, 1.5, tmp_path / "work")
    binary = str(home / "pkgs/kernels/canneal/inst/amd64-linux.gcc-pthreads/bin/canneal")
    for rec in records:
        fig = rec["figures"]
        assert load_problem(rec) is None, rec
        assert fig["unit"] == "runs/s" and fig["runs"] >= 1 and fig["throughput"] > 0
        assert fig["program_exit_code"] == 0 and fig["failed_runs"] == 0 and fig["program_cpu_s"] > 0
        assert rec["argv"][rec["argv"].index("--") + 1:] == [binary, "2", "in_simdev.txt", "out.txt"]
        assert "parsecmgmt" not in " ".join(rec["argv"])
        assert rec["parsec"]["input"] == "simdev" and rec["parsec"]["build_config"] == "gcc-pthreads"
    runs = [tmp_path / "work" / d / "run" for d in ("00-parsec.0", "01-parsec.1")]
    for run in runs:  # the program's own output, with the thread count it was given
        assert (run / "out.txt").read_text() == "threads 2 units 200000\n"
        assert (run / "in_simdev.txt").is_symlink() and (run / "data").is_dir() and not (run / "data").is_symlink()
    assert os.path.realpath(runs[0] / "in_simdev.txt") == os.path.realpath(runs[1] / "in_simdev.txt")
    assert str(parsec.CACHE) in os.path.realpath(runs[0] / "in_simdev.txt")  # unpacked once, in the cache
    assert len(list(parsec.CACHE.iterdir())) == 1
    assert tree_state(home) == before, "the run wrote into the PARSEC tree"


@pytest.mark.parametrize("case,says", [
    ("missing input file", "failed (exit code 1): ERROR: Unable to open file in_64K.txt."),
    ("corrupt input", "failed (killed by SIGABRT)"),
])
def test_a_failing_benchmark_is_never_a_run(tmp_path, case, says):
    home = make_tree(tmp_path)
    conf = home / "pkgs/kernels/canneal/parsec/simdev.runconf"
    if case == "missing input file":  # as blackscholes without its in_64K.txt
        conf.write_text(conf.read_text().replace("in_simdev.txt", "in_64K.txt"))
    else:  # the program aborts, as canneal's free(): invalid pointer did
        conf.write_text(conf.read_text().replace("in_simdev.txt", "data/readme"))
    (rec,) = run_loads(profile(tmp_path, home), 1.0, tmp_path / "work")
    fig = rec["figures"]
    assert fig["runs"] == 0 and fig["throughput"] is None and fig["failed_runs"] == 1
    assert fig["program_exit_code"] != 0 and says in fig["error"], fig
    assert says in load_problem(rec)


def test_airlab_load_reports_the_program_and_exits_1_when_it_fails(tmp_path):
    home = make_tree(tmp_path)
    env = {**os.environ, "AIRLAB_RESULTS": str(tmp_path / "results")}
    ok = subprocess.run([AIRLAB, "load", profile(tmp_path, home, threads=2), "--duration", "1"],
                        capture_output=True, text=True, timeout=60, env=env)
    assert ok.returncode == 0, ok.stderr
    assert "runs/s" in ok.stdout and "[PARSEC canneal -i simdev, gcc-pthreads]" in ok.stdout and "CPU s" in ok.stdout
    conf = home / "pkgs/kernels/canneal/parsec/simdev.runconf"
    conf.write_text(conf.read_text().replace("in_simdev.txt", "in_64K.txt"))
    parsec.runconf.cache_clear()
    bad = subprocess.run([AIRLAB, "load", profile(tmp_path, home), "--duration", "1"],
                         capture_output=True, text=True, timeout=60, env=env)
    assert bad.returncode == 1, (bad.stdout, bad.stderr)
    assert "no figure" in bad.stdout and "Unable to open file in_64K.txt" in bad.stdout
    assert "airlab load: failed: parsec: its program failed" in bad.stderr


def test_shipped_profiles_use_the_tree_or_say_what_it_lacks(tmp_path, airlab_cmd):
    """With PARSEC_HOME set, a shipped profile whose benchmark is built and has its input
    runs the real benchmark; the others fall back to their stand-in and say why."""
    home = make_tree(tmp_path, inputs=("test", "simdev", "simlarge"))
    env = {**os.environ, "PARSEC_HOME": str(home), "AIRLAB_RESULTS": str(tmp_path / "results")}
    out = subprocess.run([airlab_cmd, "profiles"], capture_output=True, text=True, timeout=60, env=env).stdout
    assert f"runs: real PARSEC (PARSEC_HOME={home}): canneal -i simlarge -n {len(os.sched_getaffinity(0))}, " \
           "gcc-pthreads build" in out, out
    assert "runs: stand-in for parsec dedup" in out
    assert f"stand-in because: PARSEC at {home} has no benchmark dedup (benchmarks here: blackscholes, canneal)" in out
    doc = subprocess.run([airlab_cmd, "doctor", "--quick"], capture_output=True, text=True, timeout=120, env=env,
                         stdin=subprocess.DEVNULL).stdout
    assert "parsec canneal: input simlarge, gcc-pthreads build" in doc
    assert f"parsec dedup: PARSEC at {home} has no benchmark dedup" in doc


def test_prepare_builds_reports_and_prints_parsec_home(tmp_path):
    """The user's tree (here: a folder, then its tarball): every benchmark asked for is built
    with the tree's parsecmgmt; a failed build is named with the compiler's first error line."""
    home = make_tree(tmp_path / "src", built=(), broken=("canneal",))
    env = {**os.environ, "AIRLAB_RESULTS": str(tmp_path / "results")}
    cmd = [AIRLAB, "parsec", "prepare", "--benchmarks", "blackscholes,canneal"]
    r = subprocess.run([*cmd, str(home)], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 1, (r.stdout, r.stderr)
    lines = r.stdout.splitlines()
    built = next(ln for ln in lines if "blackscholes" in ln and ln.strip().startswith("built"))
    assert "inputs here: test, simdev" in built
    failed = next(ln for ln in lines if ln.strip().startswith("FAILED"))
    assert "canneal" in failed and "canneal.c" in failed and "error:" in failed, failed
    assert f"  export PARSEC_HOME={home}" in lines and "1 of 2 built; failed: canneal" in r.stdout
    assert parsec.availability({"benchmark": "blackscholes", "parsec_home": str(home)}) == (True, None)
    # The release tarball: unpacked beside it, then built the same way.
    tb = tmp_path / "parsec-3.0.tar.gz"
    with tarfile.open(tb, "w:gz") as tar:
        tar.add(home, arcname="parsec-3.0")
    (tmp_path / "dl").mkdir()
    r = subprocess.run([*cmd, str(tb), "--into", str(tmp_path / "dl")], capture_output=True, text=True,
                       timeout=120, env=env)
    assert r.returncode == 1 and f"  export PARSEC_HOME={tmp_path / 'dl' / 'parsec-3.0'}" in r.stdout.splitlines()
    for bad, says in (([str(tmp_path / "nowhere")], "no such file or folder"),
                      ([str(tmp_path / "results")], "no PARSEC tree there"),
                      (["--benchmarks", "nosuch", str(home)], "unknown benchmark(s) nosuch")):
        r = subprocess.run([AIRLAB, "parsec", "prepare", *bad], capture_output=True, text=True, timeout=60, env=env)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and says in r.stderr, r.stderr


def test_load_record_in_json(tmp_path):
    """`airlab load --json`: the record names the benchmark, input and build that ran."""
    home = make_tree(tmp_path)
    out = tmp_path / "l.json"
    r = subprocess.run([AIRLAB, "load", profile(tmp_path, home, input="test"), "--duration", "0.5", "--json", str(out)],
                       capture_output=True, text=True, timeout=60,
                       env={**os.environ, "AIRLAB_RESULTS": str(tmp_path / "results")})
    assert r.returncode == 0, r.stderr
    (rec,) = json.loads(out.read_text())["loads"]
    assert rec["parsec"]["input"] == "test" and rec["parsec"]["home"] == str(home)
    assert Path(rec["parsec"]["binary"]).name == "canneal"


def test_a_trial_with_a_failing_benchmark_warns(tmp_path):
    """The engine ran alone while the load was dead: the trial says so in its warnings, and
    the load's record has no throughput, the program's error and the input it used."""
    from trial_helpers import run
    home = make_tree(tmp_path)
    conf = home / "pkgs/kernels/canneal/parsec/simdev.runconf"
    conf.write_text(conf.read_text().replace("in_simdev.txt", "in_64K.txt"))
    out = tmp_path / "t.json"
    r = run(out, profile=profile(tmp_path, home), engine=["--mode", "seq", "--end-time", "3000"],
            env={**os.environ, "AIRLAB_RESULTS": str(tmp_path / "results")})
    assert r.returncode == 0, r.stderr
    d = json.loads(out.read_text())
    (rec,) = d["loads"]
    assert rec["figures"]["throughput"] is None and rec["parsec"]["input"] == "simdev"
    assert any(w.startswith("load parsec: its program failed") and "Unable to open file in_64K.txt" in w
               for w in d["warnings"]), d["warnings"]
    assert "warning: load parsec" in r.stderr

"""Profiles: every shipped one validates and resolves; every broken one in
tests/data/profiles_broken/ fails with its own message (the file's first line says which);
thread counts relative to cores resolve; PARSEC without PARSEC is unavailable or falls
back to a stand-in that says so; `airlab profiles` reports all of it."""
import subprocess
from pathlib import Path

import pytest

from loads import kinds
from loads.profiles import ProfileError, list_profiles, load_file, resolve_count, resolve_profile

BROKEN = sorted((Path(__file__).parent / "data" / "profiles_broken").glob("*.yaml"))


@pytest.mark.parametrize("name", list_profiles())
def test_shipped_profile_validates_and_resolves(name):
    r = resolve_profile(name)
    assert r["name"] == name and r["description"]
    for p in r["processes"]:
        assert p["threads"] >= 1 and p["start_s"] >= 0
        assert p["stop_s"] is None or p["stop_s"] > p["start_s"]


def test_enough_profiles_ship():
    names = set(list_profiles())
    for ctp in (1, 10, 100, 1000, 10000):
        assert f"onoff-ctp{ctp}" in names
    for bench in ("blackscholes", "bodytrack", "canneal", "dedup", "fluidanimate",
                  "streamcluster", "swaptions", "x264"):
        assert f"parsec-{bench}" in names
    assert {"none", "cpu-1", "cpu-2", "cpu-timevarying"} <= names


@pytest.mark.parametrize("path", BROKEN, ids=[p.stem for p in BROKEN])
def test_broken_profile_fails_with_its_own_message(path):
    expected = path.read_text().splitlines()[0].split("expect: ", 1)[1]
    with pytest.raises(ProfileError) as e:
        load_file(path)
    assert any(expected in msg for msg in e.value.errors), e.value.errors
    assert all(msg.startswith(str(path)) for msg in e.value.errors), "each message names the file"


def test_broken_corpus_covers_the_required_cases():
    # The cases issue 3 names: missing kind, unknown kind, negative CTP, bad thread count,
    # unknown field, wrong types, start after end.
    required = {"missing-kind", "unknown-kind", "negative-ctp", "bad-thread-count", "zero-threads",
                "unknown-field", "wrong-type-start", "wrong-type-argv", "start-after-stop"}
    assert required <= {p.stem for p in BROKEN}


# Mistakes the schema alone lets through, each with its own message (inline, one file each).
MORE_BROKEN = {
    "field-of-another-kind": ("  - kind: cpu\n    ctp_us: 1000\n",
                              "processes[0]: ctp_us does not apply to kind cpu (only to onoff)"),
    "bad-regex": ("  - kind: command\n    argv: [sha256sum, /dev/zero]\n    throughput_regex: 'rate ([0-9.]+'\n",
                  "processes[0].throughput_regex: not a valid regular expression"),
    "regex-without-group": ("  - kind: command\n    argv: [sha256sum, /dev/zero]\n    throughput_regex: 'rate [0-9.]+'\n",
                            "processes[0].throughput_regex: no group"),
    "count-divided-by-zero": ("  - kind: cpu\n    count: cores/0\n", "processes[0].count: 'cores/0' is not a count"),
    "zero-times-cores": ("  - kind: cpu\n    threads: 0*cores\n", "processes[0].threads: '0*cores' is not a count"),
    "reversed-cpu-range": ("  - kind: cpu\n    cpus: '3-1'\n", "processes[0].cpus: the range 3-1 is empty (write 1-3)"),
    "fallback-problem": ("  - kind: parsec\n    benchmark: canneal\n    fallback: {kind: onoff, ctp_us: 0}\n",
                         "processes[0].fallback.ctp_us: 0 is out of range: it must be > 0"),
    "fallback-kind-field": ("  - kind: parsec\n    benchmark: canneal\n    fallback: {kind: cpu, stressor: vm}\n",
                            "processes[0].fallback: stressor does not apply to kind cpu (only to stress-ng)"),
}


@pytest.mark.parametrize("name", sorted(MORE_BROKEN))
def test_more_broken_profiles(tmp_path, name):
    procs, expected = MORE_BROKEN[name]
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"description: {name}\nprocesses:\n{procs}")
    with pytest.raises(ProfileError) as e:
        load_file(path)
    assert [m for m in e.value.errors if expected in m and m.startswith(str(path))], e.value.errors


@pytest.mark.parametrize("expr,cores,want", [
    (3, 8, 3), ("cores", 8, 8), ("cores-1", 8, 7), ("cores-1", 1, 1), ("cores+1", 2, 3),
    ("cores/2", 8, 4), ("cores/2", 1, 1), ("2*cores", 4, 8)])
def test_relative_counts(expr, cores, want):
    assert resolve_count(expr, cores) == want


def test_relative_count_refuses_division_by_zero():
    with pytest.raises(ValueError, match="divides by zero"):
        resolve_count("cores/0", 4)


def test_cpus_missing_here_make_the_process_unavailable(tmp_path):
    """Binding to a CPU this machine lacks is said before the run, in words, rather than
    failing in the child ("Exception occurred in preexec_fn")."""
    prof = tmp_path / "far-cpu.yaml"
    prof.write_text("description: bound to CPU 4095\nprocesses:\n  - kind: cpu\n    cpus: '0,4095'\n")
    r = resolve_profile(str(prof))
    assert not r["available"] and "CPU 4095 is not usable here" in r["reasons"][0]


def test_count_expands_into_separate_processes():
    r = resolve_profile("onoff-ctp1000-x3")
    assert [p["name"] for p in r["processes"]] == ["onoff.0", "onoff.1", "onoff.2"]
    assert all(p["ctp_us"] == 1000 for p in r["processes"])


def test_timevarying_profile_has_offsets():
    r = resolve_profile("cpu-timevarying")
    assert [(p["start_s"], p["stop_s"]) for p in r["processes"]] == [(0.5, 1.5), (1.0, None)]


def test_parsec_without_parsec(tmp_path, monkeypatch):
    monkeypatch.delenv("PARSEC_HOME", raising=False)
    if kinds.parsec_home():
        pytest.skip("PARSEC is installed here; the unavailable path cannot be shown")
    # Without a fallback: unavailable, with a reason that says how to install PARSEC.
    bare = tmp_path / "parsec-only.yaml"
    bare.write_text("description: real canneal\nprocesses:\n  - kind: parsec\n    benchmark: canneal\n")
    r = resolve_profile(str(bare))
    assert not r["available"]
    assert "PARSEC_HOME" in r["reasons"][0] and "parsecmgmt -a build" in r["reasons"][0]
    # With one: the stand-in runs, and says what it stands in for.
    r = resolve_profile("parsec-canneal")
    assert r["available"] and r["stand_in"]
    p = r["processes"][0]
    assert p["kind"] == "stress-ng" and p["stand_in_for"] == "parsec canneal"
    assert "PARSEC" in p["replaces_unavailable"]


def test_airlab_profiles_lists_and_checks(airlab_cmd):
    out = subprocess.run([airlab_cmd, "profiles"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0
    assert "onoff-ctp1000" in out.stdout and "available" in out.stdout and "[stand-in]" in out.stdout
    good = subprocess.run([airlab_cmd, "profiles", "check", "configs/profiles/cpu-1.yaml"],
                          capture_output=True, text=True, timeout=60)
    assert good.returncode == 0 and "ok" in good.stdout
    bad = subprocess.run([airlab_cmd, "profiles", "check", "configs/profiles/cpu-1.yaml", *map(str, BROKEN[:3])],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2
    assert bad.stdout.count("FAIL") >= 3


def test_guide_example_validates(tmp_path):
    """docs/profiles.md's examples and the README's stay valid profiles."""
    import re
    root = Path(__file__).parent.parent
    guide = (root / "docs" / "profiles.md").read_text()
    readme = (root / "README.md").read_text().split("### Adding an interference profile", 1)[1]
    blocks = re.findall(r"```yaml\n(.*?)```", guide, re.S) + \
        re.findall(r"```yaml\n(.*?)```", readme.split("\n### ", 1)[0], re.S)
    assert len(blocks) >= 3
    for i, block in enumerate(blocks):
        path = tmp_path / f"example-{i}.yaml"
        path.write_text(block)
        load_file(path)


def test_installed_parsec_is_preferred_to_the_stand_in(tmp_path, monkeypatch):
    """A PARSEC tree named by the profile (parsec_home) that has the benchmark built and its
    input wins over the fallback, and the load runs the benchmark binary itself, repeated
    (tests/parsec_tree.py: a tree laid out like PARSEC's, its benchmark compiled here)."""
    import time
    from loads import parsec
    from loads.launcher import LoadSet
    from parsec_tree import make_tree
    monkeypatch.setattr(parsec, "CACHE", tmp_path / "cache")
    home = make_tree(tmp_path, inputs=("test", "simdev", "simlarge"), units={"simlarge": 20000})
    prof = tmp_path / "canneal.yaml"
    text = (Path("configs/profiles/parsec-canneal.yaml").read_text()
            .replace("    benchmark: canneal\n", f"    benchmark: canneal\n    parsec_home: {home}\n", 1))
    prof.write_text(text)
    r = resolve_profile(str(prof))
    p = r["processes"][0]
    assert r["available"] and not r["stand_in"] and p["kind"] == "parsec" and not p["replaces_unavailable"]
    with LoadSet(r, workdir=tmp_path / "w") as loads:
        loads.start()
        time.sleep(1.0)
        (rec,) = loads.stop()
    assert rec["stand_in"] is False and rec["figures"]["unit"] == "runs/s"
    assert rec["figures"]["runs"] >= 1
    assert rec["argv"][-4:] == [str(home / "pkgs/kernels/canneal/inst/amd64-linux.gcc-pthreads/bin/canneal"),
                                str(p["threads"]), "in_simlarge.txt", "out.txt"]


def test_airlab_profiles_lists_invalid_profiles_and_exits_2(airlab_cmd, tmp_path):
    """A broken file in configs/profiles/ does not hide the others: each profile is listed,
    the broken ones as INVALID with every error, and the status is 2 (as --help says). A
    copy of the lab's layout (AIRLAB_ROOT) keeps the broken files out of the real folder."""
    import os
    import shutil
    (tmp_path / "configs" / "profiles").mkdir(parents=True)
    (tmp_path / "configs" / "schemas").symlink_to(Path("configs/schemas").resolve())
    shutil.copy("configs/profiles/none.yaml", tmp_path / "configs" / "profiles")
    (tmp_path / "configs" / "profiles" / "bad-kind.yaml").write_text(
        "description: two problems\nprocesses:\n  - kind: frob\n    ctp: 3\n")
    (tmp_path / "configs" / "profiles" / "not-yaml.yaml").write_text("description: [\n")
    env = {**os.environ, "AIRLAB_ROOT": str(tmp_path)}
    out = subprocess.run([airlab_cmd, "profiles"], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 2, (out.stdout, out.stderr)
    rows = out.stdout.splitlines()
    assert [r.split()[0] for r in rows if not r.startswith(" ")] == ["bad-kind", "none", "not-yaml"]
    bad = rows.index(next(r for r in rows if r.startswith("bad-kind")))
    assert rows[bad].split()[1] == "INVALID" and "unknown field ctp" in rows[bad]
    assert "'frob' is not one of" in rows[bad + 1]
    assert "INVALID" in next(r for r in rows if r.startswith("not-yaml")) and "not valid YAML" in out.stdout
    assert "available" in next(r for r in rows if r.startswith("none"))
    assert "2 invalid profile(s): bad-kind, not-yaml" in out.stderr
    help_text = subprocess.run([airlab_cmd, "profiles", "--help"], capture_output=True, text=True, timeout=60).stdout
    assert "2    one or more is invalid" in help_text


def _runs_lines(stdout, name):
    """The `runs:` lines under profile NAME in `airlab profiles`."""
    rows = stdout.splitlines()
    start = next(i for i, r in enumerate(rows) if r.startswith(name + " "))
    end = next((i for i in range(start + 1, len(rows)) if not rows[i].startswith(" ")), len(rows))
    return [r.split("runs: ", 1)[1] for r in rows[start + 1:end] if "runs: " in r]


PARSEC_PROFILES = [n for n in list_profiles() if n.startswith("parsec-")]


def test_parsec_profiles_say_what_runs_here(airlab_cmd, tmp_path):
    """What a PARSEC profile runs depends on the machine, so `airlab profiles` says it per
    profile: real PARSEC and where it was found, or the stand-in and what it is. The
    description (the same on every machine) names both."""
    import os
    for name in PARSEC_PROFILES:
        text = resolve_profile(name)["description"]
        assert "the real benchmark when PARSEC is installed" in text and "otherwise a stand-in" in text, name
        assert "STAND-IN" not in text, f"{name}: reads as always a stand-in"
    from parsec_tree import make_tree
    benches = [n.split("-", 1)[1] for n in PARSEC_PROFILES]
    home = make_tree(tmp_path, benchmarks=benches, built=benches, inputs=("simlarge",))
    real = subprocess.run([airlab_cmd, "profiles"], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PARSEC_HOME": str(home)})
    assert real.returncode == 0, real.stderr
    for name in PARSEC_PROFILES:
        bench = name.split("-", 1)[1]
        assert _runs_lines(real.stdout, name) == [f"real PARSEC (PARSEC_HOME={home}): {bench} -i simlarge "
                                                  f"-n {resolve_profile(name)['cores']}, gcc-pthreads build"], real.stdout
        assert "[stand-in]" not in next(r for r in real.stdout.splitlines() if r.startswith(name + " "))
    env = {k: v for k, v in os.environ.items() if k != "PARSEC_HOME"}
    if kinds.parsec_home():
        pytest.skip("PARSEC is on PATH here; the stand-in listing cannot be shown")
    stand = subprocess.run([airlab_cmd, "profiles"], capture_output=True, text=True, timeout=60, env=env)
    assert stand.returncode == 0, stand.stderr
    for name in PARSEC_PROFILES:
        bench = name.split("-", 1)[1]
        (runs,) = _runs_lines(stand.stdout, name)
        assert runs.startswith(f"stand-in for parsec {bench}: "), runs
        assert "[stand-in]" in next(r for r in stand.stdout.splitlines() if r.startswith(name + " "))
    assert "runs: stand-in for parsec canneal: stress-ng --vm " in stand.stdout


def test_resolved_parsec_profile_records_what_runs(tmp_path, monkeypatch):
    """The resolved profile (which a trial records) says the same, and the records' marks
    stay: stand_in / stand_in_for on the stand-in, none on real PARSEC."""
    from parsec_tree import make_tree
    home = make_tree(tmp_path, benchmarks=("dedup",), built=("dedup",), inputs=("simlarge",))
    monkeypatch.setenv("PARSEC_HOME", str(home))
    (p,) = resolve_profile("parsec-dedup")["processes"]
    assert p["kind"] == "parsec" and not p["stand_in"] and p["stand_in_for"] is None
    assert p["runs"].startswith(f"real PARSEC (PARSEC_HOME={home}): dedup")
    assert p["input"] == "simlarge" and p["build_config"] == "gcc-pthreads"
    monkeypatch.delenv("PARSEC_HOME")
    if kinds.parsec_home():
        pytest.skip("PARSEC is on PATH here")
    (p,) = resolve_profile("parsec-dedup")["processes"]
    assert p["stand_in"] and p["stand_in_for"] == "parsec dedup"
    assert p["runs"] == f"stand-in for parsec dedup: stress-ng --zlib {p['threads']} --zlib-level 6"

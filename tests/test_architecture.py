"""The map in docs/architecture.md stays true, and every registered engine policy is
complete: a help line in `airpdes --help`, a choice the option parser accepts, and a place
in the determinism suite. A policy added to one list but not the others fails here."""
import json
import os
import re
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AIRPDES = os.path.join(ROOT, "engine", "build", "airpdes")


def read(*parts):
    with open(os.path.join(ROOT, *parts)) as f:
        return f.read()


def test_every_file_the_map_names_exists():
    doc = read("docs", "architecture.md")
    paths = set(re.findall(r"`((?:engine|analysis|workflows|loads|configs|docs|tests)/[^`\s]+?\.(?:c|h|py|yaml|md))`", doc))
    assert paths, "the map names no files"
    missing = [p for p in sorted(paths) if "<" not in p and not os.path.exists(os.path.join(ROOT, p))]
    assert not missing, f"docs/architecture.md names files that do not exist: {missing}"


def test_every_function_the_engine_rows_name_exists():
    doc = read("docs", "architecture.md")
    for line in doc.splitlines():
        m = re.match(r"\| .* \| `(engine/src/[a-z_]+\.c)`.*\| (.*) \|$", line)
        if not m:
            continue
        files = re.findall(r"engine/src/([a-z_]+\.c)", line) + re.findall(r"`([a-z_]+\.c)`", line)
        files += [f[:-2] + ".h" for f in files]  # inline functions live in the header
        sources = "".join(read("engine", "src", n) for n in files
                          if os.path.exists(os.path.join(ROOT, "engine", "src", n)))
        for fn in re.findall(r"`([a-z_]+)`", m.group(2)):
            if fn.endswith(("_c", "_h")):
                continue
            assert fn in sources, f"docs/architecture.md: {fn} not found in the files of its row: {line}"


def barrier_policies():
    help_text = subprocess.run([AIRPDES, "--help"], capture_output=True, text=True, check=True).stdout
    return re.search(r"--barrier-wait HOW\s+.*?: ([a-z |-]+)", help_text).group(1).strip().split(" | ")


def test_every_barrier_wait_policy_is_complete():
    policies = barrier_policies()
    assert set(policies) >= {"spin", "yield", "block", "adaptive"}
    help_text = subprocess.run([AIRPDES, "--help"], capture_output=True, text=True, check=True).stdout
    # the engine suites take their policies from the registry (airpdes --describe), so a
    # policy registered in engine/src/registry.c is run by both without an edit
    for suite in ("determinism.py", "no_deadlock.py"):
        assert 'registry_names("barrier_waits")' in read("engine", "tests", suite), suite
    described = subprocess.run([AIRPDES, "--describe"], capture_output=True, text=True, check=True).stdout
    assert [w["name"] for w in json.loads(described)["barrier_waits"]] == policies
    for name in policies:
        assert re.search(rf"^\s+{name}\s+\S", help_text, re.M), f"--help has no line for --barrier-wait {name}"
        p = subprocess.run([AIRPDES, "--barrier-wait", name, "--check"], capture_output=True, text=True)
        assert p.returncode == 0, f"--barrier-wait {name} refused: {p.stderr}"
        assert f'{{ "{name}", ' in read("engine", "src", "barrier_wait.c"), f"{name}: no descriptor in barrier_wait.c"


def test_every_detector_and_mode_is_in_the_determinism_suite():
    determinism = read("engine", "tests", "determinism.py")
    help_text = subprocess.run([AIRPDES, "--help"], capture_output=True, text=True, check=True).stdout
    detectors = re.search(r"--detector NAME\s+.*?: ([a-z |]+)", help_text).group(1).split(" | ")
    modes = re.search(r"--mode MODE\s+.*?: ([a-z |]+)", help_text).group(1).split(" | ")
    for d in detectors:
        assert f'"{d.strip()}"' in determinism, f"detector {d} missing from determinism.py"
    for m in modes:
        if m.strip() != "seq":
            assert f'("{m.strip()}",' in determinism, f"mode {m} missing from determinism.py"


ENGINE_NAMES = ["phold", "pcs", "seq", "fm", "dm", "adm", "ladm", "apte", "pi", "rq", "pr", "rap",
                "optimistic", "conservative", "auto", "spin", "yield", "block", "adaptive", "idle-yield", "partner"]


def test_every_policy_name_is_written_once_in_the_engine():
    """Issue 17: a policy's name lives in its descriptor only; options, help, checks and
    set-up find it through the registry (engine/src/registry.c)."""
    counts = {n: 0 for n in ENGINE_NAMES}
    for sub in ("src", "tools", "models"):
        d = os.path.join(ROOT, "engine", sub)
        for f in os.listdir(d):
            if f.endswith((".c", ".h")):
                text = read("engine", sub, f)
                for n in ENGINE_NAMES:
                    counts[n] += text.count(f'"{n}"')
    assert all(c == 1 for c in counts.values()), {n: c for n, c in counts.items() if c != 1}


# The Python packages stack in this order; a module may import its own package and the ones
# below it, never one above (docs/architecture.md, "Layers").
LAYERS = ["airbase", "loads", "workflows", "analysis"]


def _imports(path):
    import ast
    tree = ast.parse(read(path))
    for node in ast.walk(tree):  # function-local imports too: they are imports all the same
        if isinstance(node, ast.Import):
            yield from (a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module.split(".")[0]


def test_no_import_runs_up_the_layers():
    upward = []
    for level, package in enumerate(LAYERS):
        for dirpath, _, names in os.walk(os.path.join(ROOT, package)):
            for name in names:
                if not name.endswith(".py"):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, name), ROOT)
                upward += [f"{rel} imports {m}" for m in _imports(rel)
                           if m in LAYERS and LAYERS.index(m) > level]
    assert not upward, "imports that run up the layers: " + "; ".join(sorted(upward))


def test_every_policy_option_is_in_the_determinism_suite():
    """The determinism suite is extended with every engine option: each option a policy
    declares (airpdes --describe) is run there away from its default, so a new detector's
    or mode's option cannot change what is committed unnoticed."""
    determinism = read("engine", "tests", "determinism.py")
    d = json.loads(subprocess.run([AIRPDES, "--describe"], capture_output=True, text=True, check=True).stdout)
    options = [o["name"] for kind, items in d.items() if kind not in ("models", "work_options")
               for p in items for o in p["options"]]
    assert len(options) > 10
    missing = [o for o in options if f'"--{o}"' not in determinism]
    assert not missing, f"policy options the determinism suite never sets: {missing}"


def test_the_engine_describes_its_policies_for_the_python_side():
    """`airpdes --describe` lists every registered policy, with the mode flags the Python
    side needs instead of lists of names (workflows/engine_policies.py)."""
    import json
    d = json.loads(subprocess.run([AIRPDES, "--describe"], capture_output=True, text=True, check=True).stdout)
    modes = {m["name"]: m for m in d["modes"]}
    assert {n for n, m in modes.items() if m["adapts_threads"]} == {"adm", "ladm"}
    assert [n for n, m in modes.items() if m["sequential"]] == ["seq"]
    assert [n for n, m in modes.items() if m["helps_orphans"]] == ["ladm"]  # determinism.py's orphan-help check
    for key in ("modes", "syncs", "detectors", "reactivations", "barrier_waits", "models"):
        assert d[key] and sum(x["default"] for x in d[key]) == 1, key
        assert all(x["help"] for x in d[key]), key
    helptext = subprocess.run([AIRPDES, "--help"], capture_output=True, text=True).stdout
    for key in ("modes", "detectors", "reactivations", "barrier_waits"):
        for x in d[key]:
            assert x["name"] in helptext, (key, x["name"])

"""A PARSEC 3.0 benchmark resolved the way parsecmgmt resolves it, once, before a trial's
clock starts, so that the load runs the benchmark itself and not parsecmgmt's shell work.

From a PARSEC tree (PARSEC_HOME) and a benchmark, input and build configuration:

- the package folder, from config/packages/<suite>.<name>.pkgconf (`pkg_group`), e.g.
  pkgs/kernels/canneal (splash2x.fft: ext/splash2x/apps/fft);
- the binary, <package>/inst/<PARSECPLAT>/<run_exec> with PARSECPLAT = <arch>-linux.<config>
  (amd64-linux.gcc-pthreads), as parsecmgmt names a build;
- the command line and environment that <package>/parsec/<input>.runconf gives for that
  input and thread count: bash sources PARSEC's own files (config/<config>.bldconf,
  config/<input>.runconf, the package's runconf) with NTHREADS set, exactly as parsecmgmt
  does, and prints run_exec, the words of run_args and what they export (vips's
  IM_CONCURRENCY);
- the input, <package>/inputs/input_<input>.tar, unpacked once into the lab's cache
  (results/inputs/parsec/); each load process gets its own run folder (its work folder's
  run/) whose folders are real and whose files link to the cache, so copies never share a
  folder and nothing is written into PARSEC_HOME.

An input is in the tree when the package has its runconf and its input archive (or the
package has no input archives at all: swaptions takes its input from its arguments). The
input a profile does not name is the largest the tree has; the build configuration it does
not name is the first built of PREFERRED_CONFIGS. Anything missing is a reason that names
what the tree does have and how to build what it lacks."""
import functools
import hashlib
import os
import platform
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

from airbase.paths import RESULTS

# PARSEC 3.0's own benchmarks, and SPLASH-2x (suite.name), which parsecmgmt runs the same way.
PARSEC_BENCHMARKS = ("blackscholes", "bodytrack", "canneal", "dedup", "facesim", "ferret", "fluidanimate",
                     "freqmine", "raytrace", "streamcluster", "swaptions", "vips", "x264")
SPLASH2X = ("barnes", "cholesky", "fft", "fmm", "lu_cb", "lu_ncb", "ocean_cp", "ocean_ncp", "radiosity",
            "radix", "raytrace", "volrend", "water_nsquared", "water_spatial")
BENCHMARKS = PARSEC_BENCHMARKS + tuple(f"splash2x.{b}" for b in SPLASH2X)
# Smallest to largest, as PARSEC's documentation orders them.
INPUTS = ("test", "simdev", "simsmall", "simmedium", "simlarge", "native")
# The build configuration a profile that names none uses, the first one built of these.
# gcc-pthreads first: the threaded build researchers use; serial builds never, unasked.
PREFERRED_CONFIGS = ("gcc-pthreads", "gcc", "gcc-openmp", "gcc-tbb")
CACHE = RESULTS / "inputs" / "parsec"

HELP = ("PARSEC 3.0 is not installed: get parsec-3.0 (https://parsec.cs.princeton.edu/) and its "
        "input archives, run `airlab parsec prepare FOLDER-OR-TARBALL` (or build with "
        "`parsecmgmt -a build -p NAME -c gcc-pthreads`), and set PARSEC_HOME to its folder")


class Unavailable(Exception):
    """This benchmark cannot run from this PARSEC tree; the message says what is missing."""


def _is_tree(home):
    return (home / "pkgs").is_dir() and ((home / "config").is_dir() or (home / "bin" / "parsecmgmt").exists())


def find_home(configured=None):
    """(PARSEC folder, where it was found, e.g. 'PARSEC_HOME=/opt/parsec-3.0') or (None, None):
    the profile's parsec_home, else $PARSEC_HOME, else the folder above a parsecmgmt on PATH."""
    for field, home in (("parsec_home", configured), ("PARSEC_HOME", os.environ.get("PARSEC_HOME"))):
        if home:
            return Path(home).expanduser().absolute(), f"{field}={home}"
    found = shutil.which("parsecmgmt")
    if found:
        return Path(found).resolve().parent.parent, f"parsecmgmt on PATH: {found}"
    return None, None


def host_platform():
    """parsecmgmt's <arch>-<os> part of PARSECPLAT (amd64-linux on x86_64), or $PARSECPLAT."""
    if os.environ.get("PARSECPLAT"):
        return os.environ["PARSECPLAT"]
    machine = platform.machine()
    arch = {"x86_64": "amd64", "amd64": "amd64", "i386": "i386", "i686": "i386"}.get(machine, machine)
    return f"{arch}-linux"


def _group(home, suite, name):
    """The package's group (apps, kernels) from its pkgconf; PARSEC 2.1 has none: search."""
    conf = home / "config" / "packages" / f"{suite}.{name}.pkgconf"
    try:
        m = re.search(r'^\s*pkg_group\s*=\s*"?([A-Za-z0-9_-]+)"?', conf.read_text(errors="replace"), re.M)
        if m:
            return m.group(1)
    except OSError:
        pass
    base = home / ("pkgs" if suite == "parsec" else f"ext/{suite}")
    for d in sorted(base.glob(f"*/{name}")) if base.is_dir() else ():
        if (d / "parsec").is_dir():
            return d.parent.name
    return None


def package_dir(home, benchmark):
    suite, _, name = benchmark.rpartition(".")
    suite = suite or "parsec"
    group = _group(home, suite, name)
    if not group:
        return None
    return home / ("pkgs" if suite == "parsec" else f"ext/{suite}") / group / name


def benchmarks_here(home):
    """Benchmarks of BENCHMARKS whose package this tree has."""
    return [b for b in BENCHMARKS if (d := package_dir(home, b)) and (d / "parsec").is_dir()]


def inputs_here(pkg):
    """The inputs this package can run with here, smallest first."""
    archives = {m.group(1) for p in (pkg / "inputs").glob("input_*.tar*")
                if (m := re.match(r"input_(.+?)\.tar", p.name))}
    out = []
    for name in INPUTS:
        if (pkg / "parsec" / f"{name}.runconf").is_file() and (name in archives or not archives):
            out.append(name)
    return out


def builds_here(pkg, plat=None):
    """The build configurations installed for this machine's platform (inst/<plat>.<config>)."""
    plat = plat or host_platform()
    inst = pkg / "inst"
    found = [d.name[len(plat) + 1:] for d in inst.glob(f"{plat}.*") if d.is_dir()] if inst.is_dir() else []
    return sorted(found)


def _input_archive(pkg, name):
    for suffix in (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz"):
        p = pkg / "inputs" / f"input_{name}{suffix}"
        if p.is_file():
            return p
    return None


# Sources PARSEC's own files as parsecmgmt does and prints, on stdout, the environment
# before and after the runconf files (what they export), then run_exec and the words of
# run_args: NUL-separated, the three parts split by SECTION (no temporary files to leave).
SECTION = b"--airlab-runconf-section--"
_RUNCONF_SH = r"""
set +eu
cd "$PARSECDIR" || exit 3
if [ -f "config/$AIRLAB_BUILD.bldconf" ]; then source "config/$AIRLAB_BUILD.bldconf" >/dev/null 2>&1; fi
if [ -n "${CC_HOME:-}" ]; then export LD_LIBRARY_PATH="${CC_HOME}/lib:${CC_HOME}/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; fi
env -0
printf -- '--airlab-runconf-section--'
if [ -f "config/$AIRLAB_INPUT.runconf" ]; then source "config/$AIRLAB_INPUT.runconf" >/dev/null 2>&1; fi
source "$AIRLAB_PKG/parsec/$AIRLAB_INPUT.runconf" >/dev/null 2>&1 || exit 4
env -0
printf -- '--airlab-runconf-section--'
eval "set -- $run_args" || exit 5
printf '%s\0' "$run_exec" "$@"
"""


def _env_of(data):
    out = {}
    for item in data.split(b"\0"):
        key, sep, value = item.decode(errors="replace").partition("=")
        if sep:
            out[key] = value
    return out


@functools.lru_cache(maxsize=256)
def runconf(home, pkg, input_name, threads, config, plat):
    """(run_exec, [args], {exported env}) of a package's runconf for this input and thread count."""
    where = pkg / "parsec" / f"{input_name}.runconf"
    env = {**os.environ, "PARSECDIR": str(home), "PARSECPLAT": f"{plat}.{config}", "NTHREADS": str(threads),
           "AIRLAB_BUILD": config, "AIRLAB_INPUT": input_name, "AIRLAB_PKG": str(pkg)}
    r = subprocess.run(["bash", "-c", _RUNCONF_SH], env=env, capture_output=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    parts = r.stdout.split(SECTION)
    if r.returncode != 0 or len(parts) != 3:
        err = r.stderr.decode(errors="replace").strip().splitlines()
        raise Unavailable(f"{where} could not be read by bash (exit {r.returncode}{': ' + err[-1] if err else ''})")
    before, after = _env_of(parts[0]), _env_of(parts[1])
    words = parts[2].split(b"\0")[:-1]
    exported = {k: v for k, v in after.items() if before.get(k) != v}
    if "LD_LIBRARY_PATH" in before and before["LD_LIBRARY_PATH"] != os.environ.get("LD_LIBRARY_PATH"):
        exported.setdefault("LD_LIBRARY_PATH", before["LD_LIBRARY_PATH"])  # parsecmgmt's CC_HOME/lib
    if not words or not words[0]:
        raise Unavailable(f"{where} sets no run_exec")
    return words[0].decode(), [w.decode(errors="replace") for w in words[1:]], exported


def _words(items):
    return ", ".join(items) if items else "none"


def resolve(spec, threads=1):
    """What one parsec process runs here: a dict with home, origin, benchmark, input,
    build_config, binary, args, env and input_archive (None when the benchmark takes none).
    Raises Unavailable with what is missing and what the tree has."""
    home, origin = find_home(spec.get("parsec_home"))
    if home is None:
        raise Unavailable(HELP)
    if not home.is_dir() or not _is_tree(home):
        raise Unavailable(f"{origin}: {home} is not a PARSEC tree (no pkgs/ and config/ folders); {HELP}")
    bench = spec["benchmark"]
    pkg = package_dir(home, bench)
    if pkg is None or not (pkg / "parsec").is_dir():
        raise Unavailable(f"PARSEC at {home} has no benchmark {bench} "
                          f"(benchmarks here: {_words(benchmarks_here(home))})")
    have = inputs_here(pkg)
    name = spec.get("input") or (have[-1] if have else None)
    build_cmd = f"parsecmgmt -a build -p {bench} -c {spec.get('build_config') or PREFERRED_CONFIGS[0]}"
    if name is None or name not in have:
        what = f"input {name}" if name else "no input"
        raise Unavailable(f"PARSEC {bench}: {what} is not in {home} (inputs here: {_words(have)}; PARSEC's "
                          f"input archives hold them: input_<input>.tar in {pkg / 'inputs'})")
    plat = host_platform()
    built = builds_here(pkg, plat)
    config = spec.get("build_config") or next((c for c in PREFERRED_CONFIGS if c in built), None) \
        or next((c for c in built if "serial" not in c), None)
    if config is None or config not in built:
        raise Unavailable(f"PARSEC {bench} is not built with {config or PREFERRED_CONFIGS[0]} for {plat} "
                          f"(builds here: {_words(built)}; build with: {build_cmd})")
    run_exec, args, env = runconf(home, pkg, name, int(threads), config, plat)
    binary = pkg / "inst" / f"{plat}.{config}" / run_exec
    if not os.access(binary, os.X_OK):
        raise Unavailable(f"PARSEC {bench}: the {config} build has no program {binary} "
                          f"(rebuild with: parsecmgmt -a build -p {bench} -c {config})")
    archive = _input_archive(pkg, name)
    return {"home": str(home), "origin": origin, "benchmark": bench, "input": name, "build_config": config,
            "binary": str(binary), "args": args, "env": env,
            "input_archive": None if archive is None else str(archive)}


def availability(spec):
    try:
        resolve(spec)
        return True, None
    except Unavailable as e:
        return False, str(e)


def unpacked_input(archive):
    """The folder holding this input archive's files, unpacked once into the lab's cache
    (keyed by the archive's path, size and time, so a replaced archive is unpacked anew).
    Unpacked beside it under a temporary name and renamed: complete or absent."""
    archive = Path(archive).resolve()
    st = archive.stat()
    key = hashlib.sha256(f"{archive}:{st.st_size}:{st.st_mtime_ns}".encode()).hexdigest()[:16]
    dest = CACHE / f"{archive.parent.parent.name}-{archive.name.split('.tar')[0]}-{key}"
    if dest.is_dir():
        return dest
    CACHE.mkdir(parents=True, exist_ok=True)
    # Named before it is made, and made inside the try: an interrupt at any instant leaves
    # no half-unpacked folder behind.
    tmp = CACHE / f".{dest.name}.{os.getpid()}.{os.urandom(4).hex()}"
    try:
        tmp.mkdir()
        with tarfile.open(archive, "r:*") as tar:
            extract_all(tar, tmp)
        os.rename(tmp, dest)
    except OSError:
        if not dest.is_dir():  # another process renamed its copy first: use that one
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def extract_all(tar, dest, filter_name="data"):
    """tar.extractall, refusing members that would land outside dest (absolute paths, ..,
    links out of it): with tarfile's own filter where Python has it (3.11.4+), else checked here."""
    if hasattr(tarfile, "data_filter"):
        tar.extractall(dest, filter=filter_name)
        return
    root = os.path.realpath(dest)
    for m in tar.getmembers():
        target = os.path.realpath(os.path.join(root, m.name))
        base = os.path.dirname(target) if m.issym() else root  # a hard link names a member
        link = os.path.realpath(os.path.join(base, m.linkname)) if m.issym() or m.islnk() else root
        if not (target + os.sep).startswith(root + os.sep) or not (link + os.sep).startswith(root + os.sep) \
                or m.isdev():
            raise tarfile.TarError(f"{m.name}: would be unpacked outside {dest}")
    tar.extractall(dest)


def make_run_folder(source, run_dir):
    """run_dir with source's folders made anew and its files linked: the benchmark reads
    the cached input and writes its own files (outputs, files it adds to an input folder)
    in a folder no other copy uses."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    if source is None:
        return run_dir
    source = Path(source)
    for root, dirs, files in os.walk(source):
        rel = Path(root).relative_to(source)
        for d in dirs:
            (run_dir / rel / d).mkdir(exist_ok=True)
        for f in files:
            link = run_dir / rel / f
            if not link.exists():
                link.symlink_to(Path(root) / f)
    return run_dir

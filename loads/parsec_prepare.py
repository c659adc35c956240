"""`airlab parsec prepare`: make a PARSEC 3.0 tree the user already has ready for the lab.

It takes the tree's folder, or the release tarball(s) (parsec-3.0.tar.gz, or the core
tarball plus the input archives parsec-3.0-input-sim.tar.gz / -native.tar.gz, which
unpack into the same parsec-3.0/ folder), builds with the tree's own parsecmgmt every
benchmark a shipped profile uses, and reports which built and which failed with the first
error line of its build, the inputs each has, and the PARSEC_HOME to set. Nothing is
downloaded: the machine may have no network, and the user brings PARSEC."""
import re
import subprocess
import sys
import tarfile
from pathlib import Path

from airbase.paths import RESULTS
from loads import parsec
from loads.profiles import ProfileError, list_profiles, load_file, profile_path

LOGS = RESULTS / "logs" / "parsec-prepare"
_ERROR = re.compile(r"\berror\b|Error:|undefined reference|multiple definition", re.I)


class PrepareError(Exception):
    """Bad input (not a PARSEC tree or tarball): one line, exit 2."""


def shipped_benchmarks():
    """The PARSEC benchmarks the shipped profiles run, in order of first use."""
    out = []
    for name in list_profiles():
        try:
            data = load_file(profile_path(name))
        except ProfileError:
            continue
        for proc in data["processes"]:
            if proc["kind"] == "parsec" and proc["benchmark"] not in out:
                out.append(proc["benchmark"])
    return out


def _tree_in(folder):
    """The PARSEC tree at or one level below folder (bin/parsecmgmt and pkgs/), or None."""
    folder = Path(folder)
    for cand in [folder, *sorted(p for p in folder.iterdir() if p.is_dir())] if folder.is_dir() else []:
        if (cand / "bin" / "parsecmgmt").is_file() and (cand / "pkgs").is_dir():
            return cand.resolve()
    return None


def unpack(tarballs, into):
    """Unpack each tarball into `into` (the release's archives all hold parsec-3.0/...)."""
    into = Path(into)
    into.mkdir(parents=True, exist_ok=True)
    for tb in tarballs:
        print(f"unpacking {tb} into {into} ...", flush=True)
        try:
            with tarfile.open(tb, "r:*") as tar:
                parsec.extract_all(tar, into, "tar")
        except (tarfile.TarError, OSError) as e:
            raise PrepareError(f"{tb}: cannot unpack: {e}") from None


def first_error(output):
    """The line a user needs from a failed build: the first that reads as an error."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    return next((ln for ln in lines if _ERROR.search(ln) and "[PARSEC] Error" not in ln),
                next((ln for ln in lines if _ERROR.search(ln)), lines[-1] if lines else "no output"))


def build(home, benchmark, config, log_dir=LOGS):
    """(ok, detail): build one benchmark with the tree's parsecmgmt, its log kept."""
    pkg = parsec.package_dir(home, benchmark)
    if pkg is None or not (pkg / "parsec").is_dir():
        return False, f"this tree has no benchmark {benchmark}"
    if config in parsec.builds_here(pkg):
        return True, "already built"
    log_dir.mkdir(parents=True, exist_ok=True)
    log = log_dir / f"{benchmark}.{config}.log"
    with open(log, "w") as f:
        r = subprocess.run([str(home / "bin" / "parsecmgmt"), "-a", "build", "-p", benchmark, "-c", config],
                           stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=home)
    output = log.read_text(errors="replace")
    # parsecmgmt pipes make through tee and may exit 0 after a failure: the build is what counts.
    if r.returncode == 0 and config in parsec.builds_here(pkg):
        return True, f"built (log {log})"
    return False, f"{first_error(output)} (log {log})"


def prepare(sources, config="gcc-pthreads", benchmarks=None, into=None):
    """Returns the exit status: 0 every benchmark built, 1 some failed."""
    sources = [Path(s).expanduser() for s in sources]
    for s in sources:
        if not s.exists():
            raise PrepareError(f"{s}: no such file or folder")
    folders = [s for s in sources if s.is_dir()]
    tarballs = [s for s in sources if s.is_file()]
    if len(folders) > 1:
        raise PrepareError("give one PARSEC folder (and, if you like, input tarballs to unpack into it)")
    for tb in tarballs:
        if not tarfile.is_tarfile(tb):
            raise PrepareError(f"{tb}: not a tar archive (give the PARSEC folder or its release tarball)")
    if folders:
        home = _tree_in(folders[0])
        if home is None:
            raise PrepareError(f"{folders[0]}: no PARSEC tree there (looked for bin/parsecmgmt and pkgs/)")
        if tarballs:  # input archives: they hold parsec-3.0/..., so they go beside the tree
            unpack(tarballs, into or home.parent)
    else:
        target = Path(into) if into else tarballs[0].parent
        unpack(tarballs, target)
        home = _tree_in(target)
        if home is None:
            raise PrepareError(f"{target}: the tarball(s) held no PARSEC tree (looked for bin/parsecmgmt and pkgs/)")
    names = benchmarks or shipped_benchmarks()
    print(f"PARSEC tree: {home}; building {len(names)} benchmark(s) with -c {config}: {', '.join(names)}", flush=True)
    failed = []
    for name in names:
        ok, detail = build(home, name, config)
        pkg = parsec.package_dir(home, name)
        inputs = parsec.inputs_here(pkg) if pkg else []
        print(f"  {'built ' if ok else 'FAILED'} {name:<14} {detail}; inputs here: {', '.join(inputs) or 'none'}",
              flush=True)
        if not ok:
            failed.append(name)
    print(f"{len(names) - len(failed)} of {len(names)} built" + (f"; failed: {', '.join(failed)}" if failed else ""))
    print("To use it, set:")
    print(f"  export PARSEC_HOME={home}")
    if config != parsec.PREFERRED_CONFIGS[0]:
        print(f"  (and build_config: {config} in a profile, if the tree also has a {parsec.PREFERRED_CONFIGS[0]} build)")
    return 1 if failed else 0


def register(sub, usage_error, raw_formatter):
    p = sub.add_parser("parsec", help="prepare a PARSEC 3.0 tree you have for the lab",
                       description=__doc__ + "\n\nexit status: 0 every benchmark built, 1 some failed "
                       "(each named with its first error line), 2 bad input.", formatter_class=raw_formatter)
    p.add_argument("action", choices=["prepare"])
    p.add_argument("sources", nargs="+", metavar="FOLDER-OR-TARBALL",
                   help="the PARSEC folder, or its release tarball(s) (core and input archives)")
    p.add_argument("--config", default=parsec.PREFERRED_CONFIGS[0], help="build configuration [gcc-pthreads]")
    p.add_argument("--benchmarks", help="comma-separated benchmarks [those the shipped profiles use]")
    p.add_argument("--into", help="where tarballs are unpacked [beside the first tarball]")

    def run(args):
        bench = [b.strip() for b in args.benchmarks.split(",") if b.strip()] if args.benchmarks else None
        unknown = [b for b in bench or [] if b not in parsec.BENCHMARKS]
        if unknown:
            raise usage_error(f"unknown benchmark(s) {', '.join(unknown)} (PARSEC's: {', '.join(parsec.PARSEC_BENCHMARKS)})")
        try:
            return prepare(args.sources, args.config, bench, args.into)
        except PrepareError as e:
            raise usage_error(str(e))
    p.set_defaults(func=run)


if __name__ == "__main__":
    sys.exit(prepare(sys.argv[1:]))

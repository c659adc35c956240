"""A small PARSEC 3.0 tree, laid out as the release lays it out, whose benchmarks are real
programs compiled here with cc (PARSEC itself is not on this machine and there is no network).

    home/bin/parsecmgmt                          builds a package (cc on its src/), as -a build does
    home/config/{gcc,gcc-pthreads}.bldconf, {test,simdev,simsmall,simlarge}.runconf
    home/config/packages/parsec.NAME.pkgconf     pkg_group="apps" | "kernels"
    home/pkgs/GROUP/NAME/parsec/INPUT.runconf    run_exec, run_args with ${NTHREADS}
    home/pkgs/GROUP/NAME/inputs/input_INPUT.tar  the input files
    home/pkgs/GROUP/NAME/inst/amd64-linux.CONFIG/bin/NAME   after a build

The benchmark (BENCH_C) is what PARSEC's are to the lab: a threaded program that reads its
input, works, writes its output in the current folder, and fails on a bad input (a missing
file: exit 1, "Unable to open file"; a corrupt one: abort(), as canneal's free() did)."""
import io
import os
import subprocess
import tarfile
from pathlib import Path

from loads import parsec

BENCH_C = r"""
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static long units;
static void *work(void *arg) {
    volatile double x = 1.0;
    for (long i = 0; i < units; i++) x = sqrt(x + (double)i) * 1.0000001;
    (void)arg;
    return NULL;
}
int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: %s NTHREADS INPUT OUTPUT\n", argv[0]); return 2; }
    int n = atoi(argv[1]);
    FILE *in = fopen(argv[2], "r");
    if (!in) { fprintf(stderr, "ERROR: Unable to open file %s.\n", argv[2]); return 1; }
    char word[64] = "";
    if (fscanf(in, "%63s %ld", word, &units) != 2 || strcmp(word, "work") != 0) {
        fprintf(stderr, "corrupt input %s\n", argv[2]);
        abort();
    }
    fclose(in);
    pthread_t t[64];
    for (int i = 0; i < n && i < 64; i++) pthread_create(&t[i], NULL, work, NULL);
    for (int i = 0; i < n && i < 64; i++) pthread_join(t[i], NULL);
    /* Written whole and renamed: a run stopped by the load's end leaves the previous
       output, never an empty file the tests would misread. */
    char part[4096];
    snprintf(part, sizeof part, "%s.part", argv[3]);
    FILE *out = fopen(part, "w");
    if (!out) { fprintf(stderr, "ERROR: Unable to write %s.\n", argv[3]); return 1; }
    fprintf(out, "threads %d units %ld\n", n, units);
    fclose(out);
    return rename(part, argv[3]) == 0 ? 0 : 1;
}
"""

# parsecmgmt's build action, reduced to what the lab's prepare command relies on: compile
# src/*.c into inst/<plat>.<config>/bin/<name>, print cc's errors and exit 1 when it fails.
PARSECMGMT = r"""#!/bin/bash
while [ -n "$1" ]; do case "$1" in -a) action=$2; shift;; -p) pkg=$2; shift;; -c) conf=$2; shift;; esac; shift; done
home=$(cd "$(dirname "$0")/.." && pwd)
[ "$action" = build ] || { echo "[PARSEC] Error: only build here"; exit 1; }
[ -f "$home/config/$conf.bldconf" ] || { echo "[PARSEC] Error: Cannot find build configuration file '$home/config/$conf.bldconf'."; exit 1; }
group=$(sed -n 's/^pkg_group="\(.*\)"/\1/p' "$home/config/packages/parsec.$pkg.pkgconf")
dir="$home/pkgs/$group/$pkg"
echo "[PARSEC] [========== Building package parsec.$pkg ==========]"
mkdir -p "$dir/obj" && cc -O1 -pthread -o "$dir/obj/$pkg" "$dir"/src/*.c -lm 2>&1 || { echo "[PARSEC] Error: 'make' failed."; exit 1; }
arch=$(uname -m); [ "$arch" = x86_64 ] && arch=amd64
mkdir -p "$dir/inst/$arch-linux.$conf/bin" && cp "$dir/obj/$pkg" "$dir/inst/$arch-linux.$conf/bin/$pkg"
echo "[PARSEC] Done."
"""

RUNCONF = """#!/bin/bash
# {input}.runconf - as PARSEC's: information necessary to run the program
run_exec="bin/{name}"
run_args="${{NTHREADS}} {infile} {outfile}"
{extra}"""


def _tar(path, files):
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def make_tree(root, benchmarks=("blackscholes", "canneal"), built=("blackscholes", "canneal"),
              config="gcc-pthreads", inputs=("test", "simdev"), units=None, broken=(), exports=""):
    """A PARSEC tree under root/parsec-3.0. Each benchmark has runconfs for test, simdev,
    simsmall and simlarge but input archives only for `inputs`; the ones in `built` are
    compiled for `config` (the others can be built by bin/parsecmgmt); the ones in `broken`
    have a source cc rejects. `units` maps an input to the work per run."""
    units = {"test": 1000, "simdev": 200000, "simsmall": 2000000, "simlarge": 5000000, **(units or {})}
    home = Path(root) / "parsec-3.0"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "parsecmgmt").write_text(PARSECMGMT)
    (home / "bin" / "parsecmgmt").chmod(0o755)
    (home / ".parsec_uniquefile").write_text("")
    cfg = home / "config"
    (cfg / "packages").mkdir(parents=True)
    (cfg / "gcc.bldconf").write_text("#!/bin/bash\nexport CC_HOME=/usr\n")
    (cfg / "gcc-pthreads.bldconf").write_text("#!/bin/bash\nsource ${PARSECDIR}/config/gcc.bldconf\n")
    for inp in parsec.INPUTS:
        (cfg / f"{inp}.runconf").write_text(f"#!/bin/bash\n# {inp}: global run configuration\n")
    for name in benchmarks:
        group = "kernels" if name in ("canneal", "dedup", "streamcluster") else "apps"
        (cfg / "packages" / f"parsec.{name}.pkgconf").write_text(
            f'#!/bin/bash\npkg_desc="test benchmark"\npkg_group="{group}"\npkg_aliases="all parsec {group}"\n')
        pkg = home / "pkgs" / group / name
        (pkg / "src").mkdir(parents=True)
        src = BENCH_C if name not in broken else BENCH_C.replace("static long units;", "static long units")
        (pkg / "src" / f"{name}.c").write_text(src)
        for inp in ("test", "simdev", "simsmall", "simlarge"):
            (pkg / "parsec").mkdir(exist_ok=True)
            (pkg / "parsec" / f"{inp}.runconf").write_text(RUNCONF.format(
                input=inp, name=name, infile=f"in_{inp}.txt", outfile="out.txt", extra=exports))
        for inp in inputs:
            _tar(pkg / "inputs" / f"input_{inp}.tar", {f"in_{inp}.txt": f"work {units[inp]}\n",
                                                       "data/readme": "an input folder\n"})
        if name in built:
            r = subprocess.run([str(home / "bin" / "parsecmgmt"), "-a", "build", "-p", name, "-c", config],
                               capture_output=True, text=True, env={**os.environ, "HOSTTYPE": "x86_64"})
            assert r.returncode == 0, r.stdout + r.stderr
    return home


def tree_state(home):
    """Every path under home with its size and time: equal before and after = untouched."""
    out = {}
    for root, dirs, files in os.walk(home):
        for n in dirs + files:
            p = Path(root) / n
            st = p.lstat()
            out[str(p.relative_to(home))] = (st.st_size, st.st_mtime_ns)
    return out

"""Whether the host runs this machine's CPUs near each other or far apart, and waiting for
near before a trial.

On the lab's 2-vCPU VM airprobe's cache-line ping-pong (workflows/machine_speed.py) is
either ~50 ns (the host runs the two vCPUs on cores that share a cache) or 310-335 ns (far
apart), nothing between, for seconds to a minute at a time: on the idle VM 9% of 15 min of
probes were far, in phases of 1.1-13.4 s (median 2.2 s); in a quick reproduction 20% of
the trials started in a far phase (docs/reference-runs.md, "A run at a3d99c9"). The guest cannot
see it otherwise (no steal, no foreign CPU, the chase and multiply chain unchanged), yet a
no-load run, whose threads meet at the GVT barrier every ~0.1 ms, took a median 1.41x its
near siblings when both probes were far (a3d99c9), and in the 6a751fe pair the 70 far
attempts of re-run no-load trials a median 1.16x the run kept (p90 1.58x).

So the runner (workflows/trial.py, --wait-near) probes before a trial until the ping-pong is
near, at most WAIT_MAX_S, and runs a no-load trial again when the probe after it was far.
Loaded trials are kept unless their experiment asks (rerun_far_loaded, `airlab trial
--rerun-far-loaded`): in the 6a751fe pair those that ended far took a median 1.13x (FM),
1.46x (ADM), 1.03x (LADM) their near siblings, but they are long (5-47 s), and on the AMD
host (six quick runs, 3-4 Dec) the kept far loaded runs lasted 8-12 min a run, which
re-running all would add to a 45-minute budget. The next trial after one of them started
far in 36% of cases (98 of 269; any trial's first run: 25%), after one of Fig. 1's in 12 of
30, so a re-run mostly does come back near (measured: 11 of 13 far Fig. 1 runs came back
within two re-runs); but re-running even Fig. 1's and 8's (0.6-1.6 min of a run there)
costs 2.7 min by the far host's estimate, which the 45-minute budget does not have
(docs/workflow.md, "Far vCPU placement"; docs/reference-runs.md, "Far loaded runs re-run").
No quick experiment asks yet.
"Near" is relative to the ping-pong level the host has held on this boot (NearLevel: the
CONFIRM-th lowest probe, in a file the workflow keeps beside the calibration cache, started
from the machine's file of this boot's levels: shared_level_file): on a
machine whose CPUs never move, every probe is near and the wait costs one probe."""
import json
import math
import os
import time
from pathlib import Path

from airbase.atomic import write_json
from workflows import machine_speed

# A probe at least this many times the near level is far: the VM's two levels are 6x
# apart, a near probe's own noise is +-20%.
FAR_RATIO = 3.0
# Far phases on the idle VM lasted 1.1-13.4 s; a longer one is waited out no further (the
# trial runs, and its record says it started far).
WAIT_MAX_S = 15.0
POLL_S = 0.25  # a probe takes ~25 ms: 10% of one CPU while waiting, nothing while not
LEVEL_FILE = "pingpong-near.json"


def pingpong_ns(probe):
    x = probe.get("pingpong_ns") if isinstance(probe, dict) else None
    return x if isinstance(x, (int, float)) and x > 0 else None


def is_far(probe, near_ns, ratio=FAR_RATIO):
    """True when the probe's ping-pong is at least ratio x near_ns; False when either is
    unknown (one CPU, a probe that failed, no level yet)."""
    x = pingpong_ns(probe)
    return bool(x and near_ns and x >= ratio * near_ns)


# The engine's barrier_handoff (docs/interfaces.md): a waiter that was spinning leaves its
# wait 80-130 ns after the round's release when the lab's VM runs the vCPUs near each
# other (ping-pong level ~50 ns), 240-300 ns when far (60 s of 1 s no-load runs at 6dc1221,
# each run's p10-p90 on one side; a run that changed placement midway split between them).
# The threshold sits between the two in ratio: 3.5x the near ping-pong level where one is
# known, else 176 ns; and, where the run's workflow has seen a near hand-off level (its
# runs' median hand-offs, NearLevel), at most 2x that. The ping-pong level alone missed
# far runs when the host's nearest placement was farther than usual: in the b6bf153 pair
# near ping-pong was 118 ns (threshold 413 ns) while hand-offs kept their bands (128 ns
# near, 288-304 ns far; docs/reference-runs.md). Replayed over the kept no-load runs of six
# runs (18c78ef, b2adddc, b6bf153 pairs), the two thresholds together mark 104 of the 108
# that lasted >= 1.3x their configuration's median, the ping-pong one alone 72, at the cost
# of 42 more marked runs in all (~7 re-runs a run). The last bucket (>= 1024 ns) is a
# waiter that yielded, slept or was switched out, which says nothing about placement.
FAR_HANDOFF_PER_NEAR = 3.5
FAR_HANDOFF_NS = 176
FAR_HANDOFF_PER_NEAR_HANDOFF = 2.0
MIN_SPINNING_WAITS = 100  # fewer say nothing (a run of a few rounds, one thread, seq)
# A no-load run with at least this share of far waits is run again (--wait-near): far, a
# no-load run takes up to 1.5x as long, so a quarter of it far moves it by ~10%.
FAR_RERUN_SHARE = 0.25
# ... and from a tenth when the probe after the run found the vCPUs far: the host was moving
# them apart, and a share the same run would show beside near probes as noise marks a far
# phase. Over the twelve quick runs of 5 Dec (706c3f1, e445808, a40aa06, 58275f9; three
# each) the kept no-load runs with a far probe after and a share of 0.10-0.25 took a median
# 1.11x their configuration's median (28 runs; p90 1.37x, up to 1.40x; 9 of the 12 slowest
# kept no-load runs), those with a near probe after and the same shares 1.00x (64 runs; at
# most 1.18x).
# Run A of the 58275f9 pair kept such a Fig. 1 baseline (22%, 1.30x), and its block's
# loaded run read a slowdown of 1.59 against 1.94-2.25 in the other blocks.
FAR_AFTER_SHARE = 0.10
# Some configurations see slow hand-offs in every run: on a Xeon host whose probes were never
# far (the a185202 pair) the hand-offs had a second band at 384-480 ns; every no-load ADM run
# had 30-42% of its waits past the threshold, every EPG-4000 one 45-65% (FM at EPG 0: ~4%),
# and each was run three times, 54 and 46 re-runs in the two runs. So a run is judged against
# the lowest share its configuration showed earlier on this boot in runs whose probes before
# and after were near (NearLevel.usual_share): the host's far phases move a configuration's
# share, the configuration's own barrier does not. Why some have a share of their own: the
# longer a waiter spins, the slower it sees the release on that host (0.07-0.31 of hand-offs
# >= 288 ns after 80 us waits, 0.97-1.00 after 4 ms, with or without PAUSE;
# engine/bench/handoff_after_wait.c), and those configurations wait longer: EPG-4000 rounds
# are ~4 ms of work, no-load ADM's 131-139 us against FM's 76-95 us (run A of the pair).


def far_share_limit(far_after):
    """The share of far waits from which a run counts as far: lower when the probe after it
    found the vCPUs far (FAR_AFTER_SHARE) than when it found them near (FAR_RERUN_SHARE)."""
    return FAR_AFTER_SHARE if far_after else FAR_RERUN_SHARE


def ran_far(far_share_, far_after):
    """Whether a run counts as far: from its share of far waits (against far_share_limit),
    else (too few waits, no level) from the probe after it."""
    return far_share_ >= far_share_limit(far_after) if far_share_ is not None else bool(far_after)


def _spinning(handoff):
    """A run's spinning barrier waits per bucket, or None when it has too few of them."""
    if not isinstance(handoff, dict) or not handoff.get("counts") or not handoff.get("bucket_ns"):
        return None
    spinning = handoff["counts"][:-1]
    return spinning if sum(spinning) >= MIN_SPINNING_WAITS else None


def median_handoff_ns(handoff):
    """The middle of the bucket holding a run's median spinning hand-off, or None."""
    spinning = _spinning(handoff)
    if spinning is None:
        return None
    n, seen = sum(spinning), 0
    for i, count in enumerate(spinning):
        seen += count
        if 2 * seen >= n:
            return (i + 0.5) * handoff["bucket_ns"]


def far_share(handoff, near_ns=None, near_handoff_ns=None):
    """The share of a run's spinning barrier waits that saw the release at far-placed speed
    (the engine JSON's barrier_handoff; near_ns: the NearLevel's ping-pong, near_handoff_ns:
    its hand-off level, if known), or None when the run has too few of them."""
    spinning = _spinning(handoff)
    if spinning is None:
        return None
    n = sum(spinning)
    threshold = FAR_HANDOFF_PER_NEAR * near_ns if near_ns else FAR_HANDOFF_NS
    if near_handoff_ns:
        threshold = min(threshold, FAR_HANDOFF_PER_NEAR_HANDOFF * near_handoff_ns)
    first_far = math.ceil(threshold / handoff["bucket_ns"])  # the first bucket that starts at or above it
    return round(sum(spinning[first_far:]) / n, 4)


def far_reruns(noise):
    """How many of a trial's re-runs (its noise.attempts but the last) were made because the
    run ended far, not because other work disturbed it."""
    return sum(1 for a in (noise.get("attempts") or [])[:-1]
               if a.get("ran_far", a.get("far_after")) and not a.get("disturbed"))


def _boot_id():
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None


# The levels are this boot's, not one workflow's. A workflow knows nothing before its first
# probes, and one that starts in a far phase learns the far level as near and judges every
# run of that phase near. Run B of the 9e64477 pair (`make reproduce-again`: a new results
# folder) started in a far phase and held it for near for ~100 s: its level was 332 ns
# where the host's near is 49, the hand-off level 296 ns; its first three calibrations ran
# at 0.73-0.83x the speed its
# trials ran at later, so their end times were 18-29% short (runs of 2.04-2.5 s against a
# 2.9 s target), and the first block's no-load runs at remote 0 and 0.1 ran far (1.2-1.4x
# their repetitions) with far shares of 0.002-0.004. Run A of the cae9f4d pair (a fresh
# clone) the same for 28 s. Both ran on a boot where earlier workflows had held the near
# level for hours. So the runners also note their probes in a file of the machine's
# (shared_level_file), and a workflow whose own file has no level yet starts from it. Only
# values the runners measured go there (a level written into a workflow's own file, as the
# tests do, is not shared), and only for SHARED_MAX_AGE_S: a VM moved to another host
# without a reboot keeps its boot id.
SHARED_LEVEL_ENV = "AIRLAB_PLACEMENT_FILE"
SHARED_MAX_AGE_S = 6 * 3600


def shared_level_file():
    """The machine's file of near levels: $AIRLAB_PLACEMENT_FILE (empty: none), else
    $XDG_CACHE_HOME/airlab/placement-levels.json (~/.cache by default)."""
    p = os.environ.get(SHARED_LEVEL_ENV)
    if p is not None:
        return Path(p) if p.strip() else None
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "airlab" / "placement-levels.json"


# The near levels are the CONFIRM-th lowest value seen, not the lowest: one probe can read
# far below the host's usual near placement. In run A of the c0399cb pair (another host:
# ping-pong 103-194 ns, no bimodal phases) a single probe read 39 ns 13 minutes in; from then
# every usual probe (>= 3x 39) was far and every run's hand-offs (threshold 3.5x 39 = 136 ns)
# too: 118 trials waited 242 s, 126 no-load runs were re-run, 63 of 114 no-load and 95 of 156
# loaded runs were marked far (their walls: a median 1.00x their configuration's), and the run
# took 48 minutes against run B's 33 (docs/reference-runs.md, "The pair at c0399cb").
CONFIRM = 5


class NearLevel:
    """The near ping-pong level of this machine since it booted (a reboot may land a VM on
    another host), and beside it the near barrier hand-off level (runs' median hand-offs),
    kept in `path` so every trial of a workflow shares them, and with `shared` (the
    machine's file) started from the levels earlier workflows saw on this boot. Each level is
    the CONFIRM-th lowest value seen (the highest while fewer were seen): a level the host
    held for a while, not one probe's reading."""

    def __init__(self, path, shared=None):
        self.path = Path(path)
        self.shared = Path(shared) if shared else None  # the machine's file (shared_level_file)
        self.boot = _boot_id()
        self.held = {}  # the lowest values this runner saw, also where it could not keep them in its file

    def _read(self, path):
        """A level file's contents if written since this boot, else {}."""
        try:
            d = json.loads(path.read_text())
        except (OSError, ValueError):
            return {}
        return d if isinstance(d, dict) and d.get("boot_id") == self.boot else {}

    def _same_boot(self):
        return self._read(self.path)

    def _machine(self):
        """The machine's file's contents if written on this boot in the last
        SHARED_MAX_AGE_S, else {}."""
        if self.shared is None:
            return {}
        d = self._read(self.shared)
        fresh = isinstance(d.get("updated_unix"), (int, float)) and time.time() - d["updated_unix"] <= SHARED_MAX_AGE_S
        return d if fresh else {}

    def _shared(self, key):
        return self._values(self._machine(), key)

    def _share(self, key, found):
        """Add values this runner measured to the machine's file (never the seeds it read
        from there: a value counted twice would make one probe a level). A file that aged
        out starts over from them: it is written only when its levels change."""
        if self.shared is None:
            return
        d = self._machine()
        lowest = self._values(d, key)
        new = sorted(lowest + found)[:CONFIRM]
        if new != lowest:
            # a failed write costs the next workflow its head start, not this one anything
            self._keep(self.shared, d, key, new)

    def _keep(self, path, d, key, lowest):
        """Write a level file: its contents `d` with `key`'s lowest values and level; a
        failed write is left to the caller's next read."""
        try:
            write_json(path, {**d, key: lowest[-1], f"{key}_lowest": lowest, "boot_id": self.boot,
                              "host": os.uname().nodename, "updated_unix": time.time()})
        except OSError:
            pass

    @staticmethod
    def _values(d, key):
        vs = d.get(f"{key}_lowest")
        return sorted(x for x in vs if isinstance(x, (int, float)) and x > 0) if isinstance(vs, list) else []

    def get(self):
        lowest = (self._values(self._same_boot(), "pingpong_ns") or self.held.get("pingpong_ns")
                  or self._shared("pingpong_ns"))
        return lowest[-1] if lowest else None

    def _lower(self, key, found):
        """Add `found` (numbers; falsy ones are skipped) to the lowest values under `key`,
        keep them in the file, and return the level (the highest of the lowest CONFIRM)."""
        d = self._same_boot()
        own = self._values(d, key) or self.held.get(key)
        lowest = own or self._shared(key)
        found = [x for x in found if x]
        if found:
            self._share(key, found)
            new = sorted(lowest + found)[:CONFIRM]
            # A seeded level is written too: from then on the workflow holds it in its own
            # file, whatever becomes of the machine's (it ages out after SHARED_MAX_AGE_S).
            if new != lowest or not own:
                # an unwritable folder costs the next trials the level, not this one its run
                self._keep(self.path, d, key, new)
            lowest = new
        self.held[key] = lowest
        return lowest[-1] if lowest else None

    def note(self, *probes):
        """Note these probes' ping-pongs in the near level; returns the level."""
        return self._lower("pingpong_ns", map(pingpong_ns, probes))

    def note_handoff(self, handoff):
        """Note this run's median spinning hand-off (engine JSON's barrier_handoff) in the near
        hand-off level; returns the level."""
        return self._lower("handoff_ns", [median_handoff_ns(handoff)])

    def far(self, probe):
        """Note this probe in the level, then whether it is far from it."""
        return is_far(probe, self.note(probe))

    def usual_share(self, config, share, probed_near):
        """The lowest far share that runs of this configuration (`config`: a string naming the
        engine's options, the profile and the setup) showed on this boot before this one with
        near probes on both sides, or None before the first; then note this one if probed_near."""
        d = self._same_boot()
        usual = dict(d.get("far_share_usual") or self.held.get("far_share_usual") or {})
        before = usual.get(config)
        if share is not None and probed_near and (before is None or share < before):
            usual[config] = share
            try:
                write_json(self.path, {**d, "far_share_usual": usual, "boot_id": self.boot,
                                       "host": os.uname().nodename, "updated_unix": time.time()})
            except OSError:
                pass  # as in _lower: this runner still holds it
        self.held["far_share_usual"] = usual
        return before if isinstance(before, (int, float)) else None

    def judge(self, handoff, probe_after, config=None, started_far=False):
        """A finished run (a trial's, a calibration pilot's) noted in both levels and judged:
        {far_share, near_handoff_ns, far_after, ran_far, usual_far_share}. Its barrier
        hand-offs decide where it has enough of them, else the probe after it (ran_far). With
        `config`, a run is far when its share exceeds by FAR_RERUN_SHARE the lowest share its
        configuration showed earlier on this boot (usual_far_share; the share alone before
        one): some configurations always see slow hand-offs, which is not placement. A run with
        a far probe before or after it is judged by its share alone, and with a far probe
        after it from FAR_AFTER_SHARE (far_share_limit)."""
        near_ns = self.note(probe_after)
        near_handoff_ns = self.note_handoff(handoff)
        share = far_share(handoff, near_ns, near_handoff_ns)
        after = is_far(probe_after, near_ns)
        usual = (self.usual_share(config, share, probed_near=not (started_far or after))
                 if config is not None else None)
        # The usual share excuses slow hand-offs a configuration shows while the host keeps
        # its vCPUs near. When a probe says the host placed them far, it excuses nothing: in
        # the 6112a12 pair a no-load ADM run's first attempt had near probes on both sides but
        # 99.7% of its waits far (7.4 s), became its configuration's usual share, and the
        # re-run, 100% far with a far probe after it, was kept as near at 8.1 s, 2.8x its
        # repetitions (docs/reference-runs.md).
        excused = 0.0 if (after or started_far) else (usual or 0.0)
        beyond = None if share is None else round(share - excused, 4)
        return {"far_share": share, "near_handoff_ns": near_handoff_ns, "far_after": after,
                "ran_far": ran_far(beyond, after), "usual_far_share": usual}


def wait_until_near(level, probe=machine_speed.probe, max_wait_s=WAIT_MAX_S, poll_s=POLL_S,
                    sleep=time.sleep, clock=time.monotonic):
    """Probe until the ping-pong is near `level` (a NearLevel) or max_wait_s has passed.
    Returns (the last probe, {waited_s, probes, far: bool (still far when the wait ended),
    near_ns, max_s}); the last probe is the trial's before-probe."""
    t0 = clock()
    n = 0
    while True:
        p = probe()
        n += 1
        near_ns = level.note(p)
        far = is_far(p, near_ns)
        waited = clock() - t0
        if not far or waited >= max_wait_s:
            return p, {"waited_s": round(waited, 3), "probes": n, "far": far, "near_ns": near_ns,
                       "max_s": max_wait_s}
        sleep(poll_s)

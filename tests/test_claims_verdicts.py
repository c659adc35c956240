"""Every declared claim (configs/claims.yaml) judged on synthetic tables built to come out
agrees, differs and inconclusive, and inconclusive from a single repetition. Each builder
below makes one experiment's table in the aggregate's columns, with the claim's statistic
per repetition set to given values (loaded and no-load runs paired by rep), beside rows
the claim's filters must leave out (other remote shares, modes, load counts)."""
import csv
import json

import pytest

from analysis import claims
from analysis.aggregate import COLUMNS
from analysis.claim_kinds import TESTS

DOC = claims.load_claims()
BY_ID = {c["id"]: c for c in DOC["claims"]}


def R(**kw):
    r = {c: "" for c in COLUMNS}
    r.update(status="ok", baseline="0", setup="cfs", threads="2", cores="2", model="phold", stand_in="0")
    r.update({k: str(v) for k, v in kw.items()})
    return r


def outcome_values(test, outcome, n=3):
    """Per-repetition values whose 95% t interval passes, fails or straddles the test."""
    (name, arg), = test.items()
    if name == "within":
        v, t = arg["value"], arg["tolerance"]
        vals = {"agrees": [v * 0.999, v, v * 1.001], "differs": [v * (1 + 3 * t)] * 2 + [v * (1 + 3.1 * t)],
                "inconclusive": [v * (1 + t) * 0.9, v * (1 + t) * 1.1, v * (1 + t)]}[outcome]
    else:
        x, s = arg, (1 if name == "greater_than" else -1)
        vals = {"agrees": [x + s * 0.5, x + s * 0.55, x + s * 0.6], "differs": [x - s * 0.5, x - s * 0.45, x - s * 0.55],
                "inconclusive": [x - 0.3, x + 0.3, x + 0.05]}[outcome]
    return vals[:n]


# ---- one builder per claim: (values at the deciding level, values elsewhere) -> tables ---
# Returns {experiment: rows} and, for timeline claims, {experiment: {trial: record}}.

def loaded_vs_base(exp, levels, v, ok, level_col, loaded, base, pred=1.0, wall_base=1.0):
    """Loaded rows whose paired slowdown over pred is the value, and their no-load rows."""
    rows = []
    for lv in levels:
        vals = v if lv == levels[-1] else ok
        for r, x in enumerate(vals):
            rows.append(R(rep=r, **{level_col: lv}, **loaded, wall_s=x * pred * wall_base, pred_eq1=pred))
            rows.append(R(rep=r, **{level_col: lv}, **base, wall_s=wall_base))
    return {exp: rows}


def b_fm_one_load(v, ok):
    t = loaded_vs_base("fig01-fm-slowdown", ["0.05", "0.1", "0.2", "0.4"], v, ok, "remote",
                       dict(mode="fm", profile="cpu-1", n_loads="1.0"), dict(mode="fm", profile="none", n_loads="0.0"),
                       pred=1.5)
    # left out: remote 0, two loads
    t["fig01-fm-slowdown"] += [R(rep=r, mode="fm", profile="cpu-1", n_loads="1.0", remote="0", wall_s=1.5, pred_eq1=1.5)
                               for r in range(3)]
    t["fig01-fm-slowdown"] += [R(rep=r, mode="fm", profile="cpu-1-x2", n_loads="2.0", remote="0.4", wall_s=0.1,
                                 pred_eq1=2) for r in range(3)]
    return t


def b_fm_zero_remote(v, ok):
    t = loaded_vs_base("fig01-fm-slowdown", ["0"], v, ok, "remote", dict(mode="fm", profile="cpu-1", n_loads="1.0"),
                       dict(mode="fm", profile="none", n_loads="0.0"), pred=1.5, wall_base=2.0)
    t["fig01-fm-slowdown"] += [R(rep=r, mode="fm", profile="cpu-1", n_loads="1.0", remote="0.4", wall_s=9, pred_eq1=1.5)
                               for r in range(3)]
    return t


def b_opt_vs_cons(v, ok):
    rows = []
    for n in ("1.0", "2.0"):
        vals = v if n == "2.0" else ok
        for r, x in enumerate(vals):
            rows += [R(rep=r, sync="optimistic", mode="fm", profile="cpu-1", n_loads=n, wall_s=2.0 * x),
                     R(rep=r, sync="conservative", mode="fm", profile="cpu-1", n_loads=n, wall_s=4.0)]
    for r in range(len(v)):
        rows += [R(rep=r, sync="optimistic", mode="fm", profile="none", n_loads="0.0", wall_s=1.0),
                 R(rep=r, sync="conservative", mode="fm", profile="none", n_loads="0.0", wall_s=2.0)]
    return {"fig03-optimistic-vs-conservative": rows}


def b_adm_threshold(v, ok):
    rows = []
    for r, x in enumerate(v):
        rows += [R(rep=r, mode="adm", profile="cpu-1", apte_threshold=th, wall_s=w)
                 for th, w in (("1.5", 1.3), ("3", 1.0), ("8", 1.1), ("12", 2.0), ("5.4", x))]
        rows.append(R(rep=r, mode="adm", profile="none", apte_threshold="5.4", wall_s=0.1))  # no load: left out
    return {"fig04-adm-threshold": rows}


def b_adm_efficiency(v, ok):
    rows = []
    for rem in ("0.05", "0.4"):
        vals = v if rem == "0.4" else ok
        for r, x in enumerate(vals):
            rows += [R(rep=r, mode="adm", profile="cpu-1", remote=rem, efficiency=x, wall_s=1),
                     R(rep=r, mode="dm", profile="cpu-1", remote=rem, efficiency=0.2, wall_s=1)]
    return {"fig05-06-fm-dm-adm": rows}


def two_modes(exp, of, to, levels, v, ok, level_col="remote", other=None, **common):
    """Rows of mode `of` with wall = value and of mode `to` with wall 1 at each level."""
    rows = []
    for lv in levels:
        vals = v if lv == levels[-1] else ok
        for r, x in enumerate(vals):
            rows += [R(rep=r, mode=of, **{level_col: lv}, **common, wall_s=x),
                     R(rep=r, mode=to, **{level_col: lv}, **common, wall_s=1.0)]
            if other:
                rows.append(R(rep=r, mode=other, **{level_col: lv}, **common, wall_s=0.01))
    return {exp: rows}


def b_ladm_overhead(v, ok):
    return two_modes("fig07-no-load", "ladm", "fm", ["0.05", "0.2"], v, ok, other="adm", profile="none")


def b_ladm_vs_adm_noload(v, ok):
    return two_modes("fig07-no-load", "adm", "ladm", ["0.05"], v, ok, other="fm", profile="none")


def b_ladm_vs_fm_one_load(v, ok):
    t = two_modes("fig08-one-load", "fm", "ladm", ["0.2", "0.4"], v, ok, other="adm", profile="cpu-1")
    t["fig08-one-load"] += [R(rep=r, mode="fm", remote="0.05", profile="cpu-1", wall_s=0.01) for r in range(3)]
    return t


def b_ladm_vs_adm_one_load(v, ok):
    t = two_modes("fig08-one-load", "adm", "ladm", ["0.2", "0.4"], v, ok, other="fm", profile="cpu-1")
    t["fig08-one-load"] += [R(rep=r, mode="adm", remote="0.05", profile="cpu-1", wall_s=0.01) for r in range(3)]
    return t


def b_cache_misses(v, ok):
    rows = []
    for r, x in enumerate(v):
        rows += [R(rep=r, mode="adm", profile="cpu-1", cache_misses=x * 1e6, locality=0.5, wall_s=1),
                 R(rep=r, mode="ladm", profile="cpu-1", cache_misses=1e6, locality=0.1, wall_s=1),
                 R(rep=r, mode="adm", profile="none", cache_misses=1, wall_s=1)]
    return {"fig09-locality": rows}


def b_pi_rap_best(v, ok):
    rows = []
    for r, x in enumerate(v):
        rows += [R(rep=r, mode="ladm", profile="cpu-1", detector=d, reactivation=re_, wall_s=w)
                 for d, re_, w in (("apte", "pr", 3.0), ("apte", "rap", 1.2), ("pi", "pr", 1.0), ("pi", "rap", x),
                                   ("rq", "pr", 0.1), ("rq", "rap", 0.2))]
    return {"fig10-detectors": rows}


def timeline_record(tid, gap_share, rep, detector, reactivation):
    """A two-thread run on two cores beside one load from 0 s: the ideal is 1 active thread;
    the run has 2 (a gap of 1) in gap_share of the 100 loaded samples."""
    k = round(gap_share * 100)
    return {"status": "ok", "trial": {"id": tid, "rep": rep},
            "engine": {"config": {"threads": 2, "detector": detector, "reactivation": reactivation}},
            "machine": {"cores": 2},
            "loads": [{"start_s": 0.0, "stop_s": 1.0, "threads": 1}],
            "timeline": [{"t_s": i / 100, "active_threads": 2 if i < k else 1} for i in range(100)]
            + [{"t_s": 1.0 + i / 100, "active_threads": 2} for i in range(50)]}  # after the load: not counted


def b_convergence(v, ok):
    rows, recs = [], {}
    for r, x in enumerate(v):
        for d, re_, gap in (("apte", "pr", max(x, 0)), ("pi", "rap", max(-x, 0)), ("pi", "pr", 0.9)):
            tid = f"{d}-{re_}-rep{r}"
            rows.append(R(rep=r, trial=tid, experiment="fig11-12-active-threads", mode="ladm",
                          profile="cpu-timevarying", detector=d, reactivation=re_, wall_s=1))
            recs[tid] = timeline_record(tid, gap, r, d, re_)
    return {"fig11-12-active-threads": rows}, {"fig11-12-active-threads": recs}


def b_epg(v1, v2):
    """FM / LADM time at each EPG (part 1: v1 at the highest) and LADM's slowdown at the
    highest EPG over the lowest (part 2: v2)."""
    rows = []
    for epg in ("0", "1000"):
        p1 = v1 if epg == "1000" else outcome_values({"greater_than": 1}, "agrees", len(v1))
        for r in range(len(v1)):
            base = 0.5 if epg == "0" else 1 / (2 * v2[r])
            rows += [R(rep=r, epg=epg, mode="fm", profile="cpu-1", wall_s=p1[r], pred_eq1=1),
                     R(rep=r, epg=epg, mode="ladm", profile="cpu-1", wall_s=1.0, pred_eq1=1),
                     R(rep=r, epg=epg, mode="ladm", profile="none", wall_s=base),
                     R(rep=r, epg=epg, mode="fm", profile="none", wall_s=1.0)]
    return {"fig13-14-epg": rows}


def b_pcs(v, ok):
    rows = []
    for lp, prof, vals in (("1", "cpu-1", v), ("2", "cpu-1-x2", [0.1] * len(v))):  # 5*2/8 = 1.25: 1 load
        for r, x in enumerate(vals):
            rows += [R(rep=r, model="pcs", mode="fm", profile=prof, load_processes=lp, wall_s=x),
                     R(rep=r, model="pcs", mode="ladm", profile=prof, load_processes=lp, wall_s=1.0)]
    for r in range(len(v)):
        rows.append(R(rep=r, model="pcs", mode="fm", profile="none", load_processes="0", wall_s=0.01))
    return {"fig15-pcs": rows}


def b_onoff_ctp(v, ok):
    t = two_modes("fig16-onoff-ctp", "fm", "ladm", ["10", "1000"], v, ok, level_col="ctp_us", profile="onoff")
    t["fig16-onoff-ctp"] += [R(rep=r, mode="fm", profile="none", wall_s=0.01) for r in range(3)]
    return t


def b_onoff_loads(v, ok):
    rows = []
    for lp, vals in (("1", v), ("2", [0.1] * len(v)), ("3", [0.1] * len(v))):
        for r, x in enumerate(vals):
            rows += [R(rep=r, mode="fm", profile="onoff-ctp1000", ctp_us="1000", load_processes=lp, wall_s=x),
                     R(rep=r, mode="ladm", profile="onoff-ctp1000", ctp_us="1000", load_processes=lp, wall_s=1.0)]
    return {"fig17-onoff-loads": rows}


def gang_rows(profiles, vals_of, n_loads, col="wall_s"):
    rows = []
    for prof in profiles:
        for r, x in enumerate(vals_of(prof)):
            rows += [R(rep=r, mode="fm", setup="gang", profile=prof, n_loads=n_loads, **{col: x}),
                     R(rep=r, mode="ladm", setup="cfs", profile=prof, n_loads=n_loads, **{col: 1.0}),
                     R(rep=r, mode="ladm", setup="gang", profile=prof, n_loads=n_loads, **{col: 0.01}),
                     R(rep=r, mode="fm", setup="cfs", profile="none", n_loads="0.0", **{col: 0.01})]
    return rows


def b_gang_one_thread(v, ok):
    rows = gang_rows(["parsec-blackscholes", "parsec-x264"], lambda p: v if p == "parsec-x264" else ok, "1.0")
    rows += gang_rows(["parsec-canneal"], lambda p: [0.1] * len(v), "2.0")  # four threads: Fig. 19's
    return {"fig18-19-parsec-gang": rows}


def b_barrier_wait_yield_collapse(v, ok, load_per_core=True):
    """FM's paired slowdown with a yielding barrier = v times the spinning one's (1.0), at a
    load per core (cores=2: n_loads 2); one load gets `ok`, and LADM rows are left out."""
    rows = []
    levels = ["1.0", "2.0"] if load_per_core else ["1.0"]
    for n in levels:
        vals = v if n == "2.0" else ok
        for r, x in enumerate(vals):
            for wait, wall in (("yield", x * 2.0), ("spin", 2.0)):
                rows.append(R(rep=r, mode="fm", barrier_wait=wait, profile="cpu-1", n_loads=n, wall_s=wall))
                rows.append(R(rep=r, mode="fm", barrier_wait=wait, profile="none", n_loads="0.0", wall_s=1.0))
            rows.append(R(rep=r, mode="ladm", barrier_wait="yield", profile="cpu-1", n_loads=n, wall_s=0.1))
    return {"beyond-barrier-wait": rows}


def b_gang_io_bound(v1, v2):
    ok1 = outcome_values({"greater_than": 1}, "agrees", len(v1))
    rows = gang_rows(["parsec-blackscholes", "parsec-canneal"], lambda p: v1 if p == "parsec-canneal" else ok1, "2.0")
    rows += gang_rows(["parsec-streamcluster"], lambda p: v2, "2.0")
    rows += gang_rows(["parsec-x264"], lambda p: [9.0] * len(v1), "2.0")  # neither I/O-bound nor streamcluster
    return {"fig18-19-parsec-gang": rows}


def b_parsec_side(v, ok):
    rows = gang_rows(["parsec-canneal", "parsec-x264"], lambda p: v if p == "parsec-x264" else ok, "2.0",
                     col="load_slowdown")
    return {"fig18-19-parsec-gang": rows}


SINGLE = {"fm_one_load": b_fm_one_load, "fm_zero_remote": b_fm_zero_remote, "opt_vs_cons": b_opt_vs_cons,
          "adm_threshold": b_adm_threshold, "adm_efficiency": b_adm_efficiency, "ladm_overhead": b_ladm_overhead,
          "ladm_vs_adm_noload": b_ladm_vs_adm_noload, "ladm_vs_fm_one_load": b_ladm_vs_fm_one_load,
          "ladm_vs_adm_one_load": b_ladm_vs_adm_one_load, "cache_misses": b_cache_misses,
          "pi_rap_best": b_pi_rap_best, "convergence": b_convergence, "pcs": b_pcs, "onoff_ctp": b_onoff_ctp,
          "onoff_loads": b_onoff_loads, "gang_one_thread": b_gang_one_thread, "parsec_side": b_parsec_side,
          "barrier_wait_yield_collapse": b_barrier_wait_yield_collapse}
PARTS = {"epg": b_epg, "gang_io_bound": b_gang_io_bound}
OUTCOMES = ("agrees", "differs", "inconclusive")


def judge(tmp_path, built):
    """The summary rows ({id: row}) of the real claims file over the built tables, laid out
    as a run lays them out (results/<scale>/tables/, results/<scale>/trials/)."""
    tables, records = built if isinstance(built, tuple) else (built, {})
    paths = []
    for exp, rows in tables.items():
        p = tmp_path / "results/quick/tables" / f"{exp}.csv"
        p.parent.mkdir(parents=True, exist_ok=True)
        for i, r in enumerate(rows):
            r.setdefault("trial", f"t{i}")
            r["trial"] = r["trial"] or f"t{i}"
            r["experiment"] = exp
        with open(p, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS)
            w.writeheader()
            w.writerows(rows)
        paths.append(p)
    for exp, recs in records.items():
        for tid, rec in recs.items():
            p = tmp_path / "results/quick/trials" / exp / f"{tid}.json"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(json.dumps(rec))
    return {r["id"]: r for r in claims.summarise(DOC, paths)}


def test_every_paper_claim_has_synthetic_cases():
    paper = {c["id"] for c in DOC["claims"] if not c["figure"].startswith("Beyond")}
    assert paper <= set(SINGLE) | set(PARTS) | {"warpiv_table1"} <= set(BY_ID)


@pytest.mark.parametrize("outcome", OUTCOMES)
@pytest.mark.parametrize("cid", sorted(SINGLE))
def test_claim_comes_out_as_built(tmp_path, cid, outcome):
    test = BY_ID[cid]["test"]
    row = judge(tmp_path, SINGLE[cid](outcome_values(test, outcome), outcome_values(test, "agrees")))[cid]
    assert row["verdict"] == outcome, row
    assert row["n"] == "3" and row["interval"] == claims.INTERVAL
    if outcome != "inconclusive":  # the written interval lies wholly on one side of the bound
        (name, arg), = test.items()
        lo, hi = float(row["ci_low"]), float(row["ci_high"])
        assert lo < float(row["value"]) < hi and TESTS[name](lo, hi, arg)[0] == outcome, row


@pytest.mark.parametrize("part", [0, 1])
@pytest.mark.parametrize("outcome", OUTCOMES)
@pytest.mark.parametrize("cid", sorted(PARTS))
def test_claim_of_several_parts_holds_only_if_every_part_does(tmp_path, cid, outcome, part):
    tests = [p["test"] for p in BY_ID[cid]["all_of"]]
    vals = [outcome_values(t, "agrees") for t in tests]
    vals[part] = outcome_values(tests[part], outcome)
    row = judge(tmp_path, PARTS[cid](*vals))[cid]
    assert row["verdict"] == outcome, row


@pytest.mark.parametrize("cid", sorted(SINGLE) + sorted(PARTS))
def test_one_repetition_is_inconclusive(tmp_path, cid):
    if cid in PARTS:
        built = PARTS[cid](*[outcome_values(p["test"], "agrees", 1) for p in BY_ID[cid]["all_of"]])
    else:
        test = BY_ID[cid]["test"]
        built = SINGLE[cid](outcome_values(test, "agrees", 1), outcome_values(test, "agrees", 1))
    row = judge(tmp_path, built)[cid]
    assert row["verdict"] == "inconclusive" and "one repetition" in row["reason"], row


def test_warpiv_is_not_measurable_here_with_the_reason(tmp_path):
    row = judge(tmp_path, {})["warpiv_table1"]
    assert row["verdict"] == "not measurable here" and "export-controlled" in row["reason"]


def test_no_table_is_not_run_and_a_table_of_failures_inconclusive_never_a_blank(tmp_path):
    rows = judge(tmp_path / "a", {})
    assert all(r["verdict"] in claims.VERDICTS for r in rows.values())
    assert {r["verdict"] for i, r in rows.items() if i != "warpiv_table1"} == {"not run at this scale"}
    assert all(r["reason"] for r in rows.values())
    test = BY_ID["pcs"]["test"]
    built = b_pcs(outcome_values(test, "agrees"), outcome_values(test, "agrees"))
    for r in built["fig15-pcs"]:
        r["status"] = "failed"
    row = judge(tmp_path / "b", built)["pcs"]
    assert row["verdict"] == "inconclusive" and "no successful trials" in row["reason"], row


def test_a_level_the_scale_does_not_run_is_not_run_at_this_scale_not_inconclusive(tmp_path):
    """The yield-collapse claim names a load per core; quick runs one load. Judged at one
    load it flipped between two runs (a heavy tail: 1.0x to 7x), so it waits for a scale
    that runs its level; a level that was run and failed stays inconclusive."""
    agrees = outcome_values({"greater_than": 2}, "agrees")
    differs = outcome_values({"greater_than": 2}, "differs")
    row = judge(tmp_path / "a", b_barrier_wait_yield_collapse(differs, agrees, load_per_core=False))
    row = row["barrier_wait_yield_collapse"]
    assert row["verdict"] == "not run at this scale", row
    assert "n_loads equals cores" in row["reason"] and row["n"] == "0"
    failed = b_barrier_wait_yield_collapse(agrees, agrees)
    for r in failed["beyond-barrier-wait"]:
        if r["n_loads"] == "2.0":
            r["status"] = "failed"
    row = judge(tmp_path / "b", failed)["barrier_wait_yield_collapse"]
    assert row["verdict"] == "inconclusive" and row["n"] == "0", row
    # gang_one_thread reads one load thread; a run with only two-thread loads did not run it
    gang = b_gang_one_thread(agrees, agrees)
    gang["fig18-19-parsec-gang"] = [r for r in gang["fig18-19-parsec-gang"] if r["n_loads"] != "1.0"]
    assert judge(tmp_path / "c", gang)["gang_one_thread"]["verdict"] == "not run at this scale"

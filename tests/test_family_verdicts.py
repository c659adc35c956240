"""A claim judged at several levels (every level of `each`, or several parts) differs only
when one level fails at the family's wider interval (analysis/family.py): on synthetic
values, through a real claim's summary row, and as an error rate in simulation."""
import random

from analysis import replication
from analysis.claim_kinds import Sample
from analysis.claims import judge_sample
from analysis.family import family_level, judge_interval
from analysis.stats import mean_ci
from test_claims_verdicts import b_fm_one_load, judge, outcome_values

ABOVE = {"greater_than": 1.5}
# mean 1.40, sd 0.03, n 3: the 95% interval [1.33, 1.47] fails > 1.5; the 98.75% one that
# one of four levels needs reaches 1.55 and does not.
NEAR_FAIL = [1.37, 1.40, 1.43]


def test_the_family_level_shares_the_error_among_the_levels():
    assert family_level(0.95, 1) == 0.95
    assert abs(family_level(0.95, 4) - 0.9875) < 1e-12
    assert family_level(0.95, 0) == 0.95


def test_one_level_differs_as_before_one_of_four_needs_the_wider_interval():
    alone = judge_sample(Sample(NEAR_FAIL), ABOVE)
    assert alone.verdict == "differs", alone
    among = judge_sample(Sample(NEAR_FAIL), ABOVE, family=4)
    assert among.verdict == "inconclusive", among
    assert "98.75%" in among.reason and "4 levels" in among.reason, among.reason
    # the interval shown stays the run's 95% one
    assert (among.lo, among.hi) == (alone.lo, alone.hi)
    # far from the bound one level still makes the claim differ
    assert judge_sample(Sample([1.0, 1.02, 0.98]), ABOVE, family=4).verdict == "differs"
    # and agreeing is judged on the 95% interval, as before
    assert judge_sample(Sample([1.6, 1.62, 1.58]), ABOVE, family=4).verdict == "agrees"


def test_a_real_claim_over_four_remote_levels_is_inconclusive_not_differs(tmp_path):
    row = judge(tmp_path, b_fm_one_load(NEAR_FAIL, outcome_values(ABOVE, "agrees")))["fm_one_load"]
    assert row["verdict"] == "inconclusive", row
    assert "one of 4 levels" in row["reason"], row["reason"]
    # a level far below the bound still decides
    row = judge(tmp_path, b_fm_one_load([1.0, 1.02, 0.98], outcome_values(ABOVE, "agrees")))["fm_one_load"]
    assert row["verdict"] == "differs", row


def _false_differs(rule_family, draws=2000, n=3, m=4):
    """Share of simulated runs of m levels, all truly on the bound (the claim barely true),
    that the rule with `rule_family` levels calls differs."""
    rng, hits = random.Random(7), 0
    for _ in range(draws):
        for _ in range(m):
            vals = [1.5 + 1e-9 + rng.gauss(0, 0.05) for _ in range(n)]
            mean, half, _ = mean_ci(vals, 0.95)
            wide = mean_ci(vals, family_level(0.95, rule_family))[1]
            if judge_interval(mean, half, wide, ABOVE)[0] == "differs":
                hits += 1
                break
    return hits / draws


def test_the_rule_keeps_a_wrong_differs_at_its_one_sided_share_of_five_percent():
    each_alone = _false_differs(1)
    as_family = _false_differs(4)
    assert 0.07 < each_alone < 0.13, each_alone   # 1 - 0.975^4 = 9.6%
    assert as_family < 0.035, as_family             # at most 2.5% (Bonferroni)


def test_a_repeats_odds_follow_the_same_rule():
    alone = replication.verdict_probabilities(NEAR_FAIL, ABOVE, 0.95)
    among = replication.verdict_probabilities(NEAR_FAIL, ABOVE, 0.95, family=4)
    assert among["differs"] < alone["differs"] - 0.1, (alone, among)
    assert abs(sum(among.values()) - 1) < 1e-9
    pairs = replication.paired_runs(NEAR_FAIL, ABOVE, 0.95, 3, draws=500, family=4)
    assert sum(a == "differs" for a, _ in pairs) / 500 < alone["differs"]

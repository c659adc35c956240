"""Judging a claim that is judged at several levels (every level of an `each` column, or
several parts): how sure one level must be to make the whole claim differ.

Such a claim holds only if it holds at every level. So it *agrees* when every level's
interval passes its test, and each level at 95% keeps the chance of a wrong "agrees" at 5%
(an intersection-union test: all of them must be wrong at once). It *differs* as soon as
one level's interval fails, and that is m chances of a wrong "differs" on a claim that is
true everywhere: with m = 5 levels at 95% each, up to 5 x 2.5%. So one level may say
"differs" for the claim only when its interval at 1 - 0.05/m fails (Bonferroni; the first
step of Holm's, which is all an "any level" question uses). A level whose 95% interval
fails but whose wider one does not leaves the claim inconclusive, and the reason says so.
With one level nothing changes.

claims.py judges runs this way and replication.py simulates repeats the same way, so a
run's odds of the same verdict again are the odds of this rule.
"""
from analysis.claim_kinds import TESTS


def family_level(level, m):
    """The interval level at which one of m levels may say `differs` for the claim: the
    error 1 - level shared among the m chances (0.95 over 4 levels: 0.9875)."""
    return 1 - (1 - level) / max(1, m)


def judge_interval(mean, half, family_half, test):
    """(verdict, margin, fails_only_at_95) of one level: `half` is the interval's
    half-width at the run's level (agrees is judged on it), `family_half` the wider one
    at family_level (differs is judged on it)."""
    (name, arg), = test.items()
    verdict, margin = TESTS[name](mean - half, mean + half, arg)
    if verdict == "differs" and family_half > half:
        if TESTS[name](mean - family_half, mean + family_half, arg)[0] != "differs":
            return "inconclusive", margin, True
    return verdict, margin, False

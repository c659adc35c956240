"""How likely a second run of the same size gives a claim the same verdict.

A verdict is a statistic: when a claim's value lies within about a half-width of its bound,
one run's interval clears the bound and the next one's straddles it, and no fixed number
of repetitions prevents that. This module says, per claim, how often a repeat of the run
(as many repetitions, at the same interval level) would reach the verdict this run reached,
so a reader sees which verdicts are solid and which sit on their bound before comparing two
runs.

The model: repetitions are normal with unknown mean and spread. Given this run's n values
(mean m, sd s), the mean and spread are drawn from their posterior under the usual flat
priors (sigma^2 = (n-1) s^2 / chi^2(n-1), mu = m + sigma/sqrt(n) Z), a repeat run of n
values is drawn from them (its mean and sd), and its interval is judged by the claim's own
test. A plug-in estimate (the repeat's mean around m, its half-width this run's) is far too
sure of itself with 3-8 repetitions: in simulation it promised 0.77 where 0.54 of repeats
agreed; this one is calibrated (tests/test_replication.py). Draws are seeded by the values,
so the same table gives the same figure. Several levels or parts combine as verdicts do
(differs if any differs, else inconclusive if any is, else agrees), taken as independent.
A two-look experiment is treated as if its final repetitions had been fixed in advance.
"""
import math
import random

from analysis.claim_kinds import TESTS
from analysis.stats import t_quantile

DRAWS = 4000


def _outcomes(counts, total):
    return {v: counts.get(v, 0) / total for v in ("agrees", "differs", "inconclusive")}


def _spread(values):
    n = len(values)
    m = sum(values) / n
    return n, m, math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1))


def _truth(rng, n, m, s):
    """(mu, sigma) drawn from their posterior given n values of mean m and sd s."""
    sigma = s * math.sqrt((n - 1) / rng.gammavariate((n - 1) / 2, 2)) if s > 0 else 0.0
    return m + sigma / math.sqrt(n) * rng.gauss(0, 1), sigma


def _run_verdict(rng, mu, sigma, size, t, test):
    """The verdict of one run of `size` repetitions drawn from N(mu, sigma), judged with a
    t interval of factor t by `test`."""
    (name, arg), = test.items()
    mean = mu + sigma / math.sqrt(size) * rng.gauss(0, 1)
    sd = sigma * math.sqrt(rng.gammavariate((size - 1) / 2, 2) / (size - 1)) if sigma > 0 else 0.0
    h = t * sd / math.sqrt(size)
    return TESTS[name](mean - h, mean + h, arg)[0]


def verdict_probabilities(values, test, level):
    """{verdict: probability} that a repeat of len(values) repetitions, judged with a
    `level` t interval by `test` ({greater_than: x}, ...), reaches each verdict."""
    n, m, s = _spread(values)
    (name, arg), = test.items()
    t = t_quantile(level, n - 1)
    rng = random.Random(repr((sorted(values), name, repr(arg), level)))
    counts = {}
    for _ in range(DRAWS if s > 0 else 1):
        mu, sigma = _truth(rng, n, m, s)
        verdict = _run_verdict(rng, mu, sigma, n, t, test)
        counts[verdict] = counts.get(verdict, 0) + 1
    return _outcomes(counts, sum(counts.values()))


def paired_runs(values, test, level, size, draws=DRAWS):
    """[(verdict of one run, verdict of another)] of two independent runs of `size`
    repetitions each, for `draws` draws of the truth from the posterior these values give:
    the same truth for both runs, as for two runs on one machine. For planning how many
    repetitions make a verdict recur (analysis/repetition_plan.py)."""
    n, m, s = _spread(values)
    t = t_quantile(level, size - 1)
    rng = random.Random(repr((sorted(values), repr(test), level, size, "paired")))
    out = []
    for _ in range(draws):
        mu, sigma = _truth(rng, n, m, s)
        out.append((_run_verdict(rng, mu, sigma, size, t, test), _run_verdict(rng, mu, sigma, size, t, test)))
    return out


def worst(verdicts):
    """Several levels' verdicts combined as a claim's are: differs if any differs, else
    inconclusive if any is, else agrees."""
    for v in ("differs", "inconclusive"):
        if v in verdicts:
            return v
    return "agrees"


def combine(probabilities):
    """The verdict probabilities of several independent levels or parts, combined as
    verdicts are: differs if any differs, else inconclusive if any is, else agrees."""
    p_all_agree, p_none_differs = 1.0, 1.0
    for p in probabilities:
        p_all_agree *= p["agrees"]
        p_none_differs *= 1 - p["differs"]
    p_differs = 1 - p_none_differs
    return {"agrees": p_all_agree, "differs": p_differs,
            "inconclusive": max(0.0, 1 - p_all_agree - p_differs)}

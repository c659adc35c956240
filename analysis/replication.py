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
test and rule (one of several levels says differs only at the wider interval of
analysis/family.py). A plug-in estimate (the repeat's mean around m, its half-width this
run's) is far too sure of itself with 3-8 repetitions: in simulation it promised 0.77
where 0.54 of repeats agreed; this one is calibrated (tests/test_replication.py). Draws are seeded by the values,
so the same table gives the same figure. Several levels or parts combine as verdicts do
(differs if any differs, else inconclusive if any is, else agrees), taken as independent.
A two-look experiment is treated as if its final repetitions had been fixed in advance.
A repeat here varies as this run's repetitions do: variation between whole runs (on the lab's
Xeon host, the vCPU placement moving a run's no-load baselines) is not in it, so the figure is
optimistic where that is large; analysis/pooled.py applies the same model to run means.
"""
import math
import random

from analysis.family import family_level, judge_interval
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


def _run_verdict(rng, mu, sigma, size, t, test, t_family=None):
    """The verdict of one run of `size` repetitions drawn from N(mu, sigma), judged with a
    t interval of factor t by `test` (differs with factor t_family: analysis/family.py)."""
    mean = mu + sigma / math.sqrt(size) * rng.gauss(0, 1)
    sd = sigma * math.sqrt(rng.gammavariate((size - 1) / 2, 2) / (size - 1)) if sigma > 0 else 0.0
    scale = sd / math.sqrt(size)
    return judge_interval(mean, t * scale, (t_family or t) * scale, test)[0]


def _factors(level, family, size):
    """The t factors of the run's interval and of the family's wider one."""
    return t_quantile(level, size - 1), t_quantile(family_level(level, family), size - 1)


def verdict_probabilities(values, test, level, family=1):
    """{verdict: probability} that a repeat of len(values) repetitions, judged with a
    `level` t interval by `test` ({greater_than: x}, ...) as one of `family` levels of its
    claim, reaches each verdict."""
    n, m, s = _spread(values)
    (name, arg), = test.items()
    t, t_family = _factors(level, family, n)
    seed = (sorted(values), name, repr(arg), level) + ((family,) if family > 1 else ())
    rng = random.Random(repr(seed))
    counts = {}
    for _ in range(DRAWS if s > 0 else 1):
        mu, sigma = _truth(rng, n, m, s)
        verdict = _run_verdict(rng, mu, sigma, n, t, test, t_family)
        counts[verdict] = counts.get(verdict, 0) + 1
    return _outcomes(counts, sum(counts.values()))


def paired_runs(values, test, level, size, draws=DRAWS, family=1):
    """[(verdict of one run, verdict of another)] of two independent runs of `size`
    repetitions each, for `draws` draws of the truth from the posterior these values give:
    the same truth for both runs, as for two runs on one machine. For planning how many
    repetitions make a verdict recur (analysis/repetition_plan.py)."""
    n, m, s = _spread(values)
    t, t_family = _factors(level, family, size)
    seed = (sorted(values), repr(test), level, size, "paired") + ((family,) if family > 1 else ())
    rng = random.Random(repr(seed))
    out = []
    for _ in range(draws):
        mu, sigma = _truth(rng, n, m, s)
        out.append((_run_verdict(rng, mu, sigma, size, t, test, t_family),
                    _run_verdict(rng, mu, sigma, size, t, test, t_family)))
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

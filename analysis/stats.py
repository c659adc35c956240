"""Reading the lab's tables: their rows and cells, and the mean and confidence interval over
repetitions (Student's t, its quantiles computed here: no SciPy needed)."""
import csv
import functools
import math


def _betacf(a, b, x):
    """The continued fraction of the regularized incomplete beta function (modified Lentz)."""
    tiny, c, d = 1e-300, 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-14:
            break
    return h


def _incomplete_beta(a, b, x):
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1 - x) / b


def t_cdf(t, df):
    """P(T <= t) for Student's t with df degrees of freedom."""
    tail = 0.5 * _incomplete_beta(df / 2, 0.5, df / (df + t * t))
    return 1 - tail if t >= 0 else tail


@functools.lru_cache(maxsize=None)  # 100 bisections each: the simulations ask for a few (level, df) thousands of times
def t_quantile(level, df):
    """The two-sided `level` quantile of Student's t: t with P(|T| <= t) = level (4.303 for
    0.95 and 2 degrees of freedom)."""
    p, lo, hi = 0.5 + level / 2, 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2
    for _ in range(100):  # bisection: t_cdf is monotone; 100 halvings reach float precision
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_cdf(mid, df) < p else (lo, mid)
    return (lo + hi) / 2


def mean_ci(values, level=0.95):
    """(mean, half-width of the `level` CI, n). One value: CI 0 (no spread can be estimated)."""
    vals = [v for v in values if v is not None and not math.isnan(v)]
    n = len(vals)
    if n == 0:
        return float("nan"), float("nan"), 0
    m = sum(vals) / n
    if n == 1:
        return m, 0.0, 1
    sd = math.sqrt(sum((v - m) ** 2 for v in vals) / (n - 1))
    return m, t_quantile(level, n - 1) * sd / math.sqrt(n), n


def number(v):
    """A table cell as a float, or None for '' and text (CSV cells are all strings)."""
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def level_key(v):
    """Sort order of a column's levels (sweep values, repetition blocks): numbers by value,
    then text."""
    return (number(v) is None, number(v) or 0.0, str(v))


def read_rows(path):
    """A table's rows as dicts of strings (results/<scale>/tables/*.csv)."""
    with open(path) as f:
        return list(csv.DictReader(f))


def series_of(r, series):
    """A row's series value; 'mode+setup' combines sweep variables (e.g. FM+gang vs LADM+cfs)."""
    if not series:
        return ""
    return "+".join(str(r.get(part, "")) for part in series.split("+"))

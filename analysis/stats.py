"""Reading the lab's tables: their rows and cells, and the mean and 95% confidence interval
over repetitions (Student's t; no SciPy needed)."""
import csv
import math

# Two-sided 95% t quantiles for 1..30 degrees of freedom; beyond, the normal 1.96.
_T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
        2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def mean_ci(values):
    """(mean, half-width of the 95% CI, n). One value: CI 0 (no spread can be estimated)."""
    vals = [v for v in values if v is not None and not math.isnan(v)]
    n = len(vals)
    if n == 0:
        return float("nan"), float("nan"), 0
    m = sum(vals) / n
    if n == 1:
        return m, 0.0, 1
    sd = math.sqrt(sum((v - m) ** 2 for v in vals) / (n - 1))
    t = _T95[n - 2] if n - 1 <= len(_T95) else 1.96
    return m, t * sd / math.sqrt(n), n


def number(v):
    """A table cell as a float, or None for '' and text (CSV cells are all strings)."""
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def read_rows(path):
    """A table's rows as dicts of strings (results/<scale>/tables/*.csv)."""
    with open(path) as f:
        return list(csv.DictReader(f))


def series_of(r, series):
    """A row's series value; 'mode+setup' combines sweep variables (e.g. FM+gang vs LADM+cfs)."""
    if not series:
        return ""
    return "+".join(str(r.get(part, "")) for part in series.split("+"))

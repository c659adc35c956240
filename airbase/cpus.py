"""CPU lists as Linux writes them (cpuset.cpus, taskset, a profile's `cpus`)."""


def cpu_list(text):
    """The CPUs of a list such as '0-3,6': {0, 1, 2, 3, 6}."""
    cpus = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus

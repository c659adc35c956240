"""Each cgroup setup asks only for the controllers it needs (cpuset: cpuset; quota, weight:
cpu), so a machine that lacks the other one still runs it. The choice between v2 and v1 is
checked on folders laid out like the kernel's (this VM mounts v1, so v2 cannot be seen for
real here), and the groups themselves are made for real on this machine's interface."""
import os
from pathlib import Path

import pytest

from workflows.setups import cgroups, cpuset, open_setup, quota, weight


def fake_v2(root, controllers):
    """A folder with what detect() reads of a cgroup2 mount: its cgroup.controllers."""
    root.mkdir()
    (root / "cgroup.controllers").write_text(" ".join(controllers) + "\n")
    return root


def fake_v1(root, controllers):
    """A folder with what detect() reads of v1 hierarchies: <controller>/tasks."""
    for c in controllers:
        (root / c).mkdir(parents=True)
        (root / c / "tasks").write_text("")
    return root


def test_setups_ask_only_for_their_controllers():
    assert quota.CONTROLLERS == ("cpu",) and weight.CONTROLLERS == ("cpu",)
    assert cpuset.CONTROLLERS == ("cpuset",)


def test_v2_without_cpuset_still_serves_cpu(tmp_path):
    """A pure v2 machine whose cgroup2 mount has cpu but no cpuset: quota and weight run
    there on v2; cpuset is refused, naming the missing controller."""
    mnt = fake_v2(tmp_path / "v2", ["cpu", "io", "memory", "pids"])
    no_v1 = tmp_path / "no-v1"
    no_v1.mkdir()
    assert cgroups.detect(("cpu",), mounts=[mnt], v1_root=no_v1) == ("v2", None)
    version, why = cgroups.detect(("cpuset",), mounts=[mnt], v1_root=no_v1)
    assert version is None and "without the cpuset controller" in why
    assert cgroups.detect(("cpu", "cpuset"), mounts=[mnt], v1_root=no_v1)[0] is None
    assert cgroups.v2_root(("cpu",), mounts=[mnt]) == (mnt, None)


def test_hybrid_machine_takes_each_controller_where_it_lives(tmp_path):
    """cpu on the cgroup2 mount, cpuset only in v1: each setup finds its own."""
    mnt = fake_v2(tmp_path / "unified", ["cpu"])
    v1 = fake_v1(tmp_path / "v1", ["cpuset"])
    assert cgroups.detect(("cpu",), mounts=[mnt], v1_root=v1) == ("v2", None)
    assert cgroups.detect(("cpuset",), mounts=[mnt], v1_root=v1) == ("v1", None)


def test_v1_without_cpuset_still_serves_cpu(tmp_path):
    v1 = fake_v1(tmp_path / "v1", ["cpu", "cpuacct"])
    assert cgroups.detect(("cpu",), mounts=[], v1_root=v1) == ("v1", None)
    version, why = cgroups.detect(("cpuset",), mounts=[], v1_root=v1)
    assert version is None and "no v1 cpuset hierarchy" in why


@pytest.mark.parametrize("controllers", [("cpu",), ("cpuset",)])
def test_groups_are_made_with_only_the_asked_controllers(controllers):
    """Real groups on this machine: on v1 a directory in the asked hierarchies only, on v2
    only the asked controllers enabled for the roles; all removed afterwards."""
    version, why = cgroups.detect(controllers)
    if not version:
        pytest.skip(why)
    cg = cgroups.LabCgroups(controllers=controllers)
    try:
        cg.create()
        if version == "v1":
            made = {Path(p).relative_to(cgroups.ROOT).parts[0] for p in cg.paths()}
            assert made == set(controllers)
        else:
            enabled = (cg.v2 / cg.name / "cgroup.subtree_control").read_text().split()
            assert set(enabled) == set(controllers)
        if controllers == ("cpu",):  # a setting of the other controller says why it cannot
            with pytest.raises(cgroups.CgroupError, match="without the cpuset controller"):
                cg.set_cpus("loads", "0")
        else:
            with pytest.raises(cgroups.CgroupError, match="without the cpu controller"):
                cg.set_quota("loads", 0.5)
    finally:
        cg.remove()
    assert [g for g in cgroups.leftover_lab_groups() if Path(g).name == cg.name] == []


def test_setup_availability_follows_its_own_controllers():
    """What doctor and the trial runner see: a setup is available exactly when its own
    controllers are (not when both are)."""
    for name, ctrl in (("quota-half", ("cpu",)), ("weight-4to1", ("cpu",)), ("cpuset", ("cpuset",))):
        ok, why = open_setup(name).availability()
        version, reason = cgroups.detect(ctrl)
        if version is None:
            assert not ok and why == reason
        elif name != "cpuset" or len(os.sched_getaffinity(0)) >= 2:
            assert ok, why


def test_every_group_is_registered_before_it_is_made(monkeypatch):
    """Register first, then create: however early an interrupt lands in create() (here: at
    each mkdir in turn), remove() knows every directory that exists and removes it."""
    version, why = cgroups.detect(("cpu",))
    if not version:
        pytest.skip(why)
    real_mkdir = Path.mkdir
    calls = {"n": 0}
    for stop_at in range(1, 4):
        calls["n"] = 0

        def mkdir(self, *a, **kw):
            calls["n"] += 1
            if calls["n"] == stop_at:
                real_mkdir(self, *a, **kw)
                raise KeyboardInterrupt  # the trial's SIGTERM, just after the directory came to be
            return real_mkdir(self, *a, **kw)
        monkeypatch.setattr(Path, "mkdir", mkdir)
        cg = cgroups.LabCgroups(controllers=("cpu",))
        with pytest.raises(KeyboardInterrupt):
            cg.create()
        monkeypatch.setattr(Path, "mkdir", real_mkdir)
        cg.remove()
        assert [g for g in cgroups.leftover_lab_groups() if Path(g).name == cg.name] == [], stop_at

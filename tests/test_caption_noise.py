"""The caption's noise and on-off sentences on hand-made table rows: re-runs for other
work and re-runs for the host's far vCPU placement (--wait-near) are told apart, as are the
kept runs that stayed disturbed or ended far; on-off loads say how they really ran."""
from analysis.caption import noise_sentence


def row(disturbed=0, reruns=0, far_reruns=0, ended_far="", far_share="", ran_far=""):
    return {"disturbed": str(disturbed), "reruns": str(reruns), "far_reruns": str(far_reruns),
            "ended_far": str(ended_far), "far_share": str(far_share), "ran_far": str(ran_far)}


def test_quiet_trials_say_so():
    assert noise_sentence([row(), row(ended_far=0)]) == \
        "Noise: none of the 2 trials was disturbed by other work on the machine."


def test_far_reruns_are_not_called_disturbed():
    text = noise_sentence([row(reruns=1, far_reruns=1), row(reruns=2, far_reruns=2, ended_far=1),
                           row(ended_far=1), row()])
    assert text.startswith("Noise: none of the 4 trials was disturbed")
    assert "2 no-load trial(s) were run again because the host ran the CPUs far apart" in text
    assert "2 kept run(s) ran so" in text


def test_far_reruns_of_loaded_trials_are_counted_as_such():
    """Where an experiment re-runs far loaded runs (rerun_far_loaded) the sentence says how
    many of the far re-runs were loaded."""
    loaded = {**row(reruns=1, far_reruns=1), "profile": "cpu-1"}
    text = noise_sentence([loaded, {**row(reruns=2, far_reruns=2), "profile": "none"}, row()])
    assert "2 trial(s) (1 loaded) were run again because the host ran the CPUs far apart" in text, text
    assert "loaded ones are re-run only where the experiment says rerun_far_loaded" in text


def test_kept_runs_are_far_by_their_far_share_where_measured():
    """A run a quarter far counts; one that ended far after 5% far does not, after 10% it does
    (workflows/placement.py, FAR_AFTER_SHARE); one with no measured share falls back to how
    it ended."""
    text = noise_sentence([row(ended_far=1, far_share=0.6), row(ended_far=1, far_share=0.05),
                           row(ended_far=0, far_share=0.3), row(ended_far=1), row(far_share=0.0)])
    assert "3 kept run(s) ran so" in text and "25% or more above the lowest its configuration showed" in text
    assert "or 10% or more with a far probe after the run" in text
    text = noise_sentence([row(ended_far=1, far_share=0.1), row(ended_far=0, far_share=0.2)])
    assert "1 kept run(s) ran so" in text, text
    # the runner's verdict (the table's ran_far), where recorded, over the share alone
    # (the share alone would count the first and the last: 2)
    text = noise_sentence([row(far_share=0.3, ran_far=0), row(far_share=0.1, ran_far=1),
                           row(far_share=0.2, ran_far=1), row(far_share=0.6)])
    assert "3 kept run(s) ran so" in text, text


def test_both_reasons_and_a_trial_still_disturbed():
    text = noise_sentence([row(reruns=2, far_reruns=1, disturbed=1), row(reruns=1), row()])
    assert text.startswith("<span class=warn>")
    assert "2 of 3 trial(s) were run again because other work" in text
    assert "1 stayed disturbed" in text and "1 no-load trial(s) were run again because the host" in text


def test_tables_from_before_wait_near_count_every_rerun_as_disturbed():
    rows = [{"disturbed": "0", "reruns": "1"}, {"disturbed": "0", "reruns": "0"}]
    assert "1 of 2 trial(s) were run again because other work" in noise_sentence(rows)
    assert "far apart" not in noise_sentence(rows)


def test_onoff_loads_say_how_they_ran_and_when_their_sleeps_overshot():
    from analysis.caption import onoff_sentence
    rows = [{"ctp_us": "10.0", "load_on_us": "11.9", "load_off_us": "54.3"},
            {"ctp_us": "10.0", "load_on_us": "12.1", "load_off_us": "45.7"},
            {"ctp_us": "1000.0", "load_on_us": "1002", "load_off_us": "1060"},
            {"ctp_us": "", "load_on_us": "", "load_off_us": ""}]
    text = onoff_sentence(rows)
    assert "CTP 10 us: on 12.0 / off 50.0 us (busy 19%)" in text, text
    assert "CTP 1000 us: on 1002 / off 1060 us (busy 49%)" in text, text
    assert "At CTP 10 us the off periods ran long" in text and "At CTP 10, 1000" not in text, text
    assert onoff_sentence([{"ctp_us": "", "load_on_us": "", "load_off_us": ""}]) == ""

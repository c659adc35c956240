"""The lab's two-look sequential design: repetitions added only where a claim is undecided.

Fixed repetition counts cannot make two runs agree on a claim whose value lies within a
half-width of its bound: one run's interval excludes the bound, the other's straddles it.
So an experiment may declare `top_up`, extra repetitions per scale. The workflow runs its
`reps` repetitions, judges every claim that reads it (the first look), and only if one of
them is inconclusive runs the `top_up` repetitions and judges again on all of them (the
second look; analysis/top_up.py decides, the workflow's `top_up` checkpoint runs it). The
budget goes where it can change an answer.

Two looks are two chances of a wrong verdict, so both use 97.5% intervals: by Bonferroni
at most 2.5% + 2.5% = 5% overall, whatever the looks' sizes. The summary's interval column
says which design a claim had. Experiments without a top-up keep single-look 95% intervals.
"""
SINGLE_LOOK = 0.95
TWO_LOOKS = 0.975


def interval_text(level):
    if level == SINGLE_LOOK:
        return "95% t interval over repetitions"
    return (f"{level * 100:g}% t interval over repetitions (two looks: repetitions were added "
            f"if the first was inconclusive; 5% overall)")

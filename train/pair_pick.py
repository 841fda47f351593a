#!/usr/bin/env python3
"""How often the decider's pick holds the answer as the word pairs' weight in
the prior varies: pick = each question's best candidate by
(prior without pairs) + BETA * pairs, for a few BETA.

usage: pair_pick.py [--split dev] NAME=FEATURES.jsonl:QUESTIONS.jsonl [...]
FEATURES.jsonl comes from examples/decider_features.rs; its "prior" holds
PAIR_WEIGHT * "pairs" (src/research/decider.rs), taken out here first. Only
the questions of the split (train/dev/test, as fit_decider.py splits them)
count; without --split, all of them. A pick is right by the rule of
../shared/eval/research_eval.py.
"""
import sys
from fit_decider import load, PRIOR, FEATURE_NAMES

PAIRS = FEATURE_NAMES.index("pairs")
PAIR_WEIGHT = 0.4  # src/research/decider.rs
BETAS = (0, 0.1, 0.2, 0.4, 0.8)

args = sys.argv[1:]
split = None
if args[:1] == ["--split"]:
    split, args = args[1], args[2:]
for spec in args:
    name, rest = spec.split("=", 1)
    feats, qs = rest.split(":", 1)
    questions = [q for q in load(name, feats, qs)
                 if q["answerable"] and (split is None or q["split"] == split)]
    cells = []
    for beta in BETAS:
        right = 0
        for q in questions:
            if not q["cands"]:
                continue
            # The first best on a tie, as the decider's stable sort.
            best = max(enumerate(q["cands"]),
                       key=lambda c: (c[1][1][PRIOR] + (beta - PAIR_WEIGHT) * c[1][1][PAIRS], -c[0]))
            right += best[1][2]
        cells.append(f"{beta}: {int(right)}/{len(questions)}")
    print(f"{name}  " + "  ".join(cells), flush=True)

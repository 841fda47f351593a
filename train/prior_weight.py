#!/usr/bin/env python3
"""How often the decider's pick holds the answer as the weight of one feature
inside the prior varies: pick = each question's best candidate by
prior - CURRENT * feature + WEIGHT * feature, for a few WEIGHT.

usage: prior_weight.py FEATURE CURRENT [--split dev] NAME=FEATURES.jsonl:QUESTIONS.jsonl [...]
FEATURE is one of the features the prior adds ("pairs") and
CURRENT its weight in src/research/decider.rs when FEATURES.jsonl was dumped
(by examples/decider_features.rs). Only the answerable questions of the split
(train/dev/test, as fit_decider.py splits them) count; without --split, all
of them. A pick is right by the rule of ../shared/eval/research_eval.py.
"""
import sys
from fit_decider import load, PRIOR, FEATURE_NAMES

WEIGHTS = (0, 0.1, 0.2, 0.4, 0.8)

feature, current, args = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
at = FEATURE_NAMES.index(feature)
split = None
if args[:1] == ["--split"]:
    split, args = args[1], args[2:]
for spec in args:
    name, rest = spec.split("=", 1)
    feats, qs = rest.split(":", 1)
    questions = [q for q in load(name, feats, qs)
                 if q["answerable"] and (split is None or q["split"] == split)]
    cells = []
    for weight in WEIGHTS:
        right = 0
        for q in questions:
            if not q["cands"]:
                continue
            # The first best on a tie, as the decider's stable sort.
            best = max(enumerate(q["cands"]),
                       key=lambda c: (c[1][1][PRIOR] + (weight - current) * c[1][1][at], -c[0]))
            right += best[1][2]
        cells.append(f"{weight}: {int(right)}/{len(questions)}")
    print(f"{name}  " + "  ".join(cells), flush=True)

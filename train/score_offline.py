#!/usr/bin/env python3
"""Score a fitted decider model on dumped features, without a server.

usage: score_offline.py [--prior] MODEL.json NAME=FEATURES.jsonl:QUESTIONS.jsonl [...]
--prior scores the prior decider (`--decider prior`) instead of the model.
Reproduces the decider's pick (src/research/decider.rs) from the dumped
candidates and prints the precision/coverage curve over all questions of
each source. Use it to report, never to choose: research_eval.py against a
running server is the measure of record.
"""
import json, sys
import numpy as np
from fit_decider import load, picks, curve, note_bests

args = sys.argv[1:]
prior_decider = "--prior" in args
args = [a for a in args if a != "--prior"]
RUNNER_UP_GAP = 0.3  # src/research/decider.rs
model = json.load(open(args[0]))
coef, bias = np.array(model["weights"]), model["bias"]
cal = model["calibration"]
for spec in args[1:]:
    name, rest = spec.split("=", 1)
    feats, qs = rest.split(":", 1)
    questions = load(name, feats, qs)
    confs = []
    if prior_decider:
        for q in questions:
            ranked = note_bests(q)
            if not ranked:
                confs.append(None)
                continue
            _, right, plain_margin, prior = ranked[0]
            # src/research/decider.rs: the prior without the word pairs,
            # lowered by a runner-up that comes within RUNNER_UP_GAP.
            confs.append((max(0.0, prior - max(0.0, RUNNER_UP_GAP - plain_margin)), right))
        model["threshold"] = 0.5
    for p in ([] if prior_decider else picks(questions, coef, bias)):
        if p is None:
            confs.append(None)
        else:
            z = cal["bias"] + cal["logit"] * p[0] + cal["lead"] * p[1]
            confs.append((1 / (1 + np.exp(-z)), p[2]))
    print(f"{name} ({len(questions)} questions, {sum(q['answerable'] for q in questions)} answerable)")
    print("  threshold precision coverage false-answer answered")
    ts = sorted({0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, model["threshold"]})
    for t, p, c, f, n in curve(questions, confs, ts):
        print(f"  {t:9.2f} {p:9.3f} {c:8.3f} {f:12.3f} {n:8d}")

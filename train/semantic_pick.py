#!/usr/bin/env python3
"""How often the decider's pick holds the answer when the semantic model's
cosine joins the prior: pick = argmax(prior + ALPHA * cosine) over a
question's candidates, for a few ALPHA (0 is today's pick by the prior).

usage: semantic_pick.py NAME=SCORED.jsonl:QUESTIONS.jsonl [...]
SCORED.jsonl comes from examples/semantic_scores.rs, which adds
"semantic" (cosine of question and candidate) to each line that
examples/decider_features.rs dumps. A pick is right by the rule of
../shared/eval/research_eval.py (gold note, a gold answer in the text).
"""
import json, sys
from fit_decider import PRIOR, answer_keys, is_right, read_questions

ALPHAS = (0, 1, 2, 4, 8, 16)

for spec in sys.argv[1:]:
    name, rest = spec.split("=", 1)
    scored, questions = rest.split(":", 1)
    items = read_questions(questions)
    rows = {}
    for line in open(scored, encoding="utf-8"):
        row = json.loads(line)
        cands = rows.setdefault(row["id"], [])
        if row.get("path"):
            cands.append(row)
    # The questions the scored file has (all, or a sample of them).
    answerable = [it for it in items.values() if it["answerable"] and it["id"] in rows]
    cells = []
    for alpha in ALPHAS:
        right = 0
        for it in answerable:
            cands = rows.get(it["id"], [])
            if not cands:
                continue
            best = max(cands, key=lambda r: r["features"][PRIOR] + alpha * r["semantic"])
            right += is_right(it, answer_keys(it), best)
        cells.append(f"{alpha}: {right}/{len(answerable)}")
    print(f"{name}  " + "  ".join(cells))

#!/usr/bin/env python3
"""Fit the local decider's model from the features noggin dumps.

usage: fit_decider.py OUT_MODEL.json [--drop FEATURE ...] SOURCE [SOURCE ...]
where each SOURCE is NAME=FEATURES.jsonl:QUESTIONS.jsonl:
  FEATURES.jsonl  from `cargo run --release --example decider_features -- BRAIN QUESTIONS.jsonl`
  QUESTIONS.jsonl {"id", "question", "answerable", "gold_path", "answers", "split"?}

A candidate is labelled right with the rule of ../shared/eval/research_eval.py:
its note ends with gold_path and its answer contains one of the answers
(lower case, punctuation and articles removed). Questions without a "split"
get one from a hash of their id (60 % train, 20 % dev, 20 % test).

1. The decider's pick is reproduced for every question: each note's best
   candidate by the hand-made prior score, best note first. A logistic
   regression (L2, Newton steps, numpy only) over the pick's features of the
   train questions predicts whether the pick is right.
2. A Platt calibration over (the pick's log-odds, its lead over the next
   note's best) is fitted on the dev questions.
3. The threshold is the lowest confidence at which the dev questions'
   answered-precision is still >= 0.9 (scanning from the most confident).
4. The precision/coverage curve of the test questions (never used above) is
   printed per source.
Deterministic: same inputs, same model.
"""
import hashlib, json, re, string, sys
import numpy as np

MAX_LEAD = 4.0  # src/research/model.rs
TARGET_PRECISION = 0.9
L2 = 1.0
FEATURES = None


def norm(s):
    s = "".join(c for c in s.lower() if c not in set(string.punctuation))
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", s).split())


def split_of(item):
    if item.get("split"):
        return item["split"]
    h = int(hashlib.md5(item["id"].encode()).hexdigest(), 16) % 5
    return ["train", "train", "train", "dev", "test"][h]


def read_questions(qs_path):
    """The questions of a JSON-lines file, by id."""
    items = {}
    for line in open(qs_path, encoding="utf-8"):
        if line.strip():
            it = json.loads(line)
            items[it["id"]] = it
    return items


def answer_keys(item):
    """The gold answers of a question, normalised as the scorer does."""
    return [norm(a) for a in item.get("answers", []) if norm(a)]


def is_right(item, keys, row):
    """The scorer's rule: an answerable question, its gold note, and one of
    its gold answers (`keys`, from answer_keys) in the candidate's text."""
    return bool(item["answerable"]) and row["path"].endswith(item["gold_path"]) and any(
        k in norm(row["answer"]) for k in keys)


def load(name, feats_path, qs_path):
    items = read_questions(qs_path)
    keys = {i: answer_keys(it) for i, it in items.items()}
    # id -> list of (path, features, label, plain_margin, prior_confidence)
    questions = {}
    for line in open(feats_path, encoding="utf-8"):
        row = json.loads(line)
        qid = row["id"]
        it = items[qid]
        cands = questions.setdefault(qid, [])
        if row.get("path") is None:
            continue
        ok = is_right(it, keys[qid], row)
        cands.append((row["path"], row["features"], 1.0 if ok else 0.0,
                      row["plain_margin"], row["prior_confidence"]))
    out = []
    for qid, cands in questions.items():
        it = items[qid]
        out.append({"source": name, "id": qid, "answerable": it["answerable"],
                    "split": split_of(it), "cands": cands})
    return out


def fit_logistic(X, y, w, l2):
    """Weighted L2 logistic regression by Newton's method on standardized X."""
    mu = X.mean(0)
    sd = X.std(0)
    sd[sd < 1e-6] = 1.0
    Z = (X - mu) / sd
    Z = np.hstack([Z, np.ones((len(Z), 1))])
    beta = np.zeros(Z.shape[1])
    reg = np.full(Z.shape[1], l2)
    reg[-1] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-Z @ beta))
        g = Z.T @ (w * (p - y)) + reg * beta
        H = (Z * (w * p * (1 - p))[:, None]).T @ Z + np.diag(reg + 1e-9)
        step = np.linalg.solve(H, g)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    coef = beta[:-1] / sd
    bias = beta[-1] - (beta[:-1] * mu / sd).sum()
    return coef, bias


PRIOR = 3  # index of the hand-made prior score among the features


def note_bests(q):
    """The decider's findings: each note's best candidate by the prior
    (the first on a tie), best note first, as (features, right, and the
    margin and confidence the prior decider reads)."""
    best = {}
    for path, f, label, plain_margin, prior_confidence in q["cands"]:
        if path not in best or f[PRIOR] > best[path][0][PRIOR]:
            best[path] = (f, label, plain_margin, prior_confidence)
    # Candidates come best prior first; a stable sort keeps that order.
    return sorted(best.values(), key=lambda t: -t[0][PRIOR])


def picks(questions, coef, bias):
    """The decider's pick per question: (logit, lead, right)."""
    out = []
    for q in questions:
        ranked = note_bests(q)
        if not ranked:
            out.append(None)
            continue
        z = [bias + float(np.dot(coef, f)) for f, *_ in ranked[:2]]
        lead = z[0] - z[1] if len(z) > 1 else MAX_LEAD
        out.append((z[0], max(-MAX_LEAD, min(MAX_LEAD, lead)), ranked[0][1]))
    return out


def curve(questions, confs, thresholds):
    rows = []
    n_a = sum(q["answerable"] for q in questions)
    n_u = len(questions) - n_a
    for t in thresholds:
        answered = right = wrong_u = 0
        for q, c in zip(questions, confs):
            if c is None or c[0] < t:
                continue
            answered += 1
            right += c[1]
            wrong_u += not q["answerable"]
        rows.append((t, right / max(1, answered), right / max(1, n_a), wrong_u / max(1, n_u), answered))
    return rows


def main():
    args = sys.argv[1:]
    # --drop NAME leaves a feature out (its weight is 0).
    dropped = [args[i + 1] for i, a in enumerate(args) if a == "--drop"]
    args = [a for i, a in enumerate(args) if a != "--drop" and (i == 0 or args[i - 1] != "--drop")]
    out_path = args[0]
    questions = []
    for spec in args[1:]:
        name, rest = spec.split("=", 1)
        feats, qs = rest.split(":", 1)
        questions += load(name, feats, qs)
    n_features = len(next(f for q in questions for _, f, *_ in q["cands"]))
    sources = sorted({q["source"] for q in questions})
    train = [q for q in questions if q["split"] == "train"]
    dev = [q for q in questions if q["split"] == "dev"]
    test = [q for q in questions if q["split"] == "test"]
    # One row per question: the decider's pick, right or not.
    X, y = [], []
    for q in train:
        ranked = note_bests(q)
        if ranked:
            X.append(ranked[0][0]); y.append(ranked[0][1])
    X, y = np.array(X), np.array(y)
    for name in dropped:
        X[:, FEATURE_NAMES.index(name)] = 0.0
    w = np.ones(len(y))
    coef, bias = fit_logistic(X, y, w, L2)
    # Calibration on dev: P(right | best logit, lead).
    dev_picks = [p for p in picks(dev, coef, bias)]
    cx = np.array([[p[0], p[1]] for p in dev_picks if p is not None])
    cy = np.array([p[2] for p in dev_picks if p is not None])
    cw = np.array([1.0 / sum(1 for q in dev if q["source"] == dq["source"])
                   for dq, p in zip(dev, dev_picks) if p is not None])
    cw *= len(cw) / cw.sum()
    (a_logit, a_lead), c_bias = fit_logistic(cx, cy, cw, 0.01)

    def confidences(qs):
        out = []
        for p in picks(qs, coef, bias):
            if p is None:
                out.append(None)
            else:
                z = c_bias + a_logit * p[0] + a_lead * p[1]
                out.append((1 / (1 + np.exp(-z)), p[2]))
        return out

    # Threshold on dev: scan from the most confident answer down.
    dev_conf = confidences(dev)
    ranked = sorted([(c[0], c[1], q["answerable"]) for q, c in zip(dev, dev_conf) if c is not None],
                    key=lambda t: -t[0])
    threshold, right = 1.0, 0
    for n, (c, ok, _) in enumerate(ranked, 1):
        right += ok
        if right / n >= TARGET_PRECISION:
            threshold = c
    threshold = float(np.ceil(threshold * 100) / 100)
    model = {
        "features": FEATURE_NAMES[:n_features],
        "weights": [round(float(v), 6) for v in coef],
        "bias": round(float(bias), 6),
        "calibration": {"logit": round(float(a_logit), 6), "lead": round(float(a_lead), 6),
                        "bias": round(float(c_bias), 6)},
        "threshold": threshold,
        "trained_on": {s: {sp: sum(1 for q in questions if q["source"] == s and q["split"] == sp)
                           for sp in ("train", "dev", "test")} for s in sources},
    }
    json.dump(model, open(out_path, "w"), indent=1)
    print(f"threshold {threshold:.2f} (dev answered-precision >= {TARGET_PRECISION})")
    print("weights:", ", ".join(f"{n} {v:+.2f}" for n, v in zip(model["features"], coef)))
    ts = [0.3, 0.4, 0.5, 0.6, threshold, 0.7, 0.8, 0.9]
    for part, qs in (("dev", dev), ("test", test)):
        for s in sources:
            sub = [q for q in qs if q["source"] == s]
            if not sub:
                continue
            conf = confidences(sub)
            print(f"{part} {s} ({len(sub)} questions, {sum(q['answerable'] for q in sub)} answerable)")
            print("  threshold precision coverage false-answer answered")
            for t, p, c, f, n in curve(sub, conf, sorted(set(ts))):
                print(f"  {t:9.2f} {p:9.3f} {c:8.3f} {f:12.3f} {n:8d}")


FEATURE_NAMES = [
    "coverage", "own_coverage", "context_coverage", "prior", "kind_in_sentence", "kind_nearby",
    "vague_time", "asks_time", "asks_number", "asks_person", "asks_place", "asks_choice",
    "passage_rank", "bm25_ratio", "gap_to_best", "margin_rival", "margin_other_note",
    "question_terms", "cjk_question", "log_words", "table_row", "unpunctuated", "leans",
    "first_in_section", "pairs", "semantic", "has_semantic",
]

if __name__ == "__main__":
    main()

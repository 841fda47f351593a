#!/usr/bin/env python3
"""Turn a SQuAD-format file (SQuAD 2.0, KorQuAD 1.0) into a training brain.

Like ../shared/eval/squad_brain.py, one note per article (title as H1,
paragraphs as plain text), but reproducibly sampled and split:
articles are shuffled with SEED; each gets a split (train 60 %, dev 20 %,
test 20 %) and is either in the brain (70 %) or absent (its questions must
then stay unanswered). At most MAX_Q questions per article are kept.

usage: squad_like_brain.py SRC.json OUT_DIR [--seed 11] [--articles N] [--max-q 25]
writes OUT_DIR/brain/*.md and OUT_DIR/questions.jsonl with
{"id", "question", "answerable", "gold_path", "answers", "split"}
"""
import argparse, json, os, random, re

ap = argparse.ArgumentParser()
ap.add_argument("src"); ap.add_argument("out")
ap.add_argument("--seed", type=int, default=11)
ap.add_argument("--articles", type=int, default=0, help="use this many articles (0: all)")
ap.add_argument("--max-q", type=int, default=25)
ap.add_argument("--only", action="append", default=[], help="keep only articles with this title")
ap.add_argument("--all-in", action="store_true", help="put every article in the brain")
a = ap.parse_args()

articles = json.load(open(a.src, encoding="utf-8"))["data"]
if a.only:
    articles = [art for art in articles if art["title"] in a.only]
rng = random.Random(a.seed)
order = list(range(len(articles)))
rng.shuffle(order)
if a.articles:
    order = order[: a.articles]
brain = os.path.join(a.out, "brain")
os.makedirs(brain, exist_ok=True)
n_q = 0
with open(os.path.join(a.out, "questions.jsonl"), "w", encoding="utf-8") as qf:
    for rank, i in enumerate(order):
        art = articles[i]
        split = ["train", "train", "train", "dev", "test"][rank % 5]
        in_brain = rng.random() < 0.7 or a.all_in
        title = art["title"].replace("_", " ")
        path = re.sub(r"[^\w\- ]", "", title).strip() + ".md"
        if in_brain:
            with open(os.path.join(brain, path), "w", encoding="utf-8") as f:
                f.write(f"# {title}\n\n")
                f.write("\n\n".join(p["context"].strip() for p in art["paragraphs"]) + "\n")
        qas = [q for p in art["paragraphs"] for q in p["qas"] if q["answers"]]
        rng.shuffle(qas)
        for q in qas[: a.max_q]:
            answers = sorted({x["text"] for x in q["answers"]})
            qf.write(json.dumps({"id": q["id"], "question": q["question"].strip(),
                                 "answerable": in_brain, "gold_path": path if in_brain else "",
                                 "answers": answers, "split": split}, ensure_ascii=False) + "\n")
            n_q += 1
print(f"{len(order)} articles, {n_q} questions; wrote {a.out}")

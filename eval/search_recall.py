#!/usr/bin/env python3
"""Score a running noggin server's search on the answerable questions of a question file.

usage: search_recall.py QUESTIONS.jsonl [--url http://127.0.0.1:7431] [--token T] [--k 3]

Each answerable question ({"question", "answerable": true, "gold_path"}, the format of
obsidian-help-*.jsonl) is sent as it is to GET /v1/search; a hit counts when its path ends
with the question's gold_path. Prints recall@1 and recall@k (the share of questions whose
gold note is among the first 1 or k hits) and the mean reciprocal rank within the first 10.
"""
import argparse, json, urllib.parse, urllib.request

ap = argparse.ArgumentParser()
ap.add_argument("questions"); ap.add_argument("--url", default="http://127.0.0.1:7431")
ap.add_argument("--token"); ap.add_argument("--k", type=int, default=3)
ap.add_argument("--misses", action="store_true", help="print the questions missed at k")
a = ap.parse_args()
items = [json.loads(l) for l in open(a.questions, encoding="utf-8") if l.strip()]
items = [it for it in items if it.get("answerable")]

def search(text, limit):
    url = a.url.rstrip("/") + "/v1/search?" + urllib.parse.urlencode({"q": text, "limit": limit})
    req = urllib.request.Request(url)
    if a.token:
        req.add_header("Authorization", "Bearer " + a.token)
    with urllib.request.urlopen(req, timeout=60) as r:
        return [h["path"] for h in json.load(r)["hits"]]

at1 = atk = rr = 0.0
for it in items:
    paths = search(it["question"], 10)
    rank = next((i + 1 for i, p in enumerate(paths) if p.endswith(it["gold_path"])), None)
    at1 += rank == 1
    atk += rank is not None and rank <= a.k
    rr += 1 / rank if rank else 0
    if a.misses and (rank is None or rank > a.k):
        print(f"  miss (rank {rank}): {it['question']}  -> {it['gold_path']}; got {paths[:a.k]}")
n = len(items)
print(f"questions {n}  recall@1 {at1 / n:.3f}  recall@{a.k} {atk / n:.3f}  MRR@10 {rr / n:.3f}")

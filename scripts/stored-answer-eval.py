#!/usr/bin/env python3
"""How often an answer the user gave comes back for a new question, and
for which: the stored-answer matching of one or more noggin binaries.

    python3 scripts/stored-answer-eval.py BIN[,BIN...] [PAIRS]

PAIRS (default eval/stored-answer-pairs.json) holds pairs of a stored
question with its answer and a new question, labelled SAME (the new one asks
the same thing in other words) or DIFFERENT (it shares words but asks
something else), in English and Korean. For each pair and binary, a fresh
copy of brain-sample gets the stored answer (`noggin remember`), then the
new question is researched (`noggin research --json`). Printed per binary
and language: the SAME pairs whose stored answer came back (recall), the
DIFFERENT pairs that got it (false matches), the precision, and how many of
the false matches came with a confidence of 0.9 or more.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BRAIN = os.path.join(ROOT, "brain-sample")
MARKER = "(self-research) "
ENV = {k: v for k, v in os.environ.items() if not k.startswith("NOGGIN_")}


def returned(binary, pair):
    """The confidence with which the stored answer came back, or None."""
    with tempfile.TemporaryDirectory(prefix="noggin-qa-") as tmp:
        brain = os.path.join(tmp, "brain")
        shutil.copytree(BRAIN, brain, ignore=shutil.ignore_patterns(".noggin"))
        common = ["--brain", brain, "--data-dir", os.path.join(tmp, "data")]
        subprocess.run(
            [binary, "remember", *common, "--prompt", "Harbor task clarification",
             "-q", pair["stored_question"], "-a", pair["answer"]],
            check=True, capture_output=True, env=ENV)
        out = subprocess.run(
            [binary, "research", *common, "--json", "-q", pair["new_question"]],
            check=True, capture_output=True, text=True, env=ENV).stdout
    for answered in json.loads(out)["answered"]:
        text = answered["answer"].strip()
        if text.startswith(MARKER):
            text = text[len(MARKER):].strip()
        if text == pair["answer"].strip():
            return answered["confidence"]
    return None


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binaries = sys.argv[1].split(",")
    pairs_path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "eval", "stored-answer-pairs.json")
    pairs = json.load(open(pairs_path))
    for binary in binaries:
        got = {p["id"]: returned(binary, p) for p in pairs}
        for lang in ["en", "ko", "all"]:
            sel = [p for p in pairs if lang == "all" or p["lang"] == lang]
            same = [p for p in sel if p["label"] == "SAME"]
            diff = [p for p in sel if p["label"] == "DIFFERENT"]
            tp = sum(got[p["id"]] is not None for p in same)
            fp = [got[p["id"]] for p in diff if got[p["id"]] is not None]
            precision = tp / (tp + len(fp)) if tp + len(fp) else float("nan")
            confident = sum(c >= 0.9 for c in fp)
            print(f"{binary} {lang}: recall {tp}/{len(same)} = {tp / len(same):.2f}, "
                  f"false matches {len(fp)}/{len(diff)} ({confident} at 0.9 or more), "
                  f"precision {precision:.2f}")


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# Ranks with each given setting of the note ranking and prints its quality:
# SciFact nDCG@10 on the fit half (even claim ids) and on the held-out half
# (odd ids), and Obsidian help recall in English and Korean.
#
#   cargo build --release
#   scripts/rank-sweep.sh "0.9,0.9,1,0.2,1.5" "1.2,0.75,1,1,0" …   # k1,b,title,passage,title_cover
#
# Choose on the fit half among the settings that keep the Obsidian recall@3;
# read the held-out half only to judge the choice.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
eval_dir=${EVAL_DIR:-$repo/../shared/eval}
noggin=$repo/target/release/noggin
port=${PORT:-7499}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$eval_dir/scifact/brain" "$work/scifact"
cp -r "$eval_dir/vaults/obsidian-help/en" "$work/en"
cp -r "$eval_dir/vaults/obsidian-help/ko" "$work/ko"
awk -F'\t' '$1 % 2 == 0' "$eval_dir/scifact/queries-train.tsv" >"$work/fit.tsv"
awk -F'\t' '$1 % 2 == 1' "$eval_dir/scifact/queries-train.tsv" >"$work/held.tsv"

serve() { # brain, params
  NOGGIN_RANK_PARAMS=$2 "$noggin" serve --brain "$1" --addr "127.0.0.1:$port" --no-model \
    >/dev/null 2>&1 &
  pid=$!
  until curl -sf "127.0.0.1:$port/v1/status" | grep -q '"indexing":false'; do sleep 0.2; done
}

for params in "$@"; do
  line="$params"
  serve "$work/scifact" "$params"
  for half in fit held; do
    ndcg=$(python3 "$eval_dir/retrieval_eval.py" "$work/$half.tsv" \
      "$eval_dir/scifact/qrels-train.tsv" --url "http://127.0.0.1:$port" | awk '/nDCG/ {print $2}')
    line="$line  scifact-$half nDCG@10 $ndcg"
  done
  kill "$pid"; wait "$pid" 2>/dev/null || true
  for lang in en ko; do
    serve "$work/$lang" "$params"
    recall=$(python3 "$repo/eval/search_recall.py" "$repo/eval/obsidian-help-$lang.jsonl" \
      --url "http://127.0.0.1:$port" | tail -1)
    line="$line  | $lang $recall"
    kill "$pid"; wait "$pid" 2>/dev/null || true
  done
  echo "$line"
done

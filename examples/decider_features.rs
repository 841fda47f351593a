//! Dumps the local decider's candidates and their features for training.
//!
//! `cargo run --release --example decider_features -- BRAIN QUESTIONS.jsonl`
//! indexes BRAIN, then for every question of QUESTIONS.jsonl (the shape
//! `research_eval.py` reads: `id`, `question`, `answerable`, `gold_path`,
//! `answers`) prints one JSON line per candidate the decider scores: the
//! question's id, the candidate's note, heading and answer text, and its
//! features in the order of `noggin::research::decider::FEATURES` (and what
//! the prior decider reads: `prior_confidence` and `plain_margin`). The
//! training script (`train/fit_decider.py`) labels the lines with the
//! scorer's rule, so serving and training compute the same features from one
//! definition.

use std::io::{BufRead, Write};

use anyhow::Context;
use noggin::index::{Index, IndexOptions};
use noggin::research::context::{load_project_context, ContextSource};
use noggin::research::decider::{
    answer_text, prior_confidence, score_candidates, NoteFinding, Weights,
};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [brain, questions] = args.as_slice() else {
        anyhow::bail!("usage: decider_features BRAIN QUESTIONS.jsonl");
    };
    let brain = noggin::brain::canonical_root(std::path::Path::new(brain))?;
    let index = Index::open(IndexOptions {
        brain: brain.clone(),
        data_dir: None,
        max_note_bytes: 5 * 1024 * 1024,
        read_only: false,
    })
    .with_context(|| format!("cannot open the index of {brain:?}"))?;
    index.reconcile_blocking(None)?;
    let context = load_project_context(&index, ContextSource::Brain, 3000);
    let mut weights = Weights::new(&index);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let file =
        std::fs::File::open(questions).with_context(|| format!("cannot read {questions}"))?;
    for line in std::io::BufReader::new(file).lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let item: serde_json::Value = serde_json::from_str(&line)?;
        let question = item["question"].as_str().unwrap_or_default().trim();
        let terms = weights.question_terms(question);
        let scored = score_candidates(&index, &terms, &context.sections, false);
        for candidate in &scored.candidates {
            let section = &scored.sections[candidate.section];
            let finding = NoteFinding {
                section: section.clone(),
                sentence: candidate.sentence.clone(),
            };
            let row = serde_json::json!({
                "id": item["id"],
                "path": section.path,
                "heading": section.heading,
                "answer": answer_text(&finding),
                "features": candidate.features.to_vec(),
                "plain_margin": candidate.plain_margin,
                "prior_confidence": prior_confidence(&candidate.features),
            });
            writeln!(out, "{row}")?;
        }
        if scored.candidates.is_empty() {
            // A question with no candidate still counts (as unanswered).
            writeln!(
                out,
                "{}",
                serde_json::json!({"id": item["id"], "path": null})
            )?;
        }
    }
    out.flush()?;
    Ok(())
}

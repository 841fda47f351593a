//! Scores every dumped decider candidate against its question with the
//! semantic model: reads the JSON lines of `decider_features` on stdin and
//! prints them back with `"semantic"` (cosine of question and candidate).
//!
//! usage: semantic_scores MODEL_DIR QUESTIONS.jsonl < FEATURES.jsonl > OUT.jsonl

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let embedder = noggin::semantic::Embedder::load(Path::new(&args[1])).expect("model");
    let mut questions = HashMap::new();
    for line in std::fs::read_to_string(&args[2])
        .expect("questions")
        .lines()
    {
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(line).expect("question json");
        questions.insert(
            v["id"].as_str().unwrap().to_string(),
            v["question"].as_str().unwrap().to_string(),
        );
    }
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let mut cache: HashMap<String, Vec<f32>> = HashMap::new();
    for line in stdin.lock().lines() {
        let line = line.unwrap();
        let mut v: serde_json::Value = serde_json::from_str(&line).unwrap();
        if let Some(answer) = v["answer"].as_str() {
            let id = v["id"].as_str().unwrap().to_string();
            let p = embedder.embed_passages(&[answer]).remove(0);
            let q = cache.entry(id).or_insert_with_key(|id| {
                embedder.embed_queries(&[questions[id].as_str()]).remove(0)
            });
            v["semantic"] = noggin::semantic::dot(q, &p).into();
        }
        writeln!(out, "{v}").unwrap();
    }
}

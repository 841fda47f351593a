//! `noggin remember`: the user's answers written into the brain.

use std::io::Write;

use crate::app::{Noggin, QuestionAnswer, RememberRequest};
use crate::config::RememberArgs;

pub fn remember(args: RememberArgs) -> anyhow::Result<()> {
    let pairs = args.pairs()?;
    let config = args.core()?;
    let request = RememberRequest {
        prompt: Some(args.prompt),
        qa: pairs
            .into_iter()
            .map(|given| QuestionAnswer {
                question: given.question,
                answer: given.answer,
                source: given.source,
            })
            .collect(),
        session: None,
    };
    // Bad answers are refused before the index is opened (or made).
    request.validate()?;
    let app = Noggin::open_once(&config, false)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let remembered = runtime.block_on(app.remember(request))?;
    if args.json {
        return super::print_json(&remembered);
    }
    let mut out = std::io::stdout().lock();
    for saved in &remembered.outcome.saved {
        let count = saved.questions.len();
        let plural = if count == 1 { "" } else { "s" };
        writeln!(out, "saved {count} answer{plural} to {}", saved.path)?;
    }
    for skipped in &remembered.outcome.skipped {
        writeln!(
            out,
            "skipped {:?}: {}",
            skipped.question,
            skipped.reason.describe()
        )?;
    }
    if !remembered.outcome.saved.is_empty() {
        match &remembered.not_indexed_because {
            None => writeln!(out, "indexed: searchable now")?,
            Some(why) => writeln!(out, "not indexed yet: {why}")?,
        }
    }
    Ok(())
}

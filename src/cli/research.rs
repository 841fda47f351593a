//! `noggin research`: open questions answered from the brain.

use std::io::Write;

use crate::app::Noggin;
use crate::config::ResearchCmdArgs;
use crate::research::ResearchRequest;
use crate::text::{one_line, printable};

pub fn research(args: ResearchCmdArgs) -> anyhow::Result<()> {
    let config = args.core()?;
    let request = ResearchRequest {
        prompt: args.prompt,
        questions: args.questions,
        session: None,
        project_context: None,
    };
    // Bad questions are refused before the index is opened.
    request.validate()?;
    let app = Noggin::open_once(&config, true)?;
    let response = super::runtime()?.block_on(app.research(request))?;
    if args.json {
        return super::print_json(&response);
    }
    super::say_if_indexing(response.indexing);
    let marker = &config.knowledge.marker;
    let mut out = std::io::stdout().lock();
    // Notes may hold terminal escapes; none reaches the terminal.
    for answered in &response.answered {
        writeln!(out, "{}", one_line(&answered.question))?;
        // An answer of several lines (a command, a config) keeps its lines,
        // indented under the first.
        let answer = printable(&answered.answer).replace('\n', "\n    ");
        writeln!(out, "  {marker}{answer}")?;
        let sources: Vec<String> = answered
            .evidence
            .iter()
            .map(|e| one_line(&e.path).into_owned())
            .collect();
        writeln!(
            out,
            "  confidence {:.2}; from {}",
            answered.confidence,
            sources.join(", ")
        )?;
        for old in &answered.superseded {
            writeln!(
                out,
                "  (replaces \"{}\" from {})",
                printable(&old.answer),
                one_line(&old.path)
            )?;
        }
        writeln!(out)?;
    }
    if !response.unanswered.is_empty() {
        writeln!(out, "Still open, for the user:")?;
        for open in &response.unanswered {
            writeln!(out, "  - {}", one_line(&open.question))?;
        }
    }
    Ok(())
}

//! Answers the user already gave: Q/A notes written by the learning loop.
//!
//! Notes under the knowledge folder hold `### Q. <question>` headings with the
//! user's answer below. A new question is matched question-to-question (the
//! IDF-weighted share of informative terms the two have in common), so a
//! paraphrase still finds the stored answer. Only the same question, or
//! one with words left out or added, matches: two questions that name
//! different kinds of answer ("What snack …" and "Which office …"), or where
//! each has a word the other lacks ("… for the office?" and "… for the
//! boat?", "confirmation email" and "cancellation email"), do not, since
//! words cannot tell a swapped subject from a synonym. Such a question goes
//! to the rest of research, where the stored answer is evidence like any
//! note, with the decider's confidence. When
//! stored answers to the same question differ, the newest dated note wins
//! and the others are reported as superseded.

use std::collections::HashSet;
use std::path::Path;

use serde::Serialize;

use crate::brain::parse::{date_prefix, strip_comments, HEADING_SEPARATOR};
use crate::index::search::written_as_one;
use crate::index::{Corpus, SearchFilter, SectionHit};
use crate::knowledge::note::{read_entries, KNOWLEDGE_TAG};

use super::decider::{QuestionTerms, Weights};
use super::question::{answer_kind, informative_text, type_noun, AnswerKind};

/// Heading prefix of a stored question.
pub const QUESTION_PREFIX: &str = "Q.";
/// Share of weighted terms two questions must have in common to match.
pub const MATCH_SIMILARITY: f32 = 0.5;
/// Stored questions this close to the best match's similarity ask the same
/// as it (the rest is rounding): the newest of them wins.
const SAME_SIMILARITY: f32 = 0.01;

/// A stored answer that a newer one replaced.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct Superseded {
    pub path: String,
    pub question: String,
    pub answer: String,
    /// The older note's date, `YYYY-MM-DD`, when known.
    pub created: String,
}

/// The stored answer that matches a question.
#[derive(Debug, Clone)]
pub struct StoredAnswer {
    pub section: SectionHit,
    pub question: String,
    pub answer: String,
    pub similarity: f32,
    pub superseded: Vec<Superseded>,
}

/// The stored question of a Q/A passage, if it is one.
fn stored_question(section: &SectionHit) -> Option<&str> {
    let last = section.heading.rsplit(HEADING_SEPARATOR).next()?;
    let question = last.trim().strip_prefix(QUESTION_PREFIX)?.trim();
    (!question.is_empty()).then_some(question)
}

/// Whether research may answer from `section` by its words alone. A note of
/// answers noggin wrote (tagged [`KNOWLEDGE_TAG`]) answers only under a
/// stored question: its title and the assistant's request under "Original
/// request" say what was asked, not what holds.
pub fn answers_by_words(section: &SectionHit) -> bool {
    !section.tags.iter().any(|t| t == KNOWLEDGE_TAG) || stored_question(section).is_some()
}

/// Finds the stored answer for `question` in the knowledge folder.
pub fn find_stored_answer(
    index: &dyn Corpus,
    weights: &mut Weights<'_>,
    folder: &str,
    asked: &QuestionTerms,
) -> Option<StoredAnswer> {
    if asked.terms.is_empty() {
        return None;
    }
    let terms: Vec<String> = asked.terms.iter().map(|(t, _)| t.clone()).collect();
    let filter = SearchFilter {
        folder: Some(folder.to_string()),
        ..SearchFilter::default()
    };
    let sections = index
        .search_sections(&terms, &filter, 30)
        .inspect_err(|error| tracing::warn!(%error, "stored-answer search failed"))
        .ok()?;
    let asked_for = AskedFor::of(index, &asked.question);
    let mut matches: Vec<(SectionHit, String, f32)> = Vec::new();
    for section in sections {
        let Some(stored) = stored_question(&section) else {
            continue;
        };
        let stored = stored.to_string();
        // Two words that one of the two questions writes as one word ("time
        // zone", "timezone") are read as that word in both.
        let asked_one = written_as_one(&asked.question, &stored);
        let stored_one = written_as_one(&stored, &asked.question);
        let rewritten = (asked_one != asked.question).then(|| {
            (
                weights.question_terms(&asked_one),
                AskedFor::of(index, &asked_one),
            )
        });
        let (asked_here, asked_for_here) = match &rewritten {
            Some((terms, asked_for)) => (terms, asked_for),
            None => (asked, &asked_for),
        };
        // A note marked as no longer holding holds no answer either.
        if section.stale
            || section.text.trim().is_empty()
            || asked_for_here.differs(&AskedFor::of(index, &stored_one))
        {
            continue;
        }
        let (similarity, swapped) = similarity(index, weights, &asked_here.terms, &stored_one);
        tracing::debug!(asked = %asked.question, %stored, similarity, swapped, "stored question");
        if !swapped && similarity >= MATCH_SIMILARITY {
            matches.push((section, stored, similarity));
        }
    }
    let mut matches = whole_entries(matches);
    // The stored questions nearest the asked one: a newer answer to a
    // narrower or wider question ("What font size …" for "What font …")
    // does not replace the answer to the question itself.
    let best = matches.iter().map(|m| m.2).fold(0.0_f32, f32::max);
    matches.retain(|m| m.2 >= best - SAME_SIMILARITY);
    // Of those, the newest first: the note's date, then its modification
    // time, then the entry's position (a later entry in the same note is
    // newer); the older ones it replaces are superseded.
    // The index keeps whole seconds; two answers saved in the same second
    // are told apart by their notes' times on disk.
    let modified = |hit: &SectionHit| {
        std::fs::metadata(index.brain().join(&hit.path))
            .and_then(|m| m.modified())
            .ok()
    };
    matches.sort_by_cached_key(|(hit, _, similarity)| {
        std::cmp::Reverse((
            note_date(hit),
            hit.modified,
            modified(hit),
            hit.ord,
            // Only to make the order total.
            (similarity * 1e6) as i64,
        ))
    });
    let mut matches = matches.into_iter();
    let (section, stored, similarity) = matches.next()?;
    // A note may answer the same question more than once, the latest last:
    // the earlier answers are superseded too.
    let mut given = as_given(index.brain(), &section, &stored);
    let (_, answer) = given.pop()?;
    let older = given
        .into_iter()
        .rev()
        .map(|(question, answer)| (answer, section.clone(), question));
    let others = matches.flat_map(|(s, q, _)| {
        as_given(index.brain(), &s, &q)
            .into_iter()
            .rev()
            .map(move |(question, answer)| (answer, s.clone(), question))
    });
    let mut seen = HashSet::from([normalize(&answer)]);
    let superseded = older
        .chain(others)
        .filter(|(answer, _, _)| seen.insert(normalize(answer)))
        .map(|(answer, s, q)| Superseded {
            created: note_date(&s).unwrap_or_default(),
            path: s.path.clone(),
            question: q,
            answer,
        })
        .collect();
    Some(StoredAnswer {
        section,
        question: stored,
        answer,
        similarity,
        superseded,
    })
}

/// The matched passages as whole entries: a long answer is indexed as
/// several passages under its question's heading, each of which matches;
/// they are one answer, in their order (the first stands for the entry).
fn whole_entries(mut matches: Vec<(SectionHit, String, f32)>) -> Vec<(SectionHit, String, f32)> {
    matches.sort_by(|a, b| {
        (a.0.path.as_str(), a.0.heading.as_str(), a.0.ord).cmp(&(
            b.0.path.as_str(),
            b.0.heading.as_str(),
            b.0.ord,
        ))
    });
    let mut entries: Vec<(SectionHit, String, f32)> = Vec::new();
    // The position of each entry's last passage: only the next one joins.
    let mut last_ord = 0;
    for (section, stored, similarity) in matches {
        let follows = std::mem::replace(&mut last_ord, section.ord) + 1 == section.ord;
        match entries.last_mut() {
            Some((first, _, _))
                if follows && first.path == section.path && first.heading == section.heading =>
            {
                let mut whole = (*first.passage).clone();
                whole.text = format!("{}\n{}", whole.text.trim_end(), section.text.trim());
                first.passage = std::sync::Arc::new(whole);
            }
            _ => entries.push((section, stored, similarity)),
        }
    }
    entries
}

/// What a question asks for, as far as telling two questions apart goes.
struct AskedFor {
    kind: AnswerKind,
    reason_or_way: Option<&'static str>,
    /// The analyzed noun that names the kind of answer ("which *database*").
    noun: Option<Vec<String>>,
}

impl AskedFor {
    fn of(index: &dyn Corpus, question: &str) -> AskedFor {
        AskedFor {
            kind: answer_kind(main_clause(question)),
            reason_or_way: reason_or_way(question),
            noun: type_noun(question).map(|noun| index.query_terms(&noun)),
        }
    }

    /// Whether the two questions ask for different kinds of answer: a
    /// time, a person or a place against anything else ("*Who* changes the
    /// office wifi password?" against "*What* is the office wifi
    /// password?"), a reason or a way against anything else, or two
    /// different named things ("Which *office* should I buy?" against "What
    /// *snack* should I buy for the office?"). Then they are different
    /// questions, however many words they share. An amount is often asked
    /// for as a thing ("How much should the fee be?", "What fee should we
    /// charge?"), so a number goes with anything but a time, person or
    /// place.
    fn differs(&self, other: &AskedFor) -> bool {
        let loose = |kind| {
            matches!(
                kind,
                AnswerKind::Choice | AnswerKind::Other | AnswerKind::Number
            )
        };
        if self.kind != other.kind && !(loose(self.kind) && loose(other.kind)) {
            return true;
        }
        if self.reason_or_way != other.reason_or_way {
            return true;
        }
        matches!((&self.noun, &other.noun), (Some(a), Some(b)) if a != b)
    }
}

/// "why" (a reason) or "how" (a way), which a value does not answer ("Why
/// is the wifi password shared?" against "What is the wifi password?").
fn reason_or_way(question: &str) -> Option<&'static str> {
    let question = main_clause(question);
    let lower = question.trim_start().to_lowercase();
    if lower.starts_with("why ") || question.contains('왜') || question.contains("なぜ") {
        Some("why")
    } else if (lower.starts_with("how ") && answer_kind(question) == AnswerKind::Other)
        || question.contains("어떻게")
    {
        Some("how")
    } else {
        None
    }
}

/// The question without a clause put before it ("When a slip is taken,
/// *what should the page say?*"), whose "when" asks for no time.
fn main_clause(question: &str) -> &str {
    let lower = question.trim_start().to_lowercase();
    if !["when ", "if ", "once ", "after ", "before "]
        .iter()
        .any(|lead| lower.starts_with(lead))
    {
        return question;
    }
    match question.find(", ") {
        Some(at) => &question[at + 2..],
        None => question,
    }
}

/// Weighted Jaccard similarity of two questions' informative terms, and
/// whether each has a term the other lacks.
fn similarity(
    index: &dyn Corpus,
    weights: &mut Weights<'_>,
    asked: &[(String, f32)],
    stored: &str,
) -> (f32, bool) {
    let stored_terms = index.query_terms(&informative_text(stored));
    let asked_set: HashSet<&str> = asked.iter().map(|(t, _)| t.as_str()).collect();
    let stored_set: HashSet<&str> = stored_terms.iter().map(String::as_str).collect();
    let mut common = 0.0;
    let mut union = 0.0;
    for term in asked_set.union(&stored_set) {
        let w = weights.idf(term);
        union += w;
        if asked_set.contains(term) && stored_set.contains(term) {
            common += w;
        }
    }
    let swapped = !asked_set.is_subset(&stored_set) && !stored_set.is_subset(&asked_set);
    let similarity = if union <= 0.0 { 0.0 } else { common / union };
    (similarity, swapped)
}

/// A matched entry's answer as the user gave it, read from its note: the
/// index holds the text as markdown shows it, which drops the `_`s and `*`s
/// of a plain answer (`ff_<team>_<feature>` came back `ff_<team><feature>`).
/// Every answer the note gives the question, with the question as that
/// entry writes it, in the note's order (the latest last), without the
/// user's comments; the indexed text when the note cannot be read or no
/// longer holds the entry.
fn as_given(brain: &Path, section: &SectionHit, question: &str) -> Vec<(String, String)> {
    let indexed = vec![(question.to_string(), section.text.trim().to_string())];
    let Ok(source) = std::fs::read_to_string(brain.join(&section.path)) else {
        return indexed;
    };
    // What Obsidian shows of it: no comment of the user's is quoted.
    let source = strip_comments(&source);
    // The heading's question is as markdown shows it too: compare letters
    // and digits only.
    let letters = |text: &str| -> String {
        text.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    };
    let wanted = letters(question);
    let given: Vec<(String, String)> = read_entries(&source)
        .into_iter()
        .filter(|entry| letters(&entry.question) == wanted)
        .map(|entry| (entry.question, entry.answer.trim().to_string()))
        .filter(|(_, answer)| !answer.is_empty())
        .collect();
    if given.is_empty() {
        indexed
    } else {
        given
    }
}

fn note_date(section: &SectionHit) -> Option<String> {
    if !section.created.is_empty() {
        return Some(section.created.clone());
    }
    let name = section.path.rsplit('/').next().unwrap_or(&section.path);
    date_prefix(name).map(|d| d.to_string())
}

fn normalize(answer: &str) -> String {
    answer
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWLEDGE: &str = "Alignment Knowledge";

    /// The stored question that `question` finds in a brain of one stored
    /// answer and a few project notes, if any.
    fn matched(question: &str) -> Option<String> {
        let (_temp, index) = crate::index::indexed_brain(&[
            (
                "Alignment Knowledge/2026-11-20 Office supplies.md",
                "# Office supplies\n\n### Q. What snack should I buy for the office?\nSalted pretzels from the corner shop.\n",
            ),
            (
                "boats.md",
                "# Boats\n\nHarbor books slips for boats at three marinas.\n",
            ),
            (
                "office.md",
                "# Office\n\nThe office is in Rotterdam; we buy supplies on Fridays.\n",
            ),
        ]);
        let mut weights = Weights::new(&index);
        let asked = weights.question_terms(question);
        find_stored_answer(&index, &mut weights, KNOWLEDGE, &asked).map(|s| s.question)
    }

    #[test]
    fn the_same_question_in_other_words_finds_the_stored_answer() {
        let stored = Some("What snack should I buy for the office?".to_string());
        for question in [
            "What snack should I buy for the office?",
            "Which snacks do I buy for the office?",
            "what snack should i buy for the office",
            "When we restock, what snack should I buy for the office?",
        ] {
            assert_eq!(matched(question), stored, "{question}");
        }
    }

    #[test]
    fn a_question_about_something_else_finds_no_stored_answer() {
        for question in [
            // Another kind of answer, though every word is in the stored one.
            "Which office should I buy?",
            // One subject swapped for another.
            "What boat should I buy for the office?",
            "What snack should I buy for the boat?",
            // Another kind of answer about the same thing.
            "Who buys the snacks for the office?",
            "When should I buy the snack for the office?",
            "Why should I buy the snack for the office?",
            "How do I buy the snack for the office?",
            // Nothing in common.
            "Where do boats dock?",
        ] {
            assert_eq!(matched(question), None, "{question}");
        }
    }

    #[test]
    fn two_words_the_stored_question_writes_as_one_find_it() {
        let (_temp, index) = crate::index::indexed_brain(&[
            (
                "Alignment Knowledge/2026-11-20 Team.md",
                "# Team\n\n### Q. What timezone is Maria Chen in?\nAmerica/Los_Angeles.\n\n\
                 ### Q. How do I log in to the build server?\nWith the team's SSO.\n",
            ),
            (
                "People/Maria Chen.md",
                "# Maria Chen\n\nProduct manager of the billing portal; timezone not written here.\n",
            ),
        ]);
        let mut weights = Weights::new(&index);
        for (question, stored) in [
            (
                "What time zone is Maria Chen in?",
                "What timezone is Maria Chen in?",
            ),
            (
                "What's Maria Chen's time zone?",
                "What timezone is Maria Chen in?",
            ),
            (
                "Which time zone is Maria Chen based in?",
                "What timezone is Maria Chen in?",
            ),
            (
                "How do I login to the build server?",
                "How do I log in to the build server?",
            ),
        ] {
            let asked = weights.question_terms(question);
            let found = find_stored_answer(&index, &mut weights, KNOWLEDGE, &asked);
            assert_eq!(
                found.map(|s| s.question).as_deref(),
                Some(stored),
                "{question}"
            );
        }
        // The two words of another question stay two words.
        let asked = weights.question_terms("What time does Maria Chen start?");
        assert!(find_stored_answer(&index, &mut weights, KNOWLEDGE, &asked).is_none());
    }

    #[test]
    fn a_newer_answer_to_a_narrower_question_does_not_replace_the_answer() {
        let (_temp, index) = crate::index::indexed_brain(&[
            (
                "Alignment Knowledge/2026-11-11 Dashboard font.md",
                "# Dashboard font\n\n### Q. What font should the dashboard use?\nUse Inter everywhere.\n",
            ),
            (
                "Alignment Knowledge/2026-11-21 Dashboard font size.md",
                "# Dashboard font size\n\n### Q. What font size should the dashboard use?\nFourteen pixels for body text.\n",
            ),
            (
                "Alignment Knowledge/2026-11-25 Dashboard font again.md",
                "# Dashboard font again\n\n### Q. Which font should the dashboard use?\nUse Atkinson Hyperlegible now.\n",
            ),
        ]);
        let mut weights = Weights::new(&index);
        let asked = weights.question_terms("What font should the dashboard use?");
        let stored = find_stored_answer(&index, &mut weights, KNOWLEDGE, &asked).unwrap();
        // The newest answer to the same question wins and replaces the
        // older one; the answer to the font size is no answer to it.
        assert_eq!(stored.answer, "Use Atkinson Hyperlegible now.");
        let replaced: Vec<&str> = stored
            .superseded
            .iter()
            .map(|s| s.answer.as_str())
            .collect();
        assert_eq!(replaced, ["Use Inter everywhere."]);
    }

    #[test]
    fn every_older_answer_in_a_note_is_superseded() {
        let (_temp, index) = crate::index::indexed_brain(&[(
            "Alignment Knowledge/2026-11-25 Lunch.md",
            "# Lunch\n\n## Confirmed information\n\
             ### Q. Where do we order team lunch from?\nFrom Bapsang, the Korean place.\n\n\
             ### Q. Where do we order team lunch from?\nFrom Green Bowl, for the vegans.\n\n\
             ### Q. Where do we order team lunch from?\nFrom Taqueria Sol, since November.\n",
        )]);
        let mut weights = Weights::new(&index);
        let asked = weights.question_terms("Where do we order team lunch from?");
        let stored = find_stored_answer(&index, &mut weights, KNOWLEDGE, &asked).unwrap();
        assert_eq!(stored.answer, "From Taqueria Sol, since November.");
        let replaced: Vec<&str> = stored
            .superseded
            .iter()
            .map(|s| s.answer.as_str())
            .collect();
        assert_eq!(
            replaced,
            [
                "From Green Bowl, for the vegans.",
                "From Bapsang, the Korean place."
            ]
        );
    }

    #[test]
    fn a_stored_answer_is_read_as_obsidian_shows_it_from_a_note_that_holds() {
        let (_temp, index) = crate::index::indexed_brain(&[
            (
                "Alignment Knowledge/2026-11-20 Wifi.md",
                "---\nstatus: superseded\n---\n# Wifi\n\n### Q. What is the guest wifi password?\nharbor-guest-2025\n",
            ),
            (
                "Alignment Knowledge/2026-11-25 Lunch.md",
                "# Lunch\n\n### Q. Where do we order team lunch from?\nFrom Bapsang. %% private: they overcharge %%\n\n\
                 ### Q. where do we order team lunch from\nFrom Taqueria Sol.\n",
            ),
        ]);
        let mut weights = Weights::new(&index);
        let asked = weights.question_terms("What is the guest wifi password?");
        assert!(find_stored_answer(&index, &mut weights, KNOWLEDGE, &asked).is_none());
        let asked = weights.question_terms("Where do we order team lunch from?");
        let stored = find_stored_answer(&index, &mut weights, KNOWLEDGE, &asked).unwrap();
        assert_eq!(stored.answer, "From Taqueria Sol.");
        let older: Vec<(&str, &str)> = stored
            .superseded
            .iter()
            .map(|s| (s.question.as_str(), s.answer.as_str()))
            .collect();
        assert_eq!(
            older,
            [("Where do we order team lunch from?", "From Bapsang.")]
        );
    }

    #[test]
    fn of_two_answers_saved_in_the_same_second_the_later_wins() {
        use std::time::{Duration, UNIX_EPOCH};
        let temp = tempfile::tempdir().unwrap();
        let brain = temp.path().join("brain");
        let folder = brain.join(KNOWLEDGE);
        std::fs::create_dir_all(&folder).unwrap();
        let entry = |answer: &str| {
            format!("# Receipts\n\n### Q. Which font should the receipt footer use?\n{answer}\n")
        };
        // The later one's name sorts last.
        let second = UNIX_EPOCH + Duration::from_secs(1_795_000_000);
        for (name, answer, at) in [
            ("2026-11-27 Alpha plan.md", "Use Inter for it.", 100),
            ("2026-11-27 Zulu plan.md", "Use Source Serif for it.", 800),
        ] {
            let path = folder.join(name);
            std::fs::write(&path, entry(answer)).unwrap();
            let file = std::fs::File::options().write(true).open(&path).unwrap();
            file.set_modified(second + Duration::from_millis(at))
                .unwrap();
        }
        let index = crate::index::indexed_folder(brain);
        let mut weights = Weights::new(&index);
        let asked = weights.question_terms("Which font should the receipt footer use?");
        let stored = find_stored_answer(&index, &mut weights, KNOWLEDGE, &asked).unwrap();
        assert_eq!(stored.answer, "Use Source Serif for it.");
        assert_eq!(stored.superseded[0].answer, "Use Inter for it.");
    }

    #[test]
    fn the_stored_answer_comes_back_as_the_user_gave_it() {
        let given = "Name them ff_<team>_<feature>_<yyyymm>, *all* lower case.";
        let note = crate::knowledge::note::render_note(
            chrono::NaiveDate::from_ymd_opt(2026, 11, 20).unwrap(),
            "Feature flags",
            &[crate::knowledge::note::Entry {
                question: "How should feature flags be named?".into(),
                answer: given.into(),
            }],
        );
        let (_temp, index) = crate::index::indexed_brain(&[(
            "Alignment Knowledge/2026-11-20 Feature flags.md",
            note.as_str(),
        )]);
        let mut weights = Weights::new(&index);
        let asked = weights.question_terms("How should feature flags be named?");
        let stored = find_stored_answer(&index, &mut weights, KNOWLEDGE, &asked).unwrap();
        // The index holds it as markdown shows it; the answer is as given.
        assert_ne!(stored.section.text.trim(), given);
        assert_eq!(stored.answer, given);
    }
}

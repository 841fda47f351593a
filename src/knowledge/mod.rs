//! Writing the user's answers back into the brain as dated notes, so that the
//! next research finds them and the user is never asked the same thing twice.
//!
//! [`Knowledge::remember`] checks a request, drops what must not be saved
//! (self-researched, too short, empty, duplicate, or everything when saving is
//! off) and writes the rest to `<folder>/YYYY-MM-DD <slug>.md` ([`slug`]) in
//! the format of [`note`]. An existing note of the same day and prompt is
//! appended to, keeping whatever the user edited in it. Writes are atomic
//! (temporary file in the same folder, fsync, rename, fsync of the folder) and
//! serialized across processes by the answers lock ([`lock`]), so concurrent
//! writers (requests, `noggin remember` runs) lose nothing; a note an editor
//! saves meanwhile is re-read and appended to again ([`write`]). Indexing the
//! note is left to the caller, which knows whether it owns the index.

mod lock;
pub mod note;
pub mod slug;
mod write;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use chrono::NaiveDate;
use serde::Serialize;

use note::Entry;

pub use crate::limits::{MAX_ANSWERS, MAX_ANSWER_CHARS, MAX_PROMPT_CHARS, MAX_QUESTION_CHARS};

/// Value of `source` that marks an answer noggin found itself.
pub const SELF_RESEARCH_SOURCE: &str = "self-research";

/// Errors of writing answers back. The first group is bad input.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("the prompt is empty: answers are saved under the request they clarify")]
    EmptyPrompt,
    #[error("the prompt is {chars} characters long; at most {MAX_PROMPT_CHARS} are accepted")]
    PromptTooLong { chars: usize },
    #[error("no answers were given: qa is empty")]
    NoAnswers,
    #[error("{count} answers at once; at most {MAX_ANSWERS} are accepted")]
    TooManyAnswers { count: usize },
    #[error("question {} contains a control character; a question is one line", index + 1)]
    ControlCharacter { index: usize },
    #[error("question {} is {chars} characters long; at most {MAX_QUESTION_CHARS} are accepted", index + 1)]
    QuestionTooLong { index: usize, chars: usize },
    #[error(
        "the answer to question {} is {chars} characters long; at most {MAX_ANSWER_CHARS} are accepted",
        index + 1
    )]
    AnswerTooLong { index: usize, chars: usize },
    #[error("the answers cannot be written without changing the structure of the note")]
    Unrepresentable,
    #[error("the knowledge folder {0:?} leads outside the brain")]
    OutsideBrain(PathBuf),
    #[error("the brain folder {0:?} is gone (moved away or deleted): nothing was written")]
    BrainGone(PathBuf),
    #[error("no free file name for this prompt in {0:?}")]
    NoFreeName(PathBuf),
    #[error("{0:?} kept changing while the answers were added; try again")]
    KeptChanging(PathBuf),
    #[error("cannot write {path:?}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// A stable code for bad input; `None` for failures of noggin or the disk.
    pub fn input_code(&self) -> Option<&'static str> {
        Some(match self {
            Error::EmptyPrompt => "empty-prompt",
            Error::PromptTooLong { .. } => "prompt-too-long",
            Error::NoAnswers => "no-answers",
            Error::TooManyAnswers { .. } => "too-many-answers",
            Error::ControlCharacter { .. } => "control-character",
            Error::QuestionTooLong { .. } => "question-too-long",
            Error::AnswerTooLong { .. } => "answer-too-long",
            Error::Unrepresentable => "unrepresentable-answer",
            Error::OutsideBrain(_)
            | Error::BrainGone(_)
            | Error::NoFreeName(_)
            | Error::KeptChanging(_)
            | Error::Io { .. } => return None,
        })
    }

    /// True for failures that pass: a note an editor kept saving, a brain
    /// on a disk that is not mounted now, or the process out of file
    /// descriptors. Worth a retry, not a bug report.
    pub fn is_transient(&self) -> bool {
        match self {
            Error::KeptChanging(_) | Error::BrainGone(_) => true,
            Error::Io { source, .. } => is_out_of_descriptors(source),
            _ => false,
        }
    }
}

/// Validated settings of writing answers back.
#[derive(Debug, Clone)]
pub struct Settings {
    /// False with `--no-save`: every answer is skipped as `disabled`.
    pub save: bool,
    /// Folder of the notes, relative to the brain, `/`-separated, visible.
    pub folder: String,
    /// Shorter answers are skipped as `too-short`.
    pub min_answer_chars: usize,
    /// Start of an answer that noggin found itself, e.g. `(self-research) `.
    pub marker: String,
    /// The date of written notes; today's local date when `None`.
    pub today: Option<NaiveDate>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            save: true,
            folder: "Alignment Knowledge".to_string(),
            min_answer_chars: 20,
            marker: "(self-research) ".to_string(),
            today: None,
        }
    }
}

impl Settings {
    /// The date a note written now carries.
    pub fn today(&self) -> NaiveDate {
        self.today
            .unwrap_or_else(|| chrono::Local::now().date_naive())
    }
}

/// One answer the user gave.
#[derive(Debug, Clone, Default)]
pub struct Answer {
    pub question: String,
    pub answer: String,
    /// Who answered; `self-research` answers are never saved.
    pub source: Option<String>,
}

/// Why an answer was not saved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SkipReason {
    /// noggin found it itself; only the user's answers are written.
    SelfResearch,
    TooShort,
    /// The question is empty.
    Empty,
    /// The note already holds the same question with the same answer.
    Duplicate,
    /// Saving is turned off.
    Disabled,
}

impl SkipReason {
    /// Words for people.
    pub fn describe(self) -> &'static str {
        match self {
            SkipReason::SelfResearch => "found by self-research, not given by the user",
            SkipReason::TooShort => "answer too short",
            SkipReason::Empty => "empty question",
            SkipReason::Duplicate => "already in the note",
            SkipReason::Disabled => "saving is turned off",
        }
    }
}

/// A note that received answers.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct Saved {
    /// Relative to the brain, `/`-separated.
    pub path: String,
    pub questions: Vec<String>,
}

/// An answer that was not saved.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct Skipped {
    pub question: String,
    pub reason: SkipReason,
}

/// What [`Knowledge::remember`] did.
#[derive(Debug, Clone, Serialize, Default, schemars::JsonSchema)]
pub struct Outcome {
    pub saved: Vec<Saved>,
    pub skipped: Vec<Skipped>,
}

/// A cheap, cloneable handle that writes answers into one brain.
#[derive(Clone)]
pub struct Knowledge {
    inner: Arc<Inner>,
}

struct Inner {
    brain: PathBuf,
    settings: Settings,
    /// One writer per note in this process, so that waiting requests queue
    /// here rather than each hold a blocking thread on the answers lock. The
    /// map's std mutex is held only to find or add an entry; the per-note
    /// tokio mutex is held across the blocking write, which is why it is an
    /// async one.
    locks: Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>,
}

impl Knowledge {
    /// `brain` must be canonical (see [`crate::brain::canonical_root`]).
    pub fn new(brain: &Path, settings: Settings) -> Knowledge {
        let knowledge = Knowledge {
            inner: Arc::new(Inner {
                brain: brain.to_path_buf(),
                settings,
                locks: Mutex::new(HashMap::new()),
            }),
        };
        // With the lock held no write is under way in any process, so every
        // temporary file is a leftover of an interrupted one. Without it (or
        // without a lock file) only old ones are.
        let idle = lock::AnswersLock::try_acquire_existing(brain);
        write::sweep_stale_temp_files(&knowledge.folder(), idle.is_some());
        knowledge
    }

    pub fn settings(&self) -> &Settings {
        &self.inner.settings
    }

    /// The folder notes are written to.
    pub fn folder(&self) -> PathBuf {
        self.inner.brain.join(&self.inner.settings.folder)
    }

    /// Checks a request, then writes the answers worth keeping into today's
    /// note for `prompt`. Bad input is refused as a whole, before anything is
    /// written.
    pub async fn remember(&self, prompt: &str, answers: &[Answer]) -> Result<Outcome, Error> {
        let prompt = check(prompt, answers)?;
        let settings = &self.inner.settings;
        let mut skipped: Vec<(usize, Skipped)> = Vec::new();
        let mut fresh: Vec<(usize, Entry)> = Vec::new();
        for (index, given) in answers.iter().enumerate() {
            let question = given.question.trim().to_string();
            let answer = note::clean_block(&given.answer);
            let reason = if !settings.save {
                Some(SkipReason::Disabled)
            } else if question.is_empty() {
                Some(SkipReason::Empty)
            } else if self.is_self_research(given) {
                Some(SkipReason::SelfResearch)
            } else if answer.trim().is_empty()
                || answer.trim_start().chars().count() < settings.min_answer_chars
            {
                // Counted without the indentation that clean_block keeps; an
                // answer of nothing is too short whatever the minimum.
                Some(SkipReason::TooShort)
            } else {
                None
            };
            let entry = Entry { question, answer };
            let reason = reason.or_else(|| {
                fresh
                    .iter()
                    .any(|(_, e)| e.same_as(&entry))
                    .then_some(SkipReason::Duplicate)
            });
            match reason {
                Some(reason) => skipped.push((
                    index,
                    Skipped {
                        question: entry.question,
                        reason,
                    },
                )),
                None => fresh.push((index, entry)),
            }
        }
        let mut outcome = Outcome::default();
        if !fresh.is_empty() {
            let date = settings.today();
            let folder = self.folder();
            let base = folder.join(slug::note_file_name(date, &prompt, 1));
            let lock = self.lock_for(base);
            let _one_writer = lock.lock().await;
            let brain = self.inner.brain.clone();
            let folder_rel = settings.folder.clone();
            let entries: Vec<Entry> = fresh.iter().map(|(_, e)| e.clone()).collect();
            let written = tokio::task::spawn_blocking(move || {
                let _every_process = lock::AnswersLock::acquire(&brain)?;
                write::write_entries(&brain, &folder_rel, date, &prompt, &entries)
            })
            .await
            .map_err(|join| Error::Io {
                path: folder.clone(),
                source: std::io::Error::other(join.to_string()),
            })??;
            for (i, (index, entry)) in fresh.into_iter().enumerate() {
                if written.duplicates.contains(&i) {
                    skipped.push((
                        index,
                        Skipped {
                            question: entry.question,
                            reason: SkipReason::Duplicate,
                        },
                    ));
                }
            }
            if !written.saved.is_empty() {
                outcome.saved.push(Saved {
                    path: written.path,
                    questions: written.saved,
                });
            }
        }
        skipped.sort_by_key(|(index, _)| *index);
        outcome.skipped = skipped.into_iter().map(|(_, s)| s).collect();
        Ok(outcome)
    }

    fn is_self_research(&self, given: &Answer) -> bool {
        let by_source = given
            .source
            .as_deref()
            .is_some_and(|s| s.trim().eq_ignore_ascii_case(SELF_RESEARCH_SOURCE));
        let marker = self.inner.settings.marker.trim();
        by_source || (!marker.is_empty() && given.answer.trim_start().starts_with(marker))
    }

    /// The mutex of one note, created on first use; unused ones are dropped.
    fn lock_for(&self, path: PathBuf) -> Arc<tokio::sync::Mutex<()>> {
        // Poisoning needs a panic while holding the map lock, which only does
        // map operations; the map is still consistent then.
        let mut locks = self
            .inner
            .locks
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        locks.retain(|_, lock| Arc::strong_count(lock) > 1);
        locks.entry(path).or_default().clone()
    }
}

/// True for EMFILE/ENFILE: too many open files in the process or system.
pub fn is_out_of_descriptors(error: &std::io::Error) -> bool {
    // 24 and 23 on Linux and the BSDs alike.
    matches!(error.raw_os_error(), Some(24) | Some(23))
}

/// Refuses bad input as a whole; returns the cleaned prompt.
/// Checks a request to write answers, before anything is opened or
/// written; returns the cleaned prompt.
pub fn check(prompt: &str, answers: &[Answer]) -> Result<String, Error> {
    let chars = prompt.chars().count();
    if chars > MAX_PROMPT_CHARS {
        return Err(Error::PromptTooLong { chars });
    }
    let prompt = note::clean_block(prompt);
    if prompt.trim().is_empty() {
        return Err(Error::EmptyPrompt);
    }
    if answers.is_empty() {
        return Err(Error::NoAnswers);
    }
    if answers.len() > MAX_ANSWERS {
        return Err(Error::TooManyAnswers {
            count: answers.len(),
        });
    }
    for (index, given) in answers.iter().enumerate() {
        if given.question.chars().any(char::is_control) {
            return Err(Error::ControlCharacter { index });
        }
        let chars = given.question.trim().chars().count();
        if chars > MAX_QUESTION_CHARS {
            return Err(Error::QuestionTooLong { index, chars });
        }
        let chars = given.answer.chars().count();
        if chars > MAX_ANSWER_CHARS {
            return Err(Error::AnswerTooLong { index, chars });
        }
    }
    Ok(prompt)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(q: &str, a: &str) -> Answer {
        Answer {
            question: q.to_string(),
            answer: a.to_string(),
            source: None,
        }
    }

    fn brain() -> (tempfile::TempDir, Knowledge) {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let settings = Settings {
            today: NaiveDate::from_ymd_opt(2026, 11, 22),
            ..Settings::default()
        };
        (dir, Knowledge::new(&root, settings))
    }

    #[tokio::test]
    async fn an_empty_answer_is_never_saved_even_without_a_minimum() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let settings = Settings {
            min_answer_chars: 0,
            ..Settings::default()
        };
        let knowledge = Knowledge::new(&root, settings);
        let outcome = knowledge
            .remember(
                "Plan the release",
                &[answer("Who signs off?", ""), answer("Who else?", " \n\t ")],
            )
            .await
            .unwrap();
        assert!(outcome.saved.is_empty(), "{outcome:?}");
        let reasons: Vec<SkipReason> = outcome.skipped.iter().map(|s| s.reason).collect();
        assert_eq!(reasons, [SkipReason::TooShort, SkipReason::TooShort]);
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
    }

    #[tokio::test]
    async fn skip_rules_give_reasons() {
        let (_dir, knowledge) = brain();
        let mut by_source = answer("Who decides?", "The product owner decides this.");
        by_source.source = Some("self-research".into());
        let outcome = knowledge
            .remember(
                "Plan the release",
                &[
                    answer("When is the release?", "On the first Monday of December."),
                    answer("  ", "An answer without a question at all."),
                    by_source,
                    answer("Which day?", "(self-research) Monday, says the roadmap."),
                    answer("How long?", "Two weeks."),
                    answer(
                        "How long, indented?",
                        &format!("{}Two weeks.", " ".repeat(30)),
                    ),
                    answer("When is the release?", "On the first Monday of  December."),
                ],
            )
            .await
            .unwrap();
        assert_eq!(
            outcome.saved,
            [Saved {
                path: "Alignment Knowledge/2026-11-22 Plan the release.md".into(),
                questions: vec!["When is the release?".into()],
            }]
        );
        let reasons: Vec<SkipReason> = outcome.skipped.iter().map(|s| s.reason).collect();
        assert_eq!(
            reasons,
            [
                SkipReason::Empty,
                SkipReason::SelfResearch,
                SkipReason::SelfResearch,
                SkipReason::TooShort,
                SkipReason::TooShort,
                SkipReason::Duplicate,
            ]
        );
    }

    #[tokio::test]
    async fn a_second_post_appends_and_skips_duplicates() {
        let (_dir, knowledge) = brain();
        let first = answer("When is the release?", "On the first Monday of December.");
        knowledge
            .remember("Plan it", std::slice::from_ref(&first))
            .await
            .unwrap();
        let second = answer("Who signs off?", "The release manager, Dana, signs off.");
        let outcome = knowledge
            .remember("Plan it", &[first, second])
            .await
            .unwrap();
        assert_eq!(outcome.saved[0].questions, ["Who signs off?"]);
        assert_eq!(outcome.skipped[0].reason, SkipReason::Duplicate);
        let path = knowledge.folder().join("2026-11-22 Plan it.md");
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(note::read_entries(&text).len(), 2);
        // Lines the user adds at the end of the note read as part of the
        // last answer: that answer is still there, given again it is a
        // duplicate, and the user's lines stay.
        let added = format!("{text}\nUSERLINE one\n");
        std::fs::write(&path, &added).unwrap();
        let again = answer("Who signs off?", "The release manager, Dana, signs off.");
        let outcome = knowledge.remember("Plan it", &[again]).await.unwrap();
        assert_eq!(outcome.skipped[0].reason, SkipReason::Duplicate);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), added);
    }

    #[tokio::test]
    async fn another_prompt_with_the_same_slug_gets_its_own_note() {
        let (_dir, knowledge) = brain();
        let a = "Add a cancellation fee to transient bookings";
        let b = "Add a cancellation fee to transient slips";
        let given = [answer("How much?", "Fifteen percent of the total.")];
        let first = knowledge.remember(a, &given).await.unwrap();
        let second = knowledge.remember(b, &given).await.unwrap();
        let again = knowledge.remember(b, &given).await.unwrap();
        assert_eq!(
            first.saved[0].path,
            "Alignment Knowledge/2026-11-22 Add a cancellation fee to tran.md"
        );
        assert_eq!(
            second.saved[0].path,
            "Alignment Knowledge/2026-11-22 Add a cancellation fee to tran (2).md"
        );
        assert_eq!(again.skipped[0].reason, SkipReason::Duplicate);
    }

    #[tokio::test]
    async fn bad_input_is_refused_before_writing() {
        let (_dir, knowledge) = brain();
        let long = "x".repeat(MAX_PROMPT_CHARS + 1);
        let ok = answer("Fine?", "A perfectly fine answer here.");
        let cases: Vec<(&str, Vec<Answer>, &str)> = vec![
            ("", vec![ok.clone()], "empty-prompt"),
            (" \n\t", vec![ok.clone()], "empty-prompt"),
            (&long, vec![ok.clone()], "prompt-too-long"),
            ("p", vec![], "no-answers"),
            ("p", vec![ok.clone(); MAX_ANSWERS + 1], "too-many-answers"),
            (
                "p",
                vec![ok.clone(), answer("two\nlines?", "An answer long enough.")],
                "control-character",
            ),
            (
                "p",
                vec![answer("tab\there?", "An answer long enough.")],
                "control-character",
            ),
            (
                "p",
                vec![answer(&"q".repeat(501), "An answer long enough.")],
                "question-too-long",
            ),
            (
                "p",
                vec![answer("q?", &"a".repeat(MAX_ANSWER_CHARS + 1))],
                "answer-too-long",
            ),
        ];
        for (prompt, answers, code) in cases {
            let error = knowledge.remember(prompt, &answers).await.unwrap_err();
            assert_eq!(error.input_code(), Some(code), "{error}");
        }
        assert!(!knowledge.folder().exists());
    }

    #[tokio::test]
    async fn saving_off_skips_everything() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let settings = Settings {
            save: false,
            ..Settings::default()
        };
        let knowledge = Knowledge::new(&root, settings);
        let outcome = knowledge
            .remember(
                "p",
                &[
                    answer("q?", "A long enough answer, really."),
                    answer("", ""),
                ],
            )
            .await
            .unwrap();
        assert!(outcome.saved.is_empty());
        assert!(outcome
            .skipped
            .iter()
            .all(|s| s.reason == SkipReason::Disabled));
        assert!(!knowledge.folder().exists());
    }
}

//! The research log as the card shows it: each session's latest research
//! ([`ResearchLog`]) less what became of it since it was recorded: the
//! questions the user answered since.
//!
//! In memory, like the log: the card shows what happened while noggin ran.
//! Subscribers learn of every research and answer through one watch
//! channel, so the card redraws for each without polling.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use crate::context::state::same_question;
use crate::research::log::{ResearchLog, ResearchRecord};
use crate::research::ResearchResponse;

/// A cheap, cloneable handle on the log and what became of its researches.
#[derive(Clone)]
pub struct CardLog {
    log: ResearchLog,
    // A std mutex: held only to read or change the maps, never across
    // `.await`. Taken before the log's own lock, never after it.
    since: Arc<Mutex<Since>>,
    changed: watch::Sender<u64>,
}

#[derive(Default)]
struct Since {
    /// The questions the user answered after a research, by its research id.
    answered: HashMap<String, Vec<String>>,
}

/// A research as the card shows it.
pub struct CardRecord {
    pub record: Arc<ResearchRecord>,
    /// Questions it left open that the user answered since.
    pub answered: Vec<String>,
}

impl Default for CardLog {
    fn default() -> Self {
        CardLog {
            log: ResearchLog::default(),
            since: Arc::default(),
            changed: watch::Sender::new(0),
        }
    }
}

impl CardLog {
    /// Records a research and wakes the subscribers.
    pub fn record(&self, session: Option<String>, prompt: String, response: ResearchResponse) {
        {
            let mut since = self.lock();
            self.log.record(session, prompt, response);
            // Answers to researches the log no longer holds are no use.
            let held: Vec<String> = self
                .records()
                .map(|r| r.response.research_id.clone())
                .collect();
            since.answered.retain(|id, _| held.contains(id));
        }
        self.wake();
    }

    /// Takes `questions` the user answered off the open questions of the
    /// latest research of `session` (of all, without one).
    pub fn answered(&self, session: Option<&str>, questions: &[String]) {
        let changed = {
            let mut since = self.lock();
            let Some(record) = self.log.latest(session) else {
                return;
            };
            let answered = since
                .answered
                .entry(record.response.research_id.clone())
                .or_default();
            let before = answered.len();
            for open in &record.response.unanswered {
                let was_asked = questions.iter().any(|q| same_question(q, &open.question));
                if was_asked && !answered.contains(&open.question) {
                    answered.push(open.question.clone());
                }
            }
            answered.len() > before
        };
        if changed {
            self.wake();
        }
    }

    /// The latest research of a session, or of all when `session` is `None`.
    pub fn latest(&self, session: Option<&str>) -> Option<CardRecord> {
        let since = self.lock();
        let record = self.log.latest(session)?;
        let answered = since
            .answered
            .get(&record.response.research_id)
            .cloned()
            .unwrap_or_default();
        Some(CardRecord { record, answered })
    }

    /// Sessions with a research, most recently researched first.
    pub fn sessions(&self) -> Vec<String> {
        self.log.sessions()
    }

    /// A receiver that changes with every research and answer.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Since> {
        self.since.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wake(&self) {
        self.changed.send_modify(|n| *n += 1);
    }

    /// Every research the log holds: the latest of all and of each session.
    fn records(&self) -> impl Iterator<Item = Arc<ResearchRecord>> + '_ {
        let sessions = self.log.sessions();
        self.log.latest(None).into_iter().chain(
            sessions
                .into_iter()
                .filter_map(|s| self.log.latest(Some(&s))),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::research::Unanswered;

    fn response(id: &str, open: &[&str]) -> ResearchResponse {
        let mut response = crate::research::all_open(&crate::research::ResearchRequest {
            prompt: String::new(),
            questions: open.iter().map(|q| q.to_string()).collect(),
            session: None,
            project_context: None,
        });
        response.research_id = id.to_string();
        response
    }

    fn open(log: &CardLog, session: Option<&str>) -> Vec<String> {
        let shown = log.latest(session).expect("a research");
        shown
            .record
            .response
            .unanswered
            .iter()
            .map(|u: &Unanswered| u.question.clone())
            .filter(|q| !shown.answered.contains(q))
            .collect()
    }

    #[test]
    fn answers_leave_the_open_questions_of_their_research() {
        let log = CardLog::default();
        log.record(
            Some("a".into()),
            "p".into(),
            response("r1", &["When?", "Who?"]),
        );
        log.record(
            Some("b".into()),
            "p".into(),
            response("r2", &["Where?", "Who?"]),
        );
        // Of its session, in any case and spacing.
        log.answered(Some("a"), &["  who? ".to_string()]);
        assert_eq!(open(&log, Some("a")), ["When?"]);
        assert_eq!(open(&log, Some("b")), ["Where?", "Who?"]);
        // Without a session: of the latest research of all.
        log.answered(None, &["Where?".to_string()]);
        assert_eq!(open(&log, Some("b")), ["Who?"]);
        assert_eq!(open(&log, None), ["Who?"]);
        // A question the research did not leave open changes nothing.
        let seen = *log.subscribe().borrow();
        log.answered(Some("a"), &["Why?".to_string()]);
        assert_eq!(*log.subscribe().borrow(), seen);
    }
}

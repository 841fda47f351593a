//! The research log as the card shows it: each session's latest research
//! ([`ResearchLog`]) less what became of it since it was recorded, that is
//! the questions the user answered since, and the sessions deleted since.
//!
//! In memory, like the log: the card shows what happened while noggin ran.
//! Subscribers learn of every research, answer and deletion through one
//! watch channel, so the card redraws for each without polling.

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
    /// Deleted sessions, each with the log's newest position when it was
    /// deleted: its researches up to there are gone from the card.
    deleted: HashMap<String, u64>,
}

/// What the card shows of the log.
pub struct CardView {
    /// The latest research of the session asked for, or of all.
    pub research: Option<CardRecord>,
    /// Sessions with a research, most recently researched first.
    pub sessions: Vec<String>,
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
            if let Some(session) = &session {
                // The new research comes after the deletion: it is shown.
                since.deleted.remove(session);
            }
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
            let Some(record) = self.latest_visible(&since, session) else {
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

    /// Forgets the researches of a deleted session.
    pub fn forget(&self, session: &str) {
        {
            let mut since = self.lock();
            let newest = *self.log.subscribe().borrow();
            since.deleted.insert(session.to_string(), newest);
            // Sessions the log itself forgot need no mark.
            let log = &self.log;
            since
                .deleted
                .retain(|s, at| log.latest(Some(s)).is_some_and(|r| r.seq <= *at));
        }
        self.wake();
    }

    /// The latest research of a session (of all when `session` is `None`)
    /// and the sessions with one, in one look: a deletion between two looks
    /// would list the sessions without the one whose research is shown.
    pub fn view(&self, session: Option<&str>) -> CardView {
        let since = self.lock();
        let research = self.latest_visible(&since, session).map(|record| {
            let answered = since
                .answered
                .get(&record.response.research_id)
                .cloned()
                .unwrap_or_default();
            CardRecord { record, answered }
        });
        let sessions = self
            .log
            .sessions()
            .into_iter()
            .filter(|s| !since.deleted.contains_key(s))
            .collect();
        CardView { research, sessions }
    }

    /// A receiver that changes with every research, answer and deletion.
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

    /// The latest research of `session` (or of all) whose session was not
    /// deleted after it. Of all: when the newest was deleted, the newest
    /// of the sessions left.
    fn latest_visible(&self, since: &Since, session: Option<&str>) -> Option<Arc<ResearchRecord>> {
        let shown = |r: &Arc<ResearchRecord>| {
            r.session
                .as_ref()
                .and_then(|s| since.deleted.get(s))
                .is_none_or(|&at| r.seq > at)
        };
        match session {
            Some(_) => self.log.latest(session).filter(shown),
            None => self.records().filter(shown).max_by_key(|r| r.seq),
        }
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
        let shown = log.view(session).research.expect("a research");
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

    #[test]
    fn a_deleted_session_is_gone_until_it_researches_again() {
        let log = CardLog::default();
        log.record(Some("a".into()), "p".into(), response("r1", &["When?"]));
        log.record(Some("b".into()), "p".into(), response("r2", &["Where?"]));
        log.forget("b");
        assert!(log.view(Some("b")).research.is_none());
        let all = log.view(None);
        assert_eq!(all.sessions, ["a"]);
        let shown = all.research.expect("the newest research left");
        assert_eq!(shown.record.response.research_id, "r1");
        log.record(Some("b".into()), "p".into(), response("r3", &["Where?"]));
        let all = log.view(None);
        assert_eq!(all.sessions, ["b", "a"]);
        let shown = all.research.expect("the new research");
        assert_eq!(shown.record.response.research_id, "r3");
    }
}

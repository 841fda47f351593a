//! The latest research of each session, for the web card.
//!
//! Kept in memory: the card shows what happened while it was open, and a
//! research is cheap to repeat. Subscribers learn of every new record through
//! a watch channel, so the card can update without polling the log.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use tokio::sync::watch;

use super::ResearchResponse;

/// Sessions remembered; the least recently researched is forgotten first.
const MAX_SESSIONS: usize = 100;

/// One research as the card shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ResearchRecord {
    pub session: Option<String>,
    /// RFC 3339.
    pub at: String,
    pub prompt: String,
    pub response: ResearchResponse,
    /// Position in the log: higher is newer.
    pub seq: u64,
}

#[derive(Default)]
struct State {
    latest: Option<Arc<ResearchRecord>>,
    by_session: HashMap<String, Arc<ResearchRecord>>,
    seq: u64,
}

/// A cheap, cloneable handle on the log.
#[derive(Clone)]
pub struct ResearchLog {
    // A std mutex: held only to swap an `Arc`, never across `.await`.
    state: Arc<Mutex<State>>,
    changed: watch::Sender<u64>,
}

impl Default for ResearchLog {
    fn default() -> Self {
        ResearchLog {
            state: Arc::default(),
            changed: watch::Sender::new(0),
        }
    }
}

impl ResearchLog {
    /// Records a research and wakes the subscribers.
    pub fn record(&self, session: Option<String>, prompt: String, response: ResearchResponse) {
        let seq = {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            state.seq += 1;
            let record = Arc::new(ResearchRecord {
                session: session.clone(),
                at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                prompt,
                response,
                seq: state.seq,
            });
            if let Some(session) = session {
                state.by_session.insert(session, record.clone());
                if state.by_session.len() > MAX_SESSIONS {
                    let oldest = state
                        .by_session
                        .iter()
                        .min_by_key(|(_, r)| r.seq)
                        .map(|(s, _)| s.clone());
                    if let Some(oldest) = oldest {
                        state.by_session.remove(&oldest);
                    }
                }
            }
            state.latest = Some(record);
            state.seq
        };
        self.changed.send_replace(seq);
    }

    /// The latest research of a session, or of all when `session` is `None`.
    pub fn latest(&self, session: Option<&str>) -> Option<Arc<ResearchRecord>> {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match session {
            Some(session) => state.by_session.get(session).cloned(),
            None => state.latest.clone(),
        }
    }

    /// Known sessions, most recently researched first.
    pub fn sessions(&self) -> Vec<String> {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut sessions: Vec<(&String, u64)> =
            state.by_session.iter().map(|(s, r)| (s, r.seq)).collect();
        sessions.sort_by_key(|s| std::cmp::Reverse(s.1));
        sessions.into_iter().map(|(s, _)| s.clone()).collect()
    }

    /// A receiver that changes with every new record.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }
}

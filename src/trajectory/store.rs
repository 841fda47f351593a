//! The latest analysed trajectories, kept in memory so that
//! `GET /trajectories/{id}` can show their pages: at most [`CAPACITY`],
//! the oldest dropped first, and all gone when noggin stops.
//!
//! An id is 128 random bits: whoever has the link can open the page, the
//! way a share link works, because a link cannot carry a bearer token.

use std::collections::hash_map::RandomState;
use std::collections::VecDeque;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Pages kept at most.
pub const CAPACITY: usize = 20;

/// A page under its id.
type Kept = (String, Arc<str>);

/// The kept pages; a cheap handle.
#[derive(Clone, Default)]
pub struct TrajectoryStore {
    pages: Arc<Mutex<VecDeque<Kept>>>,
}

impl TrajectoryStore {
    /// Keeps `page` under a new id, dropping the oldest beyond the capacity.
    pub fn insert(&self, id: String, page: String) {
        let mut pages = crate::cache::lock(&self.pages);
        if pages.len() >= CAPACITY {
            pages.pop_front();
        }
        pages.push_back((id, page.into()));
    }

    pub fn get(&self, id: &str) -> Option<Arc<str>> {
        crate::cache::lock(&self.pages)
            .iter()
            .find(|(kept, _)| kept == id)
            .map(|(_, page)| page.clone())
    }
}

/// A new id: 32 hex digits that cannot be guessed. `RandomState` is seeded
/// from the operating system's randomness; a counter makes each id new.
pub fn new_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let half = |salt: u64| {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u64(count);
        hasher.write_u64(salt);
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        hasher.finish()
    };
    format!("{:016x}{:016x}", half(1), half(2))
}

/// Whether `id` could be one [`new_id`] made (so that anything else is a
/// plain 404 without a look into the store).
pub fn is_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_new_each_time() {
        let ids: std::collections::HashSet<String> = (0..1000).map(|_| new_id()).collect();
        assert_eq!(ids.len(), 1000);
        assert!(ids.iter().all(|id| is_id(id)));
        assert!(!is_id("../etc/passwd"));
    }

    #[test]
    fn the_store_keeps_the_latest_pages() {
        let store = TrajectoryStore::default();
        for i in 0..CAPACITY + 2 {
            store.insert(format!("{i:032x}"), format!("page {i}"));
        }
        assert!(store.get(&format!("{:032x}", 0)).is_none());
        assert!(store.get(&format!("{:032x}", 1)).is_none());
        assert_eq!(
            store.get(&format!("{:032x}", CAPACITY + 1)).as_deref(),
            Some(format!("page {}", CAPACITY + 1).as_str())
        );
    }
}

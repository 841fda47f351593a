//! Small in-memory caches shared by the index and research: what is worked
//! out once and asked for again and again (stored passages, their analyzed
//! words, BM25 statistics and term impacts).

use std::collections::HashMap;
use std::hash::Hash;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex, MutexGuard};

/// Locks a cache. A panic while it was held leaves nothing half-written
/// that matters (entries are inserted whole), so the cache stays usable.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Shared values by key, at most `capacity` of them; beyond it the map
/// starts over.
pub(crate) struct CappedMap<K, V> {
    map: Mutex<HashMap<K, Arc<V>>>,
    capacity: usize,
}

impl<K: Hash + Eq, V> CappedMap<K, V> {
    pub(crate) fn new(capacity: usize) -> Self {
        CappedMap {
            map: Mutex::default(),
            capacity,
        }
    }

    pub(crate) fn get(&self, key: &K) -> Option<Arc<V>> {
        lock(&self.map).get(key).cloned()
    }

    pub(crate) fn insert(&self, key: K, value: Arc<V>) {
        let mut map = lock(&self.map);
        if map.len() >= self.capacity {
            map.clear();
        }
        map.insert(key, value);
    }
}

/// Data that holds for one searcher generation; a newer generation starts
/// it over.
#[derive(Default)]
pub(crate) struct PerGeneration<T>(Mutex<Generation<T>>);

/// The data of one generation.
#[derive(Default)]
pub(crate) struct Generation<T> {
    id: u64,
    data: T,
}

impl<T> Deref for Generation<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.data
    }
}

impl<T> DerefMut for Generation<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.data
    }
}

impl<T: Default> PerGeneration<T> {
    /// The data, if it is of `generation`: emptied first when `generation`
    /// is newer. Generations only grow, so a searcher older than the data
    /// gets `None` and works without the cache rather than throwing the
    /// newer data away.
    pub(crate) fn of(&self, generation: u64) -> Option<MutexGuard<'_, Generation<T>>> {
        let mut current = lock(&self.0);
        if current.id < generation {
            *current = Generation {
                id: generation,
                data: T::default(),
            };
        }
        (current.id == generation).then_some(current)
    }
}

//! The semantic side of a running noggin: loading the model without holding
//! up start-up, embedding the brain's passages in the background, and dense
//! retrieval fused into search.
//!
//! [`Semantic::start`] spawns one thread at the lowest CPU priority. It loads
//! the model (the status says `loading`, then `loaded`, `absent`, `failed`
//! or `off`, and the log says so once), waits until the BM25 index is
//! ready, and then embeds every passage that has no vector yet, one at a
//! time, small segments (fresh edits) first, starting over whenever the
//! index changes. Vectors are kept in memory by a hash of the passage's
//! text and appended to a file in the data folder, so a restart, a merge of
//! segments or an unchanged re-indexed note costs no recomputation. Search
//! never waits for any of this: a passage without a vector is ranked
//! lexically only.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::Duration;

use serde::Serialize;
use tantivy::index::SegmentId;
use tantivy::schema::Value;
use tantivy::{DocAddress, DocId, Searcher, TantivyDocument};

use super::fusion::reciprocal_rank_fusion;
use super::{dot, Embedder, Error, MODEL_FILE, MODEL_NAME};
use crate::index::{Index, Reranker, SearchFilter, SectionHit};

/// Dense candidates taken into the fusion.
const DENSE_CANDIDATES: usize = 100;
/// Characters of a passage given to the model; its first 510 tokens are
/// embedded and this is comfortably more than they hold.
const PASSAGE_CHARS: usize = 4_000;
/// How often the background thread looks for index changes when idle.
const IDLE_POLL: Duration = Duration::from_millis(500);
/// Header of the vector file: a magic and the vector width.
const VECTOR_MAGIC: &[u8; 4] = b"NGV1";

/// What the model is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ModelState {
    /// Turned off by `--no-model`.
    Off,
    /// Being read from disk.
    Loading,
    Loaded,
    /// No model file: search is lexical.
    Absent,
    /// The file is there but unusable: search is lexical.
    Failed,
}

/// What `/v1/status` says about the semantic model.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ModelStatus {
    pub name: &'static str,
    pub state: ModelState,
    /// Vector width once loaded.
    pub dims: Option<usize>,
    /// The model file looked for.
    pub path: Option<String>,
    /// Why the model is not in use, when it is not.
    pub why: Option<String>,
    /// "bm25+dense" while dense vectors are mixed into search, else "bm25".
    pub retrieval: &'static str,
    /// Passages of the current index with a vector.
    pub embedded: usize,
    /// Passages of the current index still waiting for one.
    pub pending: usize,
}

/// A passage text waiting for its vector.
struct Pending {
    /// The first document with this text.
    address: DocAddress,
    /// The text's hash, which its vector is kept under.
    hash: u64,
    /// Live documents with this text: the one vector serves them all.
    passages: usize,
}

/// A cheap handle on the semantic side; dropping the last one stops the
/// background thread.
#[derive(Clone)]
pub struct Semantic {
    shared: Arc<Shared>,
    _stop: Arc<StopOnDrop>,
}

struct Shared {
    status: Mutex<ModelStatus>,
    embedder: RwLock<Option<Arc<Embedder>>>,
    vectors: VectorStore,
    /// Set when the last handle is dropped; the condvar wakes the thread.
    stop: Mutex<bool>,
    wake: Condvar,
}

struct StopOnDrop(Arc<Shared>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        *self.0.stop.lock().expect("stop lock poisoned") = true;
        self.0.wake.notify_all();
    }
}

impl Semantic {
    /// Starts loading the model from `model_dir` (`None`: the model is off)
    /// and, once loaded, embedding the passages of `index`. Returns at once.
    pub fn start(index: &Index, model_dir: Option<PathBuf>) -> Semantic {
        let path = model_dir.as_ref().map(|d| d.join(MODEL_FILE));
        let status = ModelStatus {
            name: MODEL_NAME,
            state: if model_dir.is_some() {
                ModelState::Loading
            } else {
                ModelState::Off
            },
            dims: None,
            path: path.as_ref().map(|p| p.display().to_string()),
            why: model_dir
                .is_none()
                .then(|| "turned off (--no-model, or no cache folder)".to_string()),
            retrieval: "bm25",
            embedded: 0,
            pending: 0,
        };
        let shared = Arc::new(Shared {
            status: Mutex::new(status),
            embedder: RwLock::new(None),
            vectors: VectorStore::default(),
            stop: Mutex::new(false),
            wake: Condvar::new(),
        });
        let semantic = Semantic {
            _stop: Arc::new(StopOnDrop(shared.clone())),
            shared: shared.clone(),
        };
        match model_dir {
            None => tracing::info!("semantic model off: search is lexical (BM25) only"),
            Some(dir) => {
                let index = index.clone();
                let spawned = std::thread::Builder::new()
                    .name("noggin-semantic".into())
                    .spawn(move || run(shared, index, dir));
                if let Err(error) = spawned {
                    semantic.set_unusable(ModelState::Failed, format!("cannot start: {error}"));
                }
            }
        }
        semantic
    }

    /// A copy of the current status.
    pub fn status(&self) -> ModelStatus {
        self.shared
            .status
            .lock()
            .expect("status lock poisoned")
            .clone()
    }

    /// The loaded model, for scoring (e.g. by the decider); `None` while
    /// loading or without a model.
    pub fn embedder(&self) -> Option<Arc<Embedder>> {
        self.shared
            .embedder
            .read()
            .expect("embedder lock poisoned")
            .clone()
    }

    fn set_unusable(&self, state: ModelState, why: String) {
        let mut status = self.shared.status.lock().expect("status lock poisoned");
        status.state = state;
        status.why = Some(why);
    }
}

impl Shared {
    fn stopped(&self) -> bool {
        *self.stop.lock().expect("stop lock poisoned")
    }

    /// Sleeps up to `timeout` unless stopped; true when stopped.
    fn sleep(&self, timeout: Duration) -> bool {
        let stop = self.stop.lock().expect("stop lock poisoned");
        if *stop {
            return true;
        }
        let (stop, _) = self
            .wake
            .wait_timeout(stop, timeout)
            .expect("stop lock poisoned");
        *stop
    }

    fn update(&self, f: impl FnOnce(&mut ModelStatus)) {
        f(&mut self.status.lock().expect("status lock poisoned"));
    }
}

/// The background thread: load, then embed passages until stopped.
fn run(shared: Arc<Shared>, index: Index, dir: PathBuf) {
    lower_priority();
    let started = std::time::Instant::now();
    let embedder = match Embedder::load(&dir) {
        Ok(e) => Arc::new(e),
        Err(error) => {
            let state = match error {
                Error::Missing { .. } => ModelState::Absent,
                _ => ModelState::Failed,
            };
            match state {
                ModelState::Absent => {
                    tracing::warn!(%error, "semantic model absent: search is lexical (BM25) only")
                }
                _ => {
                    tracing::error!(%error, "semantic model unusable: search is lexical (BM25) only")
                }
            }
            shared.update(|s| {
                s.state = state;
                s.why = Some(error.to_string());
            });
            return;
        }
    };
    let cache_path = index
        .data_dir()
        .join("semantic")
        .join(format!("{}.vectors", MODEL_FILE.trim_end_matches(".bin")));
    let mut cache = match VectorFile::open(&cache_path, embedder.dims()) {
        Ok((file, vectors)) => {
            shared.vectors.insert_many(vectors);
            Some(file)
        }
        Err(error) => {
            // Vectors are then recomputed on every start, but search works.
            tracing::warn!(%error, "semantic vectors will not be kept on disk");
            None
        }
    };
    tracing::info!(
        model = MODEL_NAME,
        path = %embedder.path().display(),
        dims = embedder.dims(),
        load_ms = started.elapsed().as_millis() as u64,
        cached_vectors = shared.vectors.len(),
        "semantic model loaded: search mixes dense vectors into BM25 as passages get them"
    );
    *shared.embedder.write().expect("embedder lock poisoned") = Some(embedder.clone());
    shared.update(|s| {
        s.state = ModelState::Loaded;
        s.dims = Some(embedder.dims());
        s.why = None;
        s.retrieval = "bm25+dense";
    });
    index.set_reranker(Arc::new(DenseReranker {
        shared: shared.clone(),
    }));

    // Embed only once the first reconcile is over: BM25 comes first. (If it
    // never reports, e.g. it failed, go ahead after a minute.)
    let waiting = std::time::Instant::now();
    while index.status().indexing
        || (index.status().last_reconcile.is_none() && waiting.elapsed() < Duration::from_secs(60))
    {
        if shared.sleep(Duration::from_millis(100)) {
            return;
        }
    }
    let mut seen_generation = None;
    loop {
        let searcher = index.searcher();
        let generation = searcher.generation().generation_id();
        if seen_generation != Some(generation) {
            shared.vectors.hash_segments(&index, &searcher);
            seen_generation = Some(generation);
        }
        let pending = shared.vectors.pending(&searcher);
        let embedded = shared.vectors.embedded(&searcher);
        shared.update(|s| {
            s.pending = pending.iter().map(|p| p.passages).sum();
            s.embedded = embedded;
        });
        if pending.is_empty() {
            if shared.sleep(IDLE_POLL) {
                return;
            }
            continue;
        }
        for Pending {
            address,
            hash,
            passages,
        } in pending
        {
            if shared.stopped() {
                return;
            }
            if index.searcher().generation().generation_id() != generation {
                break; // the index changed: look again, fresh edits first
            }
            let Some(text) = passage_text(&index, &searcher, address) else {
                continue;
            };
            let vector = embedder.embed_passage_head(&text, 1);
            if let Some(file) = cache.as_mut() {
                if let Err(error) = file.append(hash, &vector) {
                    tracing::warn!(%error, "semantic vectors will not be kept on disk");
                    cache = None;
                }
            }
            shared.vectors.insert(hash, vector);
            // Every passage with this text has its vector now: the two
            // counts still add up to the passages of the index.
            shared.update(|s| {
                s.pending = s.pending.saturating_sub(passages);
                s.embedded += passages;
            });
        }
    }
}

/// Puts the calling thread at the lowest CPU priority: embedding must not
/// slow down searches or indexing on a small machine.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain system calls on the calling thread's own id.
    unsafe {
        let tid = libc::gettid();
        if libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 19) != 0 {
            tracing::debug!("cannot lower the semantic thread's priority");
        }
    }
}

/// What the model reads of a passage: title, heading and text.
fn passage_text(index: &Index, searcher: &Searcher, address: DocAddress) -> Option<String> {
    let f = index.fields();
    let doc: TantivyDocument = searcher.doc(address).ok()?;
    let get = |field| {
        doc.get_first(field)
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    };
    let (title, heading, text) = (get(f.title), get(f.heading), get(f.text));
    let mut out = title.clone();
    for part in [heading, text] {
        if !part.is_empty() && part != title {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&part);
        }
    }
    if out.len() > PASSAGE_CHARS {
        let mut cut = PASSAGE_CHARS;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
    }
    Some(out)
}

fn text_hash(text: &str) -> u64 {
    // Never 0, which marks a deleted or unread document.
    xxhash_rust::xxh3::xxh3_64(text.as_bytes()).max(1)
}

/// Vectors by passage hash, and the hash of every document of every
/// segment seen.
#[derive(Default)]
struct VectorStore {
    by_hash: RwLock<HashMap<u64, Box<[f32]>>>,
    segments: RwLock<HashMap<SegmentId, Arc<Vec<u64>>>>,
}

impl VectorStore {
    fn len(&self) -> usize {
        self.by_hash.read().expect("vector lock poisoned").len()
    }

    fn insert(&self, hash: u64, vector: Vec<f32>) {
        self.by_hash
            .write()
            .expect("vector lock poisoned")
            .insert(hash, vector.into_boxed_slice());
    }

    fn insert_many(&self, vectors: StoredVectors) {
        self.by_hash
            .write()
            .expect("vector lock poisoned")
            .extend(vectors);
    }

    /// Hashes the passages of segments not seen before and forgets
    /// segments that are gone.
    fn hash_segments(&self, index: &Index, searcher: &Searcher) {
        let live: Vec<SegmentId> = searcher
            .segment_readers()
            .iter()
            .map(|r| r.segment_id())
            .collect();
        self.segments
            .write()
            .expect("segment lock poisoned")
            .retain(|id, _| live.contains(id));
        for (ord, reader) in searcher.segment_readers().iter().enumerate() {
            let id = reader.segment_id();
            if self
                .segments
                .read()
                .expect("segment lock poisoned")
                .contains_key(&id)
            {
                continue;
            }
            let mut hashes = vec![0u64; reader.max_doc() as usize];
            for doc in reader.doc_ids_alive() {
                if let Some(text) = passage_text(index, searcher, DocAddress::new(ord as u32, doc))
                {
                    hashes[doc as usize] = text_hash(&text);
                }
            }
            self.segments
                .write()
                .expect("segment lock poisoned")
                .insert(id, Arc::new(hashes));
        }
    }

    /// The texts of live documents of the searcher without a vector, each
    /// once, small segments (fresh edits) first.
    fn pending(&self, searcher: &Searcher) -> Vec<Pending> {
        let segments = self.segments.read().expect("segment lock poisoned");
        let vectors = self.by_hash.read().expect("vector lock poisoned");
        let mut readers: Vec<(usize, &tantivy::SegmentReader)> =
            searcher.segment_readers().iter().enumerate().collect();
        readers.sort_by_key(|(_, r)| r.num_docs());
        let mut out = Vec::new();
        for (ord, reader) in readers {
            let Some(hashes) = segments.get(&reader.segment_id()) else {
                continue;
            };
            for doc in reader.doc_ids_alive() {
                let hash = hashes.get(doc as usize).copied().unwrap_or(0);
                if hash != 0 && !vectors.contains_key(&hash) {
                    out.push((DocAddress::new(ord as u32, doc), hash));
                }
            }
        }
        // One passage repeated in several notes is embedded once.
        let mut passages: HashMap<u64, usize> = HashMap::new();
        for (_, hash) in &out {
            *passages.entry(*hash).or_default() += 1;
        }
        out.into_iter()
            .filter_map(|(address, hash)| {
                let passages = passages.remove(&hash)?;
                Some(Pending {
                    address,
                    hash,
                    passages,
                })
            })
            .collect()
    }

    /// Live documents of the searcher with a vector.
    fn embedded(&self, searcher: &Searcher) -> usize {
        let mut count = 0;
        self.for_each_vector(searcher, |_, _| count += 1);
        count
    }

    /// Calls `f` with every live document of the searcher that has a vector.
    fn for_each_vector(&self, searcher: &Searcher, mut f: impl FnMut(DocAddress, &[f32])) {
        let segments = self.segments.read().expect("segment lock poisoned");
        let vectors = self.by_hash.read().expect("vector lock poisoned");
        for (ord, reader) in searcher.segment_readers().iter().enumerate() {
            let Some(hashes) = segments.get(&reader.segment_id()) else {
                continue;
            };
            for doc in reader.doc_ids_alive() {
                let hash = hashes.get(doc as usize).copied().unwrap_or(0);
                if let Some(v) = vectors.get(&hash) {
                    f(DocAddress::new(ord as u32, doc as DocId), v);
                }
            }
        }
    }

    /// The `limit` live documents most similar to `query`.
    fn nearest(&self, searcher: &Searcher, query: &[f32], limit: usize) -> Vec<(f32, DocAddress)> {
        let mut scored = Vec::new();
        self.for_each_vector(searcher, |address, v| scored.push((dot(query, v), address)));
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        scored.truncate(limit);
        scored
    }
}

/// Fuses dense similarity into [`Index::search`].
struct DenseReranker {
    shared: Arc<Shared>,
}

impl Reranker for DenseReranker {
    fn rerank(
        &self,
        index: &Index,
        query: &str,
        filter: &SearchFilter,
        lexical: Vec<SectionHit>,
        limit: usize,
    ) -> Vec<SectionHit> {
        let Some(embedder) = self
            .shared
            .embedder
            .read()
            .expect("embedder lock poisoned")
            .clone()
        else {
            return lexical;
        };
        let searcher = index.searcher();
        let query_vector = &embedder.embed_queries(&[query])[0];
        let dense: Vec<SectionHit> = self
            .shared
            .vectors
            .nearest(&searcher, query_vector, DENSE_CANDIDATES)
            .into_iter()
            .filter_map(|(score, address)| index.section_hit(&searcher, address, score).ok())
            .filter(|hit| passes(filter, hit))
            .collect();
        if dense.is_empty() {
            return lexical;
        }
        reciprocal_rank_fusion(lexical, dense, |hit| (hit.path.clone(), hit.ord), limit)
            .into_iter()
            .map(|(mut hit, score)| {
                hit.score = score;
                hit
            })
            .collect()
    }
}

/// Whether a passage lies within a search filter (the lexical side applies
/// the same filter in its query).
fn passes(filter: &SearchFilter, hit: &SectionHit) -> bool {
    if let Some(folder) = filter.folder.as_deref().map(crate::index::folder_key) {
        let nfc = |text: &str| crate::brain::parse::nfc(text).into_owned();
        if !folder.is_empty() && !nfc(&hit.path).starts_with(&format!("{}/", nfc(&folder))) {
            return false;
        }
    }
    if let Some(tag) = filter
        .tag
        .as_deref()
        .and_then(crate::brain::parse::normalize_tag)
    {
        if !crate::index::has_tag(&hit.tags, &tag) {
            return false;
        }
    }
    if let Some(kind) = filter.kind {
        if hit.kind != kind {
            return false;
        }
    }
    true
}

/// Vectors read back from the file, by passage hash.
type StoredVectors = Vec<(u64, Box<[f32]>)>;

/// The file of computed vectors: a header, then `(hash, vector)` records
/// appended as they are computed.
struct VectorFile {
    file: File,
    path: PathBuf,
}

impl VectorFile {
    /// Opens (or starts) the file and reads the vectors it holds. A file of
    /// another width or with a damaged header is started over; a torn last
    /// record is cut off.
    fn open(path: &Path, dims: usize) -> Result<(VectorFile, StoredVectors), Error> {
        let err = |source| Error::Cache {
            path: path.to_path_buf(),
            source,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(err)?;
        }
        let mut header = VECTOR_MAGIC.to_vec();
        header.extend_from_slice(&(dims as u32).to_le_bytes());
        let record = 8 + dims * 4;
        let mut vectors = Vec::new();
        let mut good_len = 0u64;
        if let Ok(file) = File::open(path) {
            let mut reader = BufReader::new(file);
            let mut head = [0u8; 8];
            if reader.read_exact(&mut head).is_ok() && head[..] == header[..] {
                good_len = 8;
                let mut buf = vec![0u8; record];
                while reader.read_exact(&mut buf).is_ok() {
                    let hash = u64::from_le_bytes(buf[..8].try_into().expect("8 bytes"));
                    let vector: Box<[f32]> = buf[8..]
                        .chunks_exact(4)
                        .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
                        .collect();
                    vectors.push((hash, vector));
                    good_len += record as u64;
                }
            }
        }
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(path)
            .map_err(err)?;
        if good_len == 0 {
            file.set_len(0).map_err(err)?;
            file.write_all(&header).map_err(err)?;
        } else {
            file.set_len(good_len).map_err(err)?;
        }
        use std::io::Seek;
        file.seek(std::io::SeekFrom::End(0)).map_err(err)?;
        Ok((
            VectorFile {
                file,
                path: path.to_path_buf(),
            },
            vectors,
        ))
    }

    fn append(&mut self, hash: u64, vector: &[f32]) -> Result<(), Error> {
        let mut buf = Vec::with_capacity(8 + vector.len() * 4);
        buf.extend_from_slice(&hash.to_le_bytes());
        for v in vector {
            buf.extend_from_slice(&v.to_le_bytes());
        }
        self.file.write_all(&buf).map_err(|source| Error::Cache {
            path: self.path.clone(),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A text in several notes waits once for its vector, and counts as
    /// every passage it is: embedded and pending add up to the passages.
    #[test]
    fn a_text_in_two_notes_is_embedded_once_and_counted_twice() {
        let same = "# Same\n\nThe same words in two folders.\n";
        let (_brain, index) = crate::index::indexed_brain(&[
            ("A/Same.md", same),
            ("B/Same.md", same),
            ("Other.md", "# Other\n\nSomething else.\n"),
        ]);
        let searcher = index.searcher();
        let store = VectorStore::default();
        store.hash_segments(&index, &searcher);
        let pending = store.pending(&searcher);
        let mut passages: Vec<usize> = pending.iter().map(|p| p.passages).collect();
        passages.sort();
        assert_eq!(passages, vec![1, 2]);
        let twice = pending.iter().find(|p| p.passages == 2).unwrap();
        store.insert(twice.hash, vec![1.0, 0.0]);
        assert_eq!(store.embedded(&searcher), 2);
        let left: usize = store.pending(&searcher).iter().map(|p| p.passages).sum();
        assert_eq!(left, 1);
    }

    #[test]
    fn the_vector_file_survives_a_torn_record_and_a_new_width() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v").join("m.vectors");
        {
            let (mut file, got) = VectorFile::open(&path, 2).unwrap();
            assert!(got.is_empty());
            file.append(7, &[1.0, 2.0]).unwrap();
            file.append(9, &[3.0, 4.0]).unwrap();
        }
        // A crash in the middle of a record.
        let len = std::fs::metadata(&path).unwrap().len();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(len - 3)
            .unwrap();
        {
            let (mut file, got) = VectorFile::open(&path, 2).unwrap();
            assert_eq!(got.len(), 1);
            assert_eq!((got[0].0, &got[0].1[..]), (7, &[1.0f32, 2.0][..]));
            file.append(11, &[5.0, 6.0]).unwrap();
        }
        let (_, got) = VectorFile::open(&path, 2).unwrap();
        assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), vec![7, 11]);
        // Another model width: start over.
        let (_, got) = VectorFile::open(&path, 3).unwrap();
        assert!(got.is_empty());
        let (_, got) = VectorFile::open(&path, 3).unwrap();
        assert!(got.is_empty());
    }
}

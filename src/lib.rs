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
//! - [`app`] is the application core: one handle with every use case and
//!   its limits ([`limits`]), which every way in goes through;
//! - [`context`] keeps each assistant session's working context durable
//!   and renders it, with the pack and the message window, within a budget;
//! - the ways in are thin adapters over [`app`]: [`cli`] (the terminal),
//!   [`server`] (HTTP and the web card) and [`mcp`] (stdio and `/mcp`);
//! - [`trajectory`] reads an agent's tool-call trajectory and says where
//!   it lost context and what a compaction should have kept;
//! - [`config`] turns flags and `NOGGIN_*` variables into validated settings.
//!
//! # Where to change what
//!
//! | to change … | look in |
//! |---|---|
//! | what counts as a note, how it is split into sections | `brain/scan.rs`, `brain/parse.rs` |
//! | what a wikilink or a note name leads to (note pages, MCP `read_note`) | `brain/names.rs` |
//! | tokenizing, stemming, Korean/CJK bigrams and single characters | `index/analyzer.rs` |
//! | ranking and snippets | `index/search.rs`, `index/rank.rs` (notes, word pairs), `index/impacts.rs` |
//! | how a question is decided | `research/decider.rs`; what a question asks for (kind, technical shape, value forms, dates) and what a sentence offers: `research/question.rs`; a new kind of decider: `research/deciders.rs` |
//! | the format of written answers | `knowledge/note.rs` |
//! | a limit on what callers send | `limits.rs` (the OpenAPI document follows) |
//! | a use case, for every way in at once | `app/mod.rs` |
//! | an HTTP route | `server/<resource>.rs` and `server/openapi.rs` |
//! | a CLI command | `cli/<command>.rs` and `config.rs` |
//! | an MCP tool | `mcp/mod.rs` (`/mcp` keeps no MCP sessions) |
//! | what MCP answers to a request rmcp would misread | `mcp/jsonrpc.rs` (stdio: `mcp/stdio.rs`) |
//! | connection and request-body time limits | `server/serve.rs` |
//! | memory a live noggin gives back | `memory.rs` |
//! | who may write a data folder, and for which brain | `index/owner.rs` |
//! | keeping the index in step with the brain; the first pass into an empty index | `index/writer.rs`; `index/writer/first_pass.rs` |
//! | when searches see a commit (the shared reader, reloaded by the first search after it) | `index/mod.rs` (`Reader`) |
//! | session events, the working-context block, the pack, the window | `context/` |
//! | what is stripped from text an agent sends or a note holds, or shown in a terminal; a code block's lines | `text.rs` |
//! | a pattern of lost context; a transcript format | `trajectory/patterns.rs`; `trajectory/parse.rs` |
//!
//! `docs/architecture.md` draws the layers and the data flow.

pub mod app;
pub mod brain;
mod cache;
pub mod cli;
pub mod config;
pub mod context;
pub mod index;
pub mod knowledge;
pub mod limits;
pub mod mcp;
mod memory;
pub mod research;
pub mod semantic;
pub mod server;
pub mod text;
pub mod trajectory;

//! noggin's integration tests: one binary, a module per area.
//!
//! Every test works on its own temp copy of a fixture brain and, where it
//! needs HTTP, its own server on a free loopback port (see [`helpers`]).

mod helpers;

mod alignment_loop;
mod answers;
mod card;
mod cli;
mod decider;
mod mcp;
mod nothing_lost;
mod research;
mod safety;
mod search;
mod semantic;
mod session_store;
mod sessions;
mod trajectories;

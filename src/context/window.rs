//! The message window: a chat history cut to a token budget without losing
//! the user's request and without splitting a tool call from its result.
//!
//! Messages come in the OpenAI shape (`tool_calls` on the assistant, `role:
//! "tool"` results with `tool_call_id`) or the Anthropic shape (`tool_use` and
//! `tool_result` content blocks), or a mix. First, orphans (a call whose
//! result is nowhere, a result whose call is nowhere) are removed from their
//! message and reported, never flattened into text. Then messages linked by a
//! call id form one unit that is kept or dropped whole. The latest user
//! message's unit, system messages and any protected ones are kept whatever
//! the budget; the rest is filled newest first until the next unit does not
//! fit, so the window is the recent end of the history plus what must stay.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::block::render_block;
use super::state::WorkingContext;
use super::{DEFAULT_BLOCK_BUDGET_CHARS, MAX_WINDOW_BUDGET_TOKENS, MAX_WINDOW_MESSAGES};

/// Names the token estimate, so a caller knows what the numbers mean.
pub const ESTIMATOR: &str = "noggin-chars-v1: ceil(non-CJK characters of the message JSON / 4) \
     + 1 per Hangul, Han or Kana character + 4 per message";
/// Tokens a message costs beyond its text (role, separators).
const MESSAGE_OVERHEAD_TOKENS: usize = 4;

/// `POST /v1/context/window` body.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WindowRequest {
    /// The chat history, oldest first: OpenAI (`role`, `content`,
    /// `tool_calls`) or Anthropic (`role`, `content` blocks) messages.
    pub messages: Vec<Value>,
    /// Tokens (not characters) the window may take, pinned block included,
    /// as noggin estimates them: a token for every 4 characters of a
    /// message's JSON, one for each Hangul, Han or Kana character, and 4 a
    /// message.
    #[serde(deserialize_with = "super::budget")]
    #[schemars(range(max = MAX_WINDOW_BUDGET_TOKENS))]
    pub budget: usize,
    #[serde(default)]
    pub protect: Protect,
    /// The session whose working-context block `protect.working_context` pins.
    #[serde(default)]
    pub session: Option<String>,
}

/// What is kept whatever the budget (the latest user message always is).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Protect {
    /// Keep `system` and `developer` messages (default true).
    #[serde(default = "default_true")]
    pub system: bool,
    /// Indexes of further messages to keep.
    #[serde(default)]
    pub messages: Vec<usize>,
    /// Pin the session's working-context block (needs `session`).
    #[serde(default)]
    pub working_context: bool,
}

fn default_true() -> bool {
    true
}

impl Default for Protect {
    fn default() -> Self {
        Protect {
            system: true,
            messages: Vec::new(),
            working_context: false,
        }
    }
}

/// Why a window request was refused.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum InvalidWindow {
    #[error("at most {MAX_WINDOW_MESSAGES} messages (got {0})")]
    TooManyMessages(usize),
    #[error("budget must be a whole number of tokens from 0 to {MAX_WINDOW_BUDGET_TOKENS}")]
    BudgetTooLarge,
    #[error("message {0} must be an object with a string `role`")]
    BadMessage(usize),
    #[error("protect.messages names message {0}, but there are only {1}")]
    BadProtectedIndex(usize, usize),
    #[error("protect.working_context needs a `session`")]
    NoSession,
}

impl InvalidWindow {
    pub fn code(&self) -> &'static str {
        match self {
            InvalidWindow::TooManyMessages(_) => "too-many-messages",
            InvalidWindow::BudgetTooLarge => "invalid-budget",
            InvalidWindow::BadMessage(_) => "invalid-message",
            InvalidWindow::BadProtectedIndex(..) => "invalid-protect",
            InvalidWindow::NoSession => "missing-session",
        }
    }
}

impl WindowRequest {
    /// Checks the request before any work.
    pub fn validate(&self) -> Result<(), InvalidWindow> {
        if self.messages.len() > MAX_WINDOW_MESSAGES {
            return Err(InvalidWindow::TooManyMessages(self.messages.len()));
        }
        if self.budget > MAX_WINDOW_BUDGET_TOKENS {
            return Err(InvalidWindow::BudgetTooLarge);
        }
        for (i, message) in self.messages.iter().enumerate() {
            if !message.get("role").is_some_and(Value::is_string) {
                return Err(InvalidWindow::BadMessage(i));
            }
        }
        if let Some(&i) = self
            .protect
            .messages
            .iter()
            .find(|&&i| i >= self.messages.len())
        {
            return Err(InvalidWindow::BadProtectedIndex(i, self.messages.len()));
        }
        if self.protect.working_context && self.session.is_none() {
            return Err(InvalidWindow::NoSession);
        }
        Ok(())
    }
}

/// A call or result and where it sits in its message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Slot {
    /// `tool_calls[i]` of an OpenAI assistant message.
    OpenAiCall(usize),
    /// The whole `role: "tool"` message.
    OpenAiResult,
    /// `content[i]` of an Anthropic message.
    Block(usize),
}

/// The tool links of one message.
#[derive(Debug, Default)]
struct Links {
    calls: Vec<(String, Slot)>,
    results: Vec<(String, Slot)>,
}

fn links_of(message: &Value) -> Links {
    let mut links = Links::default();
    let role = message.get("role").and_then(Value::as_str).unwrap_or("");
    if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
        for (i, call) in calls.iter().enumerate() {
            let id = call.get("id").and_then(Value::as_str).unwrap_or("");
            links.calls.push((id.to_string(), Slot::OpenAiCall(i)));
        }
    }
    if role == "tool" {
        let id = message
            .get("tool_call_id")
            .and_then(Value::as_str)
            .unwrap_or("");
        links.results.push((id.to_string(), Slot::OpenAiResult));
    }
    if let Some(blocks) = message.get("content").and_then(Value::as_array) {
        for (i, block) in blocks.iter().enumerate() {
            match block.get("type").and_then(Value::as_str) {
                Some("tool_use") => {
                    let id = block.get("id").and_then(Value::as_str).unwrap_or("");
                    links.calls.push((id.to_string(), Slot::Block(i)));
                }
                Some("tool_result") => {
                    let id = block
                        .get("tool_use_id")
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    links.results.push((id.to_string(), Slot::Block(i)));
                }
                _ => {}
            }
        }
    }
    links
}

/// True for a message the user typed: role `user` with content that is not
/// only tool results.
fn is_user_text(message: &Value) -> bool {
    if message.get("role").and_then(Value::as_str) != Some("user") {
        return false;
    }
    match message.get("content") {
        Some(Value::Array(blocks)) => blocks
            .iter()
            .any(|b| b.get("type").and_then(Value::as_str) != Some("tool_result")),
        Some(Value::Null) | None => false,
        Some(_) => true,
    }
}

fn is_system(message: &Value) -> bool {
    matches!(
        message.get("role").and_then(Value::as_str),
        Some("system" | "developer")
    )
}

fn has_content(message: &Value) -> bool {
    match message.get("content") {
        None | Some(Value::Null) => false,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(_) => true,
    }
}

/// Estimated tokens of one message (see [`ESTIMATOR`]).
pub fn estimate_tokens(message: &Value) -> usize {
    let text = message.to_string();
    let (mut wide, mut other) = (0usize, 0usize);
    for c in text.chars() {
        if crate::index::analyzer::is_cjk(c) {
            wide += 1;
        } else {
            other += 1;
        }
    }
    wide + other.div_ceil(4) + MESSAGE_OVERHEAD_TOKENS
}

/// A call or result with no partner in the input.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct Orphan {
    /// `call` or `result`.
    pub kind: &'static str,
    /// The message it was in.
    pub index: usize,
    pub id: String,
}

/// A change made to keep the window's promises.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct Repair {
    /// `removed-orphan-call`, `removed-orphan-result`,
    /// `dropped-emptied-message`, `kept-latest-user-message`,
    /// `kept-protected-message`.
    pub kind: &'static str,
    pub index: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// A message left out of the window.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct Dropped {
    pub index: usize,
    pub role: String,
    pub tokens: usize,
    /// `budget` or `emptied-by-repair`.
    pub reason: &'static str,
}

/// The token accounting of a window.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct Tokens {
    pub budget: usize,
    /// Kept messages plus the pinned block.
    pub used: usize,
    /// All input messages.
    pub input: usize,
    pub pinned: usize,
}

/// A pinned block, counted in the budget.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct Pinned {
    pub block: String,
    pub tokens: usize,
    /// Where the caller puts it: the system prompt (Anthropic) or a system
    /// message before the window (OpenAI).
    pub placement: &'static str,
}

/// `POST /v1/context/window` response.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Window {
    /// The kept messages, in their original order, after repairs.
    pub messages: Vec<Value>,
    /// Input index of each kept message.
    pub kept: Vec<usize>,
    pub dropped: Vec<Dropped>,
    pub orphans: Vec<Orphan>,
    pub repairs: Vec<Repair>,
    /// Input index of the latest user message, if there is one.
    pub latest_user_index: Option<usize>,
    pub tokens: Tokens,
    pub estimator: &'static str,
    /// True when what must be kept alone exceeds the budget.
    pub over_budget: bool,
    pub pinned: Option<Pinned>,
    /// Why no block is pinned although `protect.working_context` asked for
    /// one: `empty-working-context` or `budget` (too small to hold any of it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pinned_left_out: Option<&'static str>,
}

/// Orphans of a history: calls and results whose id has no partner.
fn find_orphans(all_links: &[Links]) -> Vec<(Orphan, Slot)> {
    let mut call_ids = BTreeSet::new();
    let mut result_ids = BTreeSet::new();
    for links in all_links {
        call_ids.extend(links.calls.iter().map(|(id, _)| id.as_str()));
        result_ids.extend(links.results.iter().map(|(id, _)| id.as_str()));
    }
    let mut orphans = Vec::new();
    for (index, links) in all_links.iter().enumerate() {
        for (id, slot) in &links.calls {
            if id.is_empty() || !result_ids.contains(id.as_str()) {
                orphans.push((
                    Orphan {
                        kind: "call",
                        index,
                        id: id.clone(),
                    },
                    *slot,
                ));
            }
        }
        for (id, slot) in &links.results {
            if id.is_empty() || !call_ids.contains(id.as_str()) {
                orphans.push((
                    Orphan {
                        kind: "result",
                        index,
                        id: id.clone(),
                    },
                    *slot,
                ));
            }
        }
    }
    orphans
}

/// The orphans of a list of messages (for checking a window's output).
pub fn orphans_in(messages: &[Value]) -> Vec<Orphan> {
    let links: Vec<Links> = messages.iter().map(links_of).collect();
    find_orphans(&links).into_iter().map(|(o, _)| o).collect()
}

/// Removes the orphan slots from a message; `None` when nothing is left
/// of it.
fn remove_slots(message: &Value, slots: &BTreeSet<Slot>) -> Option<Value> {
    if slots.contains(&Slot::OpenAiResult) {
        return None;
    }
    let mut message = message.clone();
    let calls: BTreeSet<usize> = slots
        .iter()
        .filter_map(|s| match s {
            Slot::OpenAiCall(i) => Some(*i),
            _ => None,
        })
        .collect();
    let blocks: BTreeSet<usize> = slots
        .iter()
        .filter_map(|s| match s {
            Slot::Block(i) => Some(*i),
            _ => None,
        })
        .collect();
    let object = message.as_object_mut()?;
    let mut no_calls_left = false;
    if !calls.is_empty() {
        if let Some(Value::Array(list)) = object.get_mut("tool_calls") {
            let mut i = 0;
            list.retain(|_| {
                let keep = !calls.contains(&i);
                i += 1;
                keep
            });
            no_calls_left = list.is_empty();
        }
        if no_calls_left {
            object.remove("tool_calls");
        }
    }
    if !blocks.is_empty() {
        if let Some(Value::Array(list)) = object.get_mut("content") {
            let mut i = 0;
            list.retain(|_| {
                let keep = !blocks.contains(&i);
                i += 1;
                keep
            });
        }
    }
    let has_calls = object
        .get("tool_calls")
        .and_then(Value::as_array)
        .is_some_and(|l| !l.is_empty());
    if !has_calls && !has_content(&message) {
        return None;
    }
    Some(message)
}

/// Unions messages linked by a call id; returns each message's unit root.
///
/// A result belongs to the latest call with its id before it: some servers
/// number calls `call_0`, `call_1` … afresh every turn, and the same id in a
/// later turn is another call, not a link back to the first one. A result
/// with no such call before it links to the first call with its id after it.
fn units(all_links: &[Option<Links>]) -> Vec<usize> {
    let mut parent: Vec<usize> = (0..all_links.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    fn union(parent: &mut [usize], x: usize, y: usize) {
        let (a, b) = (root(parent, x), root(parent, y));
        parent[a.max(b)] = a.min(b);
    }
    let mut latest_call: BTreeMap<&str, usize> = BTreeMap::new();
    // Results that came before any call with their id.
    let mut waiting: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (index, links) in all_links.iter().enumerate() {
        let Some(links) = links else { continue };
        for (id, _) in &links.results {
            match latest_call.get(id.as_str()) {
                Some(&call) => union(&mut parent, index, call),
                None => waiting.entry(id.as_str()).or_default().push(index),
            }
        }
        for (id, _) in &links.calls {
            latest_call.insert(id.as_str(), index);
            for result in waiting.remove(id.as_str()).unwrap_or_default() {
                union(&mut parent, index, result);
            }
        }
    }
    (0..all_links.len()).map(|i| root(&mut parent, i)).collect()
}

/// The working-context block to pin for `request`: whole when the window
/// has room for it beside the whole history; else cut to the room the
/// history leaves, but given at least half the window (at about four
/// characters a token), and never more than the block's default budget.
pub fn block_to_pin(context: &WorkingContext, request: &WindowRequest) -> Option<String> {
    let history: usize = request.messages.iter().map(estimate_tokens).sum();
    let half = request.budget.saturating_mul(2);
    let free = request.budget.saturating_sub(history).saturating_mul(4);
    let mut chars = DEFAULT_BLOCK_BUDGET_CHARS.min(half.max(free));
    loop {
        let block = render_block(context, chars).block?;
        let tokens = estimate_tokens(&Value::String(block.clone()));
        let over = (history + tokens).saturating_sub(request.budget);
        if over == 0 || chars <= half {
            return Some(block);
        }
        // The estimate counts escapes and wide characters: take off what
        // went over, down to half the window.
        chars = chars.saturating_sub(over * 4).max(half);
    }
}

/// Cuts a validated history to its budget; `pinned` is a block to pin (its
/// tokens count against the budget).
pub fn fit_window(request: &WindowRequest, pinned: Option<String>) -> Window {
    let input = &request.messages;
    let input_tokens: usize = input.iter().map(estimate_tokens).sum();
    let all_links: Vec<Links> = input.iter().map(links_of).collect();
    let found = find_orphans(&all_links);

    // 1. Remove orphans from their messages.
    let mut repairs = Vec::new();
    let mut slots_by_message: BTreeMap<usize, BTreeSet<Slot>> = BTreeMap::new();
    for (orphan, slot) in &found {
        slots_by_message
            .entry(orphan.index)
            .or_default()
            .insert(*slot);
        repairs.push(Repair {
            kind: if orphan.kind == "call" {
                "removed-orphan-call"
            } else {
                "removed-orphan-result"
            },
            index: orphan.index,
            id: Some(orphan.id.clone()),
        });
    }
    let mut dropped = Vec::new();
    let repaired: Vec<Option<Value>> = input
        .iter()
        .enumerate()
        .map(|(i, message)| match slots_by_message.get(&i) {
            None => Some(message.clone()),
            Some(slots) => {
                let kept = remove_slots(message, slots);
                if kept.is_none() {
                    repairs.push(Repair {
                        kind: "dropped-emptied-message",
                        index: i,
                        id: None,
                    });
                    dropped.push(Dropped {
                        index: i,
                        role: role_of(message),
                        tokens: estimate_tokens(message),
                        reason: "emptied-by-repair",
                    });
                }
                kept
            }
        })
        .collect();

    // 2. Units of linked messages, and their costs.
    let links: Vec<Option<Links>> = repaired.iter().map(|m| m.as_ref().map(links_of)).collect();
    let unit_of = units(&links);
    let tokens: Vec<usize> = repaired
        .iter()
        .map(|m| m.as_ref().map_or(0, estimate_tokens))
        .collect();
    let mut members: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, m) in repaired.iter().enumerate() {
        if m.is_some() {
            members.entry(unit_of[i]).or_default().push(i);
        }
    }
    let cost = |unit: usize| -> usize { members[&unit].iter().map(|&i| tokens[i]).sum() };

    // 3. What must stay.
    let latest_user_index = (0..input.len())
        .rev()
        .find(|&i| repaired[i].as_ref().is_some_and(is_user_text));
    let mut must: BTreeSet<usize> = BTreeSet::new();
    let mut must_reason: BTreeMap<usize, &'static str> = BTreeMap::new();
    if let Some(i) = latest_user_index {
        must.insert(unit_of[i]);
        must_reason.insert(unit_of[i], "kept-latest-user-message");
    }
    for (i, m) in repaired.iter().enumerate() {
        let Some(m) = m else { continue };
        if (request.protect.system && is_system(m)) || request.protect.messages.contains(&i) {
            must.insert(unit_of[i]);
            must_reason
                .entry(unit_of[i])
                .or_insert("kept-protected-message");
        }
    }
    let pinned = pinned.map(|block| {
        let tokens = estimate_tokens(&Value::String(block.clone()));
        Pinned {
            block,
            tokens,
            placement: "system",
        }
    });
    let pinned_tokens = pinned.as_ref().map_or(0, |p| p.tokens);
    let mut used = pinned_tokens + must.iter().map(|&u| cost(u)).sum::<usize>();
    let over_budget = used > request.budget;

    // 4. Newest first until the next unit does not fit.
    let mut by_newest: Vec<(usize, usize)> = members
        .iter()
        .map(|(&unit, list)| (*list.iter().max().unwrap_or(&unit), unit))
        .collect();
    by_newest.sort_by(|a, b| b.cmp(a));
    let mut keep: BTreeSet<usize> = must.clone();
    for (_, unit) in by_newest {
        if must.contains(&unit) {
            continue;
        }
        let c = cost(unit);
        if used + c > request.budget {
            break;
        }
        used += c;
        keep.insert(unit);
    }

    // A must-keep unit outside the newest run is a repair worth naming.
    let newest_kept_run_start = {
        let mut start = input.len();
        for i in (0..input.len()).rev() {
            if repaired[i].is_none() {
                continue;
            }
            if keep.contains(&unit_of[i]) {
                start = i;
            } else {
                break;
            }
        }
        start
    };
    for (&unit, reason) in &must_reason {
        let first = members[&unit][0];
        if first < newest_kept_run_start {
            repairs.push(Repair {
                kind: reason,
                index: first,
                id: None,
            });
        }
    }

    let mut messages = Vec::new();
    let mut kept = Vec::new();
    for (i, m) in repaired.into_iter().enumerate() {
        let Some(m) = m else { continue };
        if keep.contains(&unit_of[i]) {
            messages.push(m);
            kept.push(i);
        } else {
            dropped.push(Dropped {
                index: i,
                role: role_of(&input[i]),
                tokens: tokens[i],
                reason: "budget",
            });
        }
    }
    dropped.sort_by_key(|d| d.index);
    Window {
        messages,
        kept,
        dropped,
        orphans: found.into_iter().map(|(o, _)| o).collect(),
        repairs,
        latest_user_index,
        tokens: Tokens {
            budget: request.budget,
            used,
            input: input_tokens,
            pinned: pinned_tokens,
        },
        estimator: ESTIMATOR,
        over_budget,
        pinned,
        pinned_left_out: None,
    }
}

fn role_of(message: &Value) -> String {
    message
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn request(messages: Vec<Value>, budget: usize) -> WindowRequest {
        WindowRequest {
            messages,
            budget,
            protect: Protect::default(),
            session: None,
        }
    }

    fn openai_call(id: &str) -> Value {
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": id, "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"src/lib.rs\"}"}}
        ]})
    }

    fn openai_result(id: &str) -> Value {
        json!({"role": "tool", "tool_call_id": id, "content": "fn main() {} ".repeat(20)})
    }

    #[test]
    fn the_pinned_block_takes_the_room_the_history_leaves() {
        use crate::context::state::Item;
        let context = WorkingContext {
            goals: (0..8)
                .map(|i| Item {
                    text: format!("goal number {i}: wire the refund button to the payments API"),
                    done: false,
                })
                .collect(),
            ..WorkingContext::default()
        };
        let whole = render_block(&context, DEFAULT_BLOCK_BUDGET_CHARS)
            .block
            .unwrap();
        let tokens = |b: &str| estimate_tokens(&Value::String(b.to_string()));
        let short = vec![json!({"role": "user", "content": "do the refund"})];
        // Room for the whole block beside a short history: all of it, though
        // it is more than half the window.
        let budget = tokens(&whole) + estimate_tokens(&short[0]);
        assert!(whole.chars().count() > budget * 2);
        let pinned = block_to_pin(&context, &request(short.clone(), budget)).unwrap();
        assert_eq!(pinned, whole);
        // A little less room: cut to it, and the window stays in budget.
        let pinned = block_to_pin(&context, &request(short.clone(), budget - 20)).unwrap();
        assert!(
            pinned.ends_with(crate::context::block::BLOCK_FOOTER) && pinned.len() < whole.len()
        );
        let window = fit_window(&request(short, budget - 20), Some(pinned));
        assert!(!window.over_budget, "{:?}", window.tokens);
        // A long history leaves no room: the block still gets half the
        // window, about two characters a token of it.
        let long: Vec<Value> = (0..40)
            .map(|i| json!({"role": "user", "content": format!("message {i} ").repeat(10)}))
            .collect();
        let pinned = block_to_pin(&context, &request(long, 200)).unwrap();
        assert!(pinned.chars().count() <= 400, "{pinned}");
    }

    #[test]
    fn the_oldest_user_request_survives_a_long_tool_run() {
        let mut messages = vec![
            json!({"role": "user", "content": "Refactor the parser and keep the tests green"}),
        ];
        for i in 0..25 {
            messages.push(openai_call(&format!("c{i}")));
            messages.push(openai_result(&format!("c{i}")));
        }
        while messages.len() < 60 {
            messages.push(json!({"role": "assistant", "content": "working on it"}));
        }
        let window = fit_window(&request(messages.clone(), 400), None);
        assert_eq!(window.kept[0], 0, "the request is kept");
        assert_eq!(window.latest_user_index, Some(0));
        assert!(window.kept.len() < 60);
        assert!(window.tokens.used <= 400);
        assert!(orphans_in(&window.messages).is_empty());
        assert!(window
            .repairs
            .iter()
            .any(|r| r.kind == "kept-latest-user-message" && r.index == 0));
    }

    #[test]
    fn a_call_id_used_again_in_a_later_turn_is_another_call() {
        let big = json!({"role": "tool", "tool_call_id": "call_0", "content": "x".repeat(2_000)});
        let messages = vec![
            json!({"role": "user", "content": "read the parser"}),
            openai_call("call_0"),
            big,
            json!({"role": "user", "content": "now run the tests"}),
            openai_call("call_0"),
            json!({"role": "tool", "tool_call_id": "call_0", "content": "ok"}),
        ];
        let window = fit_window(&request(messages, 200), None);
        assert_eq!(window.kept, [3, 4, 5], "{:?}", window.dropped);
        assert!(orphans_in(&window.messages).is_empty());
    }

    #[test]
    fn orphans_are_removed_and_reported() {
        let messages = vec![
            json!({"role": "user", "content": "go"}),
            json!({"role": "assistant", "content": "reading", "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "x", "arguments": "{}"}},
                {"id": "b", "type": "function", "function": {"name": "y", "arguments": "{}"}}
            ]}),
            openai_result("a"),
            openai_result("zzz"),
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "nope", "content": "x"}
            ]}),
        ];
        let window = fit_window(&request(messages, 100_000), None);
        let orphan_ids: Vec<&str> = window.orphans.iter().map(|o| o.id.as_str()).collect();
        assert_eq!(orphan_ids, ["b", "zzz", "nope"]);
        assert_eq!(window.kept, [0, 1, 2]);
        assert_eq!(
            window.messages[1]["tool_calls"].as_array().unwrap().len(),
            1
        );
        assert_eq!(window.messages[1]["content"], "reading");
        assert!(orphans_in(&window.messages).is_empty());
        assert_eq!(
            window.dropped.iter().map(|d| d.reason).collect::<Vec<_>>(),
            ["emptied-by-repair", "emptied-by-repair"]
        );
    }

    #[test]
    fn anthropic_calls_and_results_stay_together() {
        let messages = vec![
            json!({"role": "user", "content": [{"type": "text", "text": "find the bug"}]}),
            json!({"role": "assistant", "content": [
                {"type": "text", "text": "looking"},
                {"type": "tool_use", "id": "t1", "name": "grep", "input": {"pattern": "bug"}}
            ]}),
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "x".repeat(4000)}
            ]}),
            json!({"role": "assistant", "content": "done"}),
        ];
        let window = fit_window(&request(messages, 100), None);
        // The pair is too large: both go, the request and the newest stay.
        assert_eq!(window.kept, [0, 3]);
        assert_eq!(window.latest_user_index, Some(0));
    }

    /// One step of a random history.
    #[derive(Debug, Clone)]
    enum Step {
        User(usize),
        Assistant(usize),
        OpenAi {
            calls: usize,
            results: Vec<bool>,
            bogus: bool,
        },
        Anthropic {
            calls: usize,
            results: Vec<bool>,
            with_text: bool,
        },
        System,
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (1usize..200).prop_map(Step::User),
            (1usize..400).prop_map(Step::Assistant),
            (
                1usize..4,
                proptest::collection::vec(any::<bool>(), 4),
                any::<bool>()
            )
                .prop_map(|(calls, results, bogus)| Step::OpenAi {
                    calls,
                    results,
                    bogus
                }),
            (
                1usize..4,
                proptest::collection::vec(any::<bool>(), 4),
                any::<bool>()
            )
                .prop_map(|(calls, results, with_text)| Step::Anthropic {
                    calls,
                    results,
                    with_text
                }),
            Just(Step::System),
        ]
    }

    fn history(steps: &[Step]) -> Vec<Value> {
        let mut out = Vec::new();
        let mut next = 0;
        for step in steps {
            match step {
                Step::User(n) => out.push(json!({"role": "user", "content": "u".repeat(*n)})),
                Step::Assistant(n) => {
                    out.push(json!({"role": "assistant", "content": "a".repeat(*n)}))
                }
                Step::System => out.push(json!({"role": "system", "content": "be brief"})),
                Step::OpenAi {
                    calls,
                    results,
                    bogus,
                } => {
                    let ids: Vec<String> = (0..*calls).map(|i| format!("o{}", next + i)).collect();
                    next += calls;
                    let tool_calls: Vec<Value> = ids
                        .iter()
                        .map(|id| json!({"id": id, "type": "function", "function": {"name": "f", "arguments": "{}"}}))
                        .collect();
                    out.push(
                        json!({"role": "assistant", "content": null, "tool_calls": tool_calls}),
                    );
                    for (id, has) in ids.iter().zip(results) {
                        if *has {
                            out.push(openai_result(id));
                        }
                    }
                    if *bogus {
                        out.push(openai_result(&format!("bogus{next}")));
                    }
                }
                Step::Anthropic {
                    calls,
                    results,
                    with_text,
                } => {
                    let ids: Vec<String> = (0..*calls).map(|i| format!("t{}", next + i)).collect();
                    next += calls;
                    let uses: Vec<Value> = ids
                        .iter()
                        .map(|id| json!({"type": "tool_use", "id": id, "name": "g", "input": {}}))
                        .collect();
                    out.push(json!({"role": "assistant", "content": uses}));
                    let mut blocks: Vec<Value> = ids
                        .iter()
                        .zip(results)
                        .filter(|(_, has)| **has)
                        .map(|(id, _)| json!({"type": "tool_result", "tool_use_id": id, "content": "r".repeat(50)}))
                        .collect();
                    if *with_text {
                        blocks.push(json!({"type": "text", "text": "and also this"}));
                    }
                    if !blocks.is_empty() {
                        out.push(json!({"role": "user", "content": blocks}));
                    }
                }
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn no_window_has_an_orphan_or_loses_the_request(
            steps in proptest::collection::vec(step(), 0..40),
            budget in 0usize..3000,
        ) {
            let messages = history(&steps);
            let window = fit_window(&request(messages.clone(), budget), None);
            prop_assert!(orphans_in(&window.messages).is_empty(), "{:?}", orphans_in(&window.messages));
            let latest_user = (0..messages.len()).rev().find(|&i| is_user_text(&messages[i]));
            if let Some(i) = latest_user {
                // The latest user message keeps its text even if an orphan
                // result was taken out of it.
                prop_assert!(window.kept.contains(&i));
            }
            if !window.over_budget {
                prop_assert!(window.tokens.used <= budget);
            }
            let kept_tokens: usize = window.messages.iter().map(estimate_tokens).sum();
            prop_assert_eq!(kept_tokens, window.tokens.used);
            prop_assert_eq!(window.kept.len() + window.dropped.len(), messages.len());
        }
    }
}

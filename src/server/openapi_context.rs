//! The OpenAPI description of the working-context routes (sessions, the
//! context pack and the message window), kept apart from the rest of the
//! document so each area describes its own routes.

use serde_json::{json, Map, Value};

use crate::context::events::{event_types, PATH_FIELDS};
use crate::context::{
    DEFAULT_BLOCK_BUDGET_CHARS, DEFAULT_PACK_BUDGET_CHARS, MAX_BUDGET_CHARS,
    MAX_EVENTS_PER_REQUEST, MAX_EVENT_BYTES, MAX_FAILURE_CHARS, MAX_ITEM_CHARS, MAX_SESSION_CHARS,
    MAX_USER_MESSAGE_CHARS, MAX_WINDOW_BUDGET_TOKENS, MAX_WINDOW_MESSAGES, RECENT_FILES,
};
use crate::limits::{DEFAULT_SESSION_PAGE, MAX_SESSION_PAGE};

fn error(description: &str) -> Value {
    json!({"description": description, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}})
}

/// What every route that reads or writes the session store may answer
/// when the store cannot be used.
fn store_unusable() -> Value {
    error("session-store-damaged: the store's file is damaged or not a noggin session store; noggin writes nothing into it (move it aside to start with no sessions). session-store-unavailable: the store cannot be opened at its path now (its folder deleted and not made again, or replaced while the events were committed); nothing was stored, send them again")
}

fn id_parameter() -> Value {
    json!({"name": "id", "in": "path", "required": true, "description": "the session id",
        "schema": {"type": "string", "minLength": 1, "maxLength": MAX_SESSION_CHARS}})
}

fn section_report() -> Value {
    json!({"type": "object", "required": ["name", "chars", "items", "total_items", "omitted", "cut", "left_out"],
        "properties": {
            "name": {"type": "string"},
            "chars": {"type": "integer", "description": "characters it takes, heading and newline included"},
            "items": {"type": "integer"}, "total_items": {"type": "integer"}, "omitted": {"type": "integer"},
            "cut": {"type": "boolean", "description": "an item was shortened with …"},
            "left_out": {"type": "boolean", "description": "nothing of the section is shown"}}})
}

fn event_schema() -> Value {
    json!({"type": "object", "required": ["type"],
        "description": format!(
            "One of: user_message {{text}} (at most {MAX_USER_MESSAGE_CHARS} characters; the last one is kept, but a one-word reply such as \"continue\" keeps the request before it); \
             tool_call {{tool, arguments?, is_error?}} (a file path is taken from the arguments' {fields} field, \
             also inside nested objects and JSON strings; a path with a control character or a right-to-left override is dropped and reported; \
             the last {RECENT_FILES} files are kept, most recent first; a tool whose name or command says write/edit/create/… \
             marks the file changed); goal {{text, done?}}; progress {{text, done?}}; failure {{kind: build|test|other, text}} \
             (the latest of a kind replaces older ones; kept in full up to {MAX_FAILURE_CHARS} characters, a longer one as its first quarter and its end); resolved {{kind}}; \
             decision {{text}}. Goal, progress, decision and tool names are at most {MAX_ITEM_CHARS} characters; \
             an event is at most {MAX_EVENT_BYTES} bytes of JSON.",
            fields = PATH_FIELDS.join(", ")),
        "properties": {
            "type": {"type": "string", "enum": event_types()},
            "text": {"type": "string"}, "tool": {"type": "string"}, "arguments": {},
            "is_error": {"type": "boolean"}, "done": {"type": "boolean"},
            "kind": {"type": "string", "enum": ["build", "test", "other"]}}})
}

fn events_path() -> Value {
    json!({"post": {
        "summary": "Feed a session events (created by its first)",
        "description": "One event or a list. Every event is checked before any is stored; the response is sent once they are committed to disk (SQLite, WAL, synchronous=FULL).",
        "parameters": [id_parameter()],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"oneOf": [
            event_schema(), {"type": "array", "minItems": 1, "maxItems": MAX_EVENTS_PER_REQUEST, "items": event_schema()}]}}}},
        "responses": {
            "200": {"description": "stored", "content": {"application/json": {"schema": {"type": "object",
                "required": ["session", "accepted", "version", "events", "notes"],
                "properties": {
                    "session": {"type": "string"}, "accepted": {"type": "integer"},
                    "version": {"type": "integer"}, "events": {"type": "integer"},
                    "notes": {"type": "array", "description": "path-dropped, failure-cut, nothing-to-resolve", "items": {"type": "object",
                        "properties": {"event": {"type": "integer"}, "kind": {"type": "string"}, "detail": {"type": "string"}}}}}}}}},
            "400": error("invalid-session, invalid-json, invalid-event, no-events, too-many-events, missing-type, unknown-event-type, missing-field, wrong-type, empty-field, field-too-long, unknown-failure-kind, unknown-field"),
            "401": error("missing or wrong token"),
            "413": error("body-too-large or event-too-large"),
            "503": store_unusable()}}})
}

fn context_path() -> Value {
    json!({"get": {
        "summary": "The session's [working-context] block within a character budget",
        "description": "Sections in priority order: last_user_query, goals, failures, recent_files, progress, decisions, open_questions, confirmed. An empty context renders no block (`block: null`). Send the ETag back as If-None-Match to get 304 until the session or the budget changes.",
        "parameters": [id_parameter(),
            {"name": "budget", "in": "query", "schema": {"type": "integer", "minimum": 0, "maximum": MAX_BUDGET_CHARS, "default": DEFAULT_BLOCK_BUDGET_CHARS}},
            {"name": "If-None-Match", "in": "header", "schema": {"type": "string"}}],
        "responses": {
            "200": {"description": "the block", "headers": {"ETag": {"schema": {"type": "string"}}},
                "content": {"application/json": {"schema": {"type": "object",
                "required": ["session", "version", "etag", "events", "updated", "block", "chars", "budget", "sections", "working_context"],
                "properties": {
                    "session": {"type": "string"}, "version": {"type": "integer"}, "etag": {"type": "string"},
                    "events": {"type": "integer"}, "updated": {"type": "string", "format": "date-time"},
                    "block": {"type": ["string", "null"]}, "chars": {"type": "integer"}, "budget": {"type": "integer"},
                    "sections": {"type": "array", "items": section_report()},
                    "working_context": {"type": "object", "description": "the same context, structured (its schema is set from its type)"}}}}}},
            "304": {"description": "unchanged since the ETag sent"},
            "400": error("invalid-session, invalid-budget"),
            "401": error("missing or wrong token"),
            "404": error("unknown-session"),
            "503": store_unusable()}}})
}

fn pack_path() -> Value {
    json!({"post": {
        "summary": "The context pack: project context, self-researched facts, working context and the last user query in one block",
        "description": "Runs research for `questions` (recorded like POST /v1/research), reads the session and fits everything into `budget` characters by priority: the last user query (never cut: if the budget cannot hold it, it is included whole and `warnings` says so; `warnings` also says when questions were left open while noggin was still indexing the brain), self-researched facts, the working context, the project context.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "additionalProperties": false, "properties": {
            "session": {"type": "string", "minLength": 1, "maxLength": MAX_SESSION_CHARS},
            "prompt": {"type": "string", "maxLength": 20000, "description": "the user's request; the last user query when given"},
            "questions": {"type": "array", "maxItems": 20, "items": {"type": "string", "minLength": 1, "maxLength": 500}},
            "budget": {"type": "integer", "minimum": 0, "maximum": MAX_BUDGET_CHARS, "default": DEFAULT_PACK_BUDGET_CHARS}}}}}},
        "responses": {
            "200": {"description": "the pack", "content": {"application/json": {"schema": {"type": "object",
                "required": ["pack", "chars", "budget", "sections", "unanswered", "last_user_query", "session"],
                "properties": {
                    "pack": {"type": ["string", "null"]}, "chars": {"type": "integer"}, "budget": {"type": "integer"},
                    "sections": {"type": "array", "items": section_report()},
                    "last_user_query": {"type": ["object", "null"], "properties": {
                        "source": {"type": "string", "enum": ["prompt", "session"]}, "chars": {"type": "integer"}, "fits": {"type": "boolean"}}},
                    "warnings": {"type": "array", "items": {"type": "string"}},
                    "session": {"type": ["string", "null"]}, "session_found": {"type": "boolean"},
                    "research_id": {"type": "string"},
                    "unanswered": {"type": "array", "items": {"type": "string"}}}}}}},
            "400": error("invalid-json, invalid-budget, prompt-too-long, invalid-session and research's question errors"),
            "401": error("missing or wrong token"),
            "413": error("body too large"),
            "503": store_unusable()}}})
}

fn window_path() -> Value {
    json!({"post": {
        "summary": "A chat history cut to a token budget without losing the user's request",
        "description": "Messages in the OpenAI shape (assistant tool_calls, role tool with tool_call_id) or the Anthropic shape (tool_use and tool_result content blocks). Orphan calls and results are removed from their message and reported; messages linked by a call id are kept or dropped together; the latest user message, system messages (protect.system) and protect.messages are always kept; the rest is filled newest first. Tokens are estimated; `estimator` names how.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "required": ["messages", "budget"], "additionalProperties": false, "properties": {
            "messages": {"type": "array", "maxItems": MAX_WINDOW_MESSAGES, "items": {"type": "object", "required": ["role"]}},
            "budget": {"type": "integer", "minimum": 0, "maximum": MAX_WINDOW_BUDGET_TOKENS, "description": "tokens, pinned block included"},
            "session": {"type": "string"},
            "protect": {"type": "object", "additionalProperties": false, "properties": {
                "system": {"type": "boolean", "default": true},
                "messages": {"type": "array", "items": {"type": "integer", "minimum": 0}},
                "working_context": {"type": "boolean", "default": false, "description": "pin the session's working-context block (returned in `pinned`, for the system prompt)"}}}}}}}},
        "responses": {
            "200": {"description": "the window", "content": {"application/json": {"schema": {"type": "object",
                "required": ["messages", "kept", "dropped", "orphans", "repairs", "tokens", "estimator", "over_budget", "pinned", "latest_user_index"],
                "properties": {
                    "messages": {"type": "array", "items": {"type": "object"}},
                    "kept": {"type": "array", "items": {"type": "integer"}},
                    "dropped": {"type": "array", "items": {"type": "object", "properties": {
                        "index": {"type": "integer"}, "role": {"type": "string"}, "tokens": {"type": "integer"},
                        "reason": {"type": "string", "enum": ["budget", "emptied-by-repair"]}}}},
                    "orphans": {"type": "array", "items": {"type": "object", "properties": {
                        "kind": {"type": "string", "enum": ["call", "result"]}, "index": {"type": "integer"}, "id": {"type": "string"}}}},
                    "repairs": {"type": "array", "items": {"type": "object", "properties": {
                        "kind": {"type": "string", "enum": ["removed-orphan-call", "removed-orphan-result", "dropped-emptied-message", "kept-latest-user-message", "kept-protected-message"]},
                        "index": {"type": "integer"}, "id": {"type": "string"}}}},
                    "latest_user_index": {"type": ["integer", "null"]},
                    "tokens": {"type": "object", "properties": {
                        "budget": {"type": "integer"}, "used": {"type": "integer"}, "input": {"type": "integer"}, "pinned": {"type": "integer"}}},
                    "estimator": {"type": "string"},
                    "over_budget": {"type": "boolean", "description": "what must be kept alone exceeds the budget"},
                    "pinned": {"type": ["object", "null"], "properties": {
                        "block": {"type": "string"}, "tokens": {"type": "integer"}, "placement": {"type": "string"}}},
                    "pinned_left_out": {"type": "string", "enum": ["empty-working-context", "budget"],
                        "description": "why the block asked to be pinned is not: the session's working context is empty, or no budget is left for it"}}}}}},
            "400": error("invalid-json, too-many-messages, invalid-budget, invalid-message, invalid-protect, missing-session, invalid-session"),
            "401": error("missing or wrong token"),
            "404": error("unknown-session (to pin)"),
            "413": error("body too large"),
            "503": store_unusable()}}})
}

/// The working-context routes, to merge into the document's `paths`.
pub fn paths() -> Map<String, Value> {
    let mut paths = Map::new();
    paths.insert(
        "/v1/sessions".into(),
        json!({"get": {"summary": "Sessions, most recently updated first, a page at a time",
            "parameters": [
                {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": MAX_SESSION_PAGE, "default": DEFAULT_SESSION_PAGE}},
                {"name": "offset", "in": "query", "schema": {"type": "integer", "minimum": 0, "default": 0}, "description": "sessions to skip"}],
            "responses": {"200": {"description": "the page of sessions, and how many there are", "content": {"application/json": {"schema": {"type": "object",
                "required": ["sessions", "total"], "properties": {"sessions": {"type": "array", "items": {"type": "object",
                    "required": ["id", "updated", "version", "events"],
                    "properties": {"id": {"type": "string"}, "updated": {"type": "string", "format": "date-time"},
                        "version": {"type": "integer"}, "events": {"type": "integer"}}}},
                    "total": {"type": "integer"}}}}}},
                "400": error("invalid-limit, invalid-offset"),
                "401": error("missing or wrong token"), "503": store_unusable()}}}),
    );
    paths.insert(
        "/v1/sessions/{id}".into(),
        json!({"delete": {"summary": "Remove a session and its events", "parameters": [id_parameter()],
            "responses": {"204": {"description": "removed"}, "400": error("invalid-session"),
                "401": error("missing or wrong token"), "404": error("unknown-session"),
                "503": store_unusable()}}}),
    );
    paths.insert("/v1/sessions/{id}/events".into(), events_path());
    paths.insert("/v1/sessions/{id}/context".into(), context_path());
    paths.insert("/v1/context".into(), pack_path());
    paths.insert("/v1/context/window".into(), window_path());
    paths
}

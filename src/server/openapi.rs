//! `GET /openapi.json`: the API described for client generators and checkers.

use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};

use super::AppState;
use crate::limits::{
    CARD_SESSIONS, DEFAULT_SEARCH_LIMIT, MAX_ANSWERS, MAX_ANSWER_CHARS, MAX_PROJECT_CONTEXT_CHARS,
    MAX_PROMPT_CHARS, MAX_QUERY_CHARS, MAX_QUESTIONS, MAX_QUESTION_CHARS, MAX_SEARCH_LIMIT,
    MAX_SESSION_CHARS,
};

pub fn router() -> Router<AppState> {
    Router::new().route("/openapi.json", get(|| async { Json(document()) }))
}

fn error_response(description: &str) -> Value {
    json!({"description": description, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}})
}

/// `POST /v1/answers`: the user's answers written back as a dated note.
fn answers_operation() -> Value {
    json!({
        "summary": "Write the user's answers into the brain as a dated note",
        "description": "Answers go to `<knowledge folder>/YYYY-MM-DD <slug>.md`, appended to today's note of the same prompt. The response is sent once the note is on disk and indexed. Self-researched, too short (under --min-answer-chars), empty and already saved answers are skipped with a reason; with --no-save everything is skipped as `disabled`. Bad input is refused as a whole and writes nothing.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {
            "type": "object", "required": ["prompt", "qa"], "additionalProperties": false,
            "properties": {
                "prompt": {"type": "string", "minLength": 1, "maxLength": MAX_PROMPT_CHARS, "description": "the request the answers clarify; it names the note"},
                "qa": {"type": "array", "minItems": 1, "maxItems": MAX_ANSWERS, "items": {
                    "type": "object", "required": ["question", "answer"], "additionalProperties": false,
                    "properties": {
                        "question": {"type": "string", "maxLength": MAX_QUESTION_CHARS, "description": "one line: control characters are refused"},
                        "answer": {"type": "string", "maxLength": MAX_ANSWER_CHARS},
                        "source": {"type": "string", "description": "`self-research` answers are not saved"}
                    }}},
                "session": {"type": "string"}
            }}}}},
        "responses": {
            "200": {"description": "what was saved and what was skipped", "content": {"application/json": {"schema": {
                "type": "object", "required": ["saved", "skipped", "indexed"],
                "properties": {
                    "indexed": {"type": "boolean", "description": "true when every saved note is searchable now"},
                    "not_indexed_because": {"type": "string"},
                    "saved": {"type": "array", "items": {"type": "object", "required": ["path", "questions"], "properties": {
                        "path": {"type": "string", "description": "relative to the brain"},
                        "questions": {"type": "array", "items": {"type": "string"}}}}},
                    "skipped": {"type": "array", "items": {"type": "object", "required": ["question", "reason"], "properties": {
                        "question": {"type": "string"},
                        "reason": {"type": "string", "enum": ["self-research", "too-short", "empty", "duplicate", "disabled"]}}}}
                }}}}},
            "400": error_response("not the expected JSON (a missing question or answer, an unknown field), empty or too long prompt, too many entries, a question with a control character, too long question or answer"),
            "401": error_response("missing or wrong token"),
            "413": error_response("body too large"),
            "503": error_response("busy: out of file descriptors, or the note kept changing under an editor; brain-unavailable: the brain folder was moved away or deleted; disk-full, brain-read-only, knowledge-folder-outside: the brain's disk cannot take the answers; nothing acknowledged")
        }
    })
}

/// The OpenAPI 3.1 document of the routes noggin serves.
pub fn document() -> Value {
    let mut document = base_document();
    if let Some(paths) = document["paths"].as_object_mut() {
        paths.extend(super::openapi_context::paths());
    }
    // The status is the type MCP's `status` tool returns, its schema made
    // from it, its parts among the document's components.
    let mut settings = schemars::generate::SchemaSettings::draft2020_12();
    settings.definitions_path = "/components/schemas/".into();
    let mut generator = settings.into_generator();
    let status = generator.subschema_for::<crate::app::Status>();
    document["paths"]["/v1/status"]["get"]["responses"]["200"]["content"] =
        json!({"application/json": {"schema": status}});
    // A session's working context, structured, as the store keeps it.
    let working = generator.subschema_for::<crate::context::state::WorkingContext>();
    document["paths"]["/v1/sessions/{id}/context"]["get"]["responses"]["200"]["content"]
        ["application/json"]["schema"]["properties"]["working_context"] = working.into();
    if let Some(schemas) = document["components"]["schemas"].as_object_mut() {
        schemas.extend(generator.take_definitions(true));
    }
    add_common_responses(&mut document);
    document
}

/// Answers every route may give: a foreign `Origin` or `Host` (403); and
/// for a JSON body, one sent too slowly (408) or not as JSON (415).
fn add_common_responses(document: &mut Value) {
    let Some(paths) = document["paths"].as_object_mut() else {
        return;
    };
    for operations in paths.values_mut() {
        let Some(operations) = operations.as_object_mut() else {
            continue;
        };
        for operation in operations.values_mut() {
            let json_body = operation["requestBody"]["content"]
                .get("application/json")
                .is_some();
            let Some(responses) = operation["responses"].as_object_mut() else {
                continue;
            };
            let mut add = |status: &str, description: &str| {
                responses
                    .entry(status)
                    .or_insert_with(|| error_response(description));
            };
            add("403", "forbidden-origin or forbidden-host: a request from a page or name that is not this server (DNS rebinding)");
            if json_body {
                add(
                    "408",
                    "body-timeout: the body did not arrive within --body-timeout-ms",
                );
                add(
                    "415",
                    "unsupported-media-type: the body is not sent as application/json, or is sent with a Content-Encoding",
                );
            }
        }
    }
}

fn base_document() -> Value {
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "noggin",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Answers an assistant's open questions from the user's markdown notes before it asks the user."
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "Error": {
                    "type": "object",
                    "required": ["error"],
                    "properties": {"error": {"type": "object", "required": ["code", "message"], "properties": {
                        "code": {"type": "string"}, "message": {"type": "string"}}}}
                },
                "Evidence": {
                    "type": "object",
                    "required": ["path", "title", "heading", "excerpt", "score", "modified"],
                    "properties": {
                        "path": {"type": "string"},
                        "title": {"type": "string"},
                        "heading": {"type": "string"},
                        "excerpt": {"type": "string"},
                        "score": {"type": "number"},
                        "modified": {"type": "string"}
                    }
                },
                "Hit": {
                    "type": "object",
                    "required": ["path", "title", "heading", "snippet", "score", "modified", "matched"],
                    "properties": {
                        "path": {"type": "string"},
                        "title": {"type": "string"},
                        "heading": {"type": "string"},
                        "snippet": {"type": "string", "description": "HTML: matches in <mark>, everything else escaped"},
                        "score": {"type": "number"},
                        "modified": {"type": "string", "format": "date-time"},
                        "matched": {"type": "string", "enum": ["words", "meaning"], "description": "words: the note holds words of the query; meaning: only the semantic model found it"}
                    }
                }
            }
        },
        "security": [{"bearer": []}],
        "paths": {
            "/healthz": {"get": {"summary": "Liveness", "security": [],
                "responses": {"200": {"description": "noggin is up"}}}},
            "/v1/status": {"get": {"summary": "Brain, index and watcher status",
                "responses": {"200": {"description": "status (its schema is added from the type)"}, "401": error_response("missing or wrong token")}}},
            "/v1/search": {"get": {
                "summary": "Ranked notes for a query",
                "parameters": [
                    {"name": "q", "in": "query", "required": true, "schema": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS}},
                    {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_LIMIT, "default": DEFAULT_SEARCH_LIMIT}},
                    {"name": "folder", "in": "query", "schema": {"type": "string"}},
                    {"name": "tag", "in": "query", "schema": {"type": "string"}}
                ],
                "responses": {
                    "200": {"description": "hits", "content": {"application/json": {"schema": {
                        "type": "object", "required": ["hits", "indexing"],
                        "properties": {"hits": {"type": "array", "items": {"$ref": "#/components/schemas/Hit"}},
                            "indexing": {"type": "boolean", "description": "noggin was still bringing its index up to date after it started, as the search began: a note not found may be found once that is done"}}}}}},
                    "400": error_response("empty query, bad limit or invalid UTF-8"),
                    "401": error_response("missing or wrong token")
                }
            }},
            "/v1/research": research_path(),
            "/v1/answers": {"post": answers_operation()},
            "/v1/card": card_path(),
            "/v1/card/events": card_events_path(),
            "/v1/notes/{path}": note_path(),
            "/notes/{path}": note_page_path(),
            "/mcp": {"post": {"summary": "MCP over streamable HTTP (the tools of `tools/list`; notes as resources)", "description": "The Model Context Protocol's streamable HTTP transport, JSON-RPC messages by POST (GET and DELETE are refused with 405: noggin keeps no MCP session). The bearer token applies; a request whose Origin or Host is not this server is refused (403).",
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": ["object", "array"], "description": "a JSON-RPC message"}}}},
                "responses": {"200": {"description": "an MCP response (JSON or an event stream)"}, "400": error_response("invalid-json: the body is no JSON"), "401": error_response("missing or wrong token"), "403": error_response("a foreign Origin or Host"), "406": error_response("not-acceptable: Accept names neither application/json nor text/event-stream"), "413": error_response("body over 20 MiB")}}},
            "/v1/trajectories/analyze": trajectory_analyze_path(),
            "/trajectories/{id}": trajectory_page_path(),
            "/": {"get": {"summary": "The web card (HTML)", "security": [],
                "responses": {"200": {"description": "the card's page; its data comes from /v1/card"}}}}
        }
    })
}

/// `POST /v1/research`, apart so that `json!` stays within its recursion limit.
fn research_path() -> Value {
    json!({"post": {
        "summary": "Answer open questions from the brain before the user is asked",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {
            "type": "object", "required": ["questions"], "additionalProperties": false,
            "properties": {
                "prompt": {"type": "string", "maxLength": MAX_PROMPT_CHARS},
                "questions": {"type": "array", "minItems": 1, "maxItems": MAX_QUESTIONS,
                    "items": {"type": "string", "minLength": 1, "maxLength": MAX_QUESTION_CHARS}},
                "session": {"type": "string", "minLength": 1, "maxLength": MAX_SESSION_CHARS},
                "project_context": {"type": "string", "maxLength": MAX_PROJECT_CONTEXT_CHARS}
            }}}}},
        "responses": {
            "200": {"description": "answered and unanswered questions with evidence", "content": {"application/json": {"schema": {
                "type": "object",
                "required": ["research_id", "answered", "unanswered", "evidence_chars", "took_ms", "indexing"],
                "properties": {
                    "research_id": {"type": "string"},
                    "project_context": {"type": "string"},
                    "answered": {"type": "array", "items": {"type": "object",
                        "required": ["question", "answer", "confidence", "source", "evidence"],
                        "properties": {
                            "question": {"type": "string"},
                            "answer": {"type": "string"},
                            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                            "source": {"const": "self-research"},
                            "evidence": {"type": "array", "items": {"$ref": "#/components/schemas/Evidence"}},
                            "superseded": {"type": "array", "items": {"type": "object"}}
                        }}},
                    "unanswered": {"type": "array", "items": {"type": "object",
                        "required": ["question", "evidence"],
                        "properties": {
                            "question": {"type": "string"},
                            "evidence": {"type": "array", "items": {"$ref": "#/components/schemas/Evidence"}}
                        }}},
                    "evidence_chars": {"type": "integer"},
                    "took_ms": {"type": "integer"},
                    "indexing": {"type": "boolean", "description": "noggin was still bringing its index up to date after it started, as the research began: a question left open may be answered once that is done (GET /v1/status)"}
                }}}}},
            "400": error_response("no questions, too many, too long, control characters"),
            "401": error_response("missing or wrong token"),
            "413": error_response("body over the limit")
        }
    }})
}

fn session_parameter() -> Value {
    json!({"name": "session", "in": "query", "schema": {"type": "string", "maxLength": MAX_SESSION_CHARS},
        "description": "the session whose latest research to show; without it, the latest of any"})
}

fn source_schema() -> Value {
    json!({"type": "object", "required": ["path", "title", "heading", "link"], "properties": {
        "path": {"type": "string"}, "title": {"type": "string"}, "heading": {"type": "string"},
        "link": {"type": ["string", "null"], "description": "the rendered note, `/notes/<path>`; null for text sent with the request"}}})
}

/// `GET /v1/card`: what the web card shows.
fn card_path() -> Value {
    let fact = json!({
                "type": "object", "required": ["question", "answer", "cut", "text", "confidence", "source", "sources"],
                "properties": {
                    "question": {"type": "string"},
                    "answer": {"type": "string", "description": "at most --card-answer-chars (150) characters, cut on a word with \"…\""},
                    "cut": {"type": "boolean"},
                    "text": {"type": "string", "description": "the marker, then the answer"},
                    "confidence": {"type": "number"},
                    "source": {"type": "string", "const": "self-research"},
                    "sources": {"type": "array", "items": source_schema()}}});
    let research = json!({"type": ["object", "null"], "required": ["research_id", "at", "seq", "prompt", "took_ms", "indexing", "facts", "more_facts", "more", "open", "answered_by_user"],
        "properties": {
            "research_id": {"type": "string"},
            "session": {"type": ["string", "null"]},
            "at": {"type": "string", "format": "date-time"},
            "seq": {"type": "integer", "description": "grows with every research"},
            "prompt": {"type": "string", "description": "cut to 160 characters"},
            "took_ms": {"type": "integer"},
            "indexing": {"type": "boolean", "description": "noggin was still indexing the brain as this research began"},
            "facts": {"type": "array", "description": "at most --card-facts (3)", "items": fact.clone()},
            "more_facts": {"type": "integer", "description": "answered questions beyond `facts`"},
            "more": {"type": "array", "description": "those answers, which the card shows when asked", "items": fact},
            "open": {"type": "array", "description": "questions left for the user", "items": {
                "type": "object", "required": ["question", "sources"],
                "properties": {"question": {"type": "string"}, "sources": {"type": "array", "items": source_schema()}}}},
            "answered_by_user": {"type": "array", "items": {"type": "string"}, "description": "questions this research left open that the user answered since (/v1/answers or MCP's remember); no longer in `open`"}}});
    json!({"get": {
        "summary": "The latest research of a session (or of all), cut to fit the web card",
        "description": "When a token is configured, the response also sets an HttpOnly, SameSite=Strict cookie scoped to /notes that lets the browser open rendered notes (links cannot send a bearer header).",
        "parameters": [session_parameter()],
        "responses": {
            "200": {"description": "the card; `research` is null until a research arrives", "content": {"application/json": {"schema": {
                "type": "object", "required": ["session", "sessions", "sessions_total", "session_found", "marker", "max_facts", "answer_chars", "research"],
                "properties": {
                    "session": {"type": ["string", "null"]},
                    "sessions": {"type": "array", "items": {"type": "string"}, "maxItems": CARD_SESSIONS,
                        "description": "sessions with a research, most recently researched first, then the other stored sessions, most recently updated first; at most this many"},
                    "sessions_total": {"type": "integer", "description": "sessions in all, listed or not; any of them can be asked for with ?session= (GET /v1/sessions lists them all)"},
                    "session_found": {"type": "boolean", "description": "whether the session asked for has a research or stored events; false without ?session="},
                    "marker": {"type": "string"},
                    "max_facts": {"type": "integer"},
                    "answer_chars": {"type": "integer"},
                    "research": research,
                    "working_context": card_working_context_schema()}}}}},
            "400": error_response(&format!("invalid-session: a session of more than {MAX_SESSION_CHARS} characters, with a control character or blanks at either end; invalid-query: a query that is no UTF-8")),
            "401": error_response("missing or wrong token")
        }
    }})
}

/// The card's view of a session's working context.
fn card_working_context_schema() -> Value {
    let item = json!({"type": "object", "required": ["text", "done"], "properties": {
        "text": {"type": "string"}, "done": {"type": "boolean"}}});
    json!({"type": "object",
        "description": "for ?session= with a working context to show (absent otherwise): what the card's working panel shows",
        "required": ["version", "updated", "last_user_query", "goals", "failure", "failures", "more_failures", "recent_files", "progress", "progress_done", "progress_total", "open_questions", "decisions", "decisions_total", "confirmed"],
        "properties": {
            "version": {"type": "integer"},
            "updated": {"type": "string", "format": "date-time"},
            "last_user_query": {"type": ["string", "null"]},
            "goals": {"type": "array", "items": item.clone()},
            "failure": {"type": ["object", "null"], "description": "the most recent failure still open, cut to 400 characters",
                "required": ["kind", "text", "cut", "at"], "properties": {
                    "kind": {"type": "string", "enum": ["build", "test", "other"]},
                    "text": {"type": "string"}, "cut": {"type": "boolean"}, "at": {"type": "string"}}},
            "failures": {"type": "integer", "description": "open failures, one per kind"},
            "more_failures": {"type": "array", "description": "the open failures after `failure`, the most recent first", "items": {
                "type": "object", "required": ["kind", "text", "cut", "at"]}},
            "recent_files": {"type": "array", "items": {"type": "object", "required": ["path", "changed", "tool"], "properties": {
                "path": {"type": "string"}, "changed": {"type": "boolean"}, "tool": {"type": "string"}}}},
            "progress": {"type": "array", "description": "the newest 8", "items": item},
            "progress_done": {"type": "integer"},
            "progress_total": {"type": "integer"},
            "open_questions": {"type": "array", "items": {"type": "string"},
                "description": "the session's open questions when the card holds no research of it (after a restart); empty otherwise"},
            "decisions": {"type": "array", "items": {"type": "string"}, "description": "the newest 5, oldest of them first"},
            "decisions_total": {"type": "integer"},
            "confirmed": {"type": "array", "description": "the newest 5 answers the user confirmed, oldest of them first",
                "items": {"type": "object", "required": ["question", "answer"], "properties": {
                    "question": {"type": "string"}, "answer": {"type": "string"}}}}}})
}

/// `GET /v1/card/events`: the card as server-sent events.
fn card_events_path() -> Value {
    json!({"get": {
        "summary": "The card as server-sent events: once at once, then after every research, answer or change of a session",
        "parameters": [session_parameter()],
        "responses": {
            "200": {"description": "`event: card` with the JSON of GET /v1/card as data; a comment every 15 s keeps the stream open",
                "content": {"text/event-stream": {"schema": {"type": "string"}}}},
            "400": error_response("invalid-session, as GET /v1/card"),
            "401": error_response("missing or wrong token")
        }
    }})
}

fn path_parameter() -> Value {
    json!({"name": "path", "in": "path", "required": true, "schema": {"type": "string"},
        "description": "the note's path relative to the brain, each segment percent-encoded"})
}

/// `GET /v1/notes/{path}`: one note's source and metadata.
fn note_path() -> Value {
    json!({"get": {
        "summary": "One note: its markdown source and metadata",
        "parameters": [path_parameter()],
        "responses": {
            "200": {"description": "the note", "content": {"application/json": {"schema": {
                "type": "object", "required": ["path", "title", "tags", "aliases", "modified", "size", "link", "source"],
                "properties": {
                    "path": {"type": "string"}, "title": {"type": "string"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "aliases": {"type": "array", "items": {"type": "string"}},
                    "created": {"type": "string", "format": "date"},
                    "modified": {"type": "string", "format": "date-time"},
                    "size": {"type": "integer"},
                    "link": {"type": "string", "description": "the rendered note"},
                    "source": {"type": "string", "description": "markdown, frontmatter included"}}}}}},
            "401": error_response("missing or wrong token"),
            "404": error_response("no such note in the brain (also for paths outside it)"),
            "503": error_response("note-unreadable: a note of the brain noggin cannot read now (no permission), with the reason")
        }
    }})
}

/// `GET /notes/{path}`: one note rendered for the card's links.
fn note_page_path() -> Value {
    json!({"get": {
        "summary": "One note rendered to HTML (raw HTML in the note shown as text)",
        "description": "With a token configured, needs the bearer header or the cookie that GET /v1/card sets.",
        "security": [{"bearer": []}, {}],
        "parameters": [path_parameter()],
        "responses": {
            "200": {"description": "the page", "content": {"text/html": {"schema": {"type": "string"}}}},
            "401": {"description": "token needed (an HTML page)"},
            "404": {"description": "no such note in the brain (an HTML page)"}
        }
    }})
}

/// `POST /v1/trajectories/analyze`: where an agent lost its context.
fn trajectory_analyze_path() -> Value {
    // The thresholds as the type that checks them says: names, ranges,
    // defaults and what each reports.
    let thresholds = schemars::schema_for!(crate::trajectory::Thresholds);
    let parameters: Vec<Value> = thresholds
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(name, schema)| {
            let mut schema = schema.clone();
            let description = schema
                .as_object_mut()
                .and_then(|s| s.remove("description"))
                .unwrap_or(Value::Null);
            json!({"name": name, "in": "query", "schema": schema, "description": description})
        })
        .collect();
    json!({"post": {
        "summary": "Find where an agent lost context in its tool-call trajectory, and what a compaction should keep",
        "description": "The body is the trajectory file itself, up to 10 MiB (whatever --max-body-bytes says): a JSON list of {tool, arguments, is_error, at} (or {\"calls\": [...]}; an entry {\"compaction\": true} marks a compaction), a Claude Code session transcript (JSONL) or an OpenAI Codex CLI rollout (JSONL), told apart by content. Lines that are not JSON or of an unknown shape are counted in skipped_lines and skipped. The page of the analysis is kept in memory (the latest 20, none across a restart) at `link`.",
        "parameters": parameters,
        "requestBody": {"required": true, "content": {
            "application/json": {"schema": {"type": "array", "items": {"type": "object", "required": ["tool"], "properties": {
                "tool": {"type": "string"}, "arguments": {}, "is_error": {"type": "boolean"},
                "at": {"type": ["string", "number"], "description": "RFC 3339, or seconds or milliseconds since the epoch"},
                "error": {"type": "string"}, "output": {"type": "string"}}}}},
            "application/x-ndjson": {"schema": {"type": "string", "description": "a Claude Code session or a Codex CLI rollout"}}}},
        "responses": {
            "200": {"description": "the analysis", "content": {"application/json": {"schema": trajectory_analysis_schema()}}},
            "400": error_response("empty-trajectory, binary-trajectory, invalid-trajectory (a JSON list broken or cut short), no-calls (no tool call could be read), invalid-threshold, invalid-query"),
            "401": error_response("missing or wrong token"),
            "413": error_response("a body over 10 MiB")
        }
    }})
}

/// The response of `POST /v1/trajectories/analyze`, apart for `json!`'s
/// recursion limit.
fn trajectory_analysis_schema() -> Value {
    let call_ref = json!({"type": "object", "required": ["index", "tool"], "properties": {
        "index": {"type": "integer"}, "at": {"type": "string", "format": "date-time"},
        "tool": {"type": "string"}, "path": {"type": "string"},
        "detail": {"type": "string", "description": "the command line or search pattern"}}});
    let finding = json!({"type": "object",
        "required": ["pattern", "severity", "lost", "summary", "count", "calls", "more_calls"],
        "properties": {
            "pattern": {"enum": ["read-heavy", "searches-after-error", "grep-heavy", "reread", "repeated-failure", "reread-after-compaction"]},
            "severity": {"type": "integer", "minimum": 1, "maximum": 10},
            "lost": {"type": "array", "items": {"enum": ["file-paths", "error-details", "search-results", "symbols", "decisions", "tasks"]}},
            "summary": {"type": "string"},
            "path": {"type": "string"},
            "count": {"type": "integer"},
            "apart_calls": {"type": "array", "items": {"type": "integer"}},
            "apart_secs": {"type": "array", "items": {"type": "integer"}},
            "calls": {"type": "array", "maxItems": 50, "items": call_ref},
            "more_calls": {"type": "integer"}}});
    let keep = json!({"type": "object", "required": ["instructions", "paths", "errors", "searches", "tasks", "events"], "properties": {
        "instructions": {"type": "string", "description": "ready to paste into an agent's compaction prompt"},
        "paths": {"type": "array", "items": {"type": "object"}},
        "errors": {"type": "array", "items": {"type": "object"}},
        "searches": {"type": "array", "items": {"type": "object"}},
        "tasks": {"type": "array", "items": {"type": "object"}},
        "decision": {"type": "string"},
        "user_request": {"type": "string"},
        "events": {"type": "array", "description": "working-context events (tool_call, failure, goal, progress, decision, user_message), oldest first", "items": {"type": "object", "required": ["type"]}}}});
    json!({
        "type": "object",
        "required": ["id", "link", "format", "calls", "kinds", "errors", "compactions", "lines", "skipped_lines", "thresholds", "findings", "keep"],
        "properties": {
            "id": {"type": "string"},
            "link": {"type": "string", "description": "/trajectories/{id}: the timeline page"},
            "format": {"enum": ["tool-list", "claude-code", "codex"]},
            "calls": {"type": "integer"},
            "kinds": {"type": "object", "properties": {"read": {"type": "integer"}, "write": {"type": "integer"},
                "search": {"type": "integer"}, "shell": {"type": "integer"}, "other": {"type": "integer"}}},
            "errors": {"type": "integer", "description": "calls that failed"},
            "compactions": {"type": "array", "items": {"type": "object", "properties": {
                "before_call": {"type": "integer"}, "at": {"type": "string"}}}},
            "lines": {"type": "integer"}, "skipped_lines": {"type": "integer"},
            "started": {"type": "string"}, "ended": {"type": "string"},
            "thresholds": {"type": "object"},
            "findings": {"type": "array", "description": "most severe first", "items": finding},
            "keep": keep
        }
    })
}

/// `GET /trajectories/{id}`: the analysis as a page.
fn trajectory_page_path() -> Value {
    json!({"get": {
        "summary": "An analysed trajectory as a page: the run as an SVG timeline beside the findings and what to keep",
        "description": "The id (128 random bits) is the page's pass, like a share link: no token is needed. Pages are kept in memory, the latest 20, none across a restart.",
        "security": [],
        "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string", "pattern": "^[0-9a-f]{32}$"}}],
        "responses": {
            "200": {"description": "the page", "content": {"text/html": {"schema": {"type": "string"}}}},
            "404": {"description": "no such analysis, or no longer kept (an HTML page)"}
        }
    }})
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The document states the limits the core enforces, not copies of them.
    #[test]
    fn limits_come_from_the_one_definition() {
        let doc = document();
        let paths = &doc["paths"];
        let research = &paths["/v1/research"]["post"]["requestBody"]["content"]["application/json"]
            ["schema"]["properties"];
        assert_eq!(research["questions"]["maxItems"], MAX_QUESTIONS);
        assert_eq!(
            research["questions"]["items"]["maxLength"],
            MAX_QUESTION_CHARS
        );
        assert_eq!(research["prompt"]["maxLength"], MAX_PROMPT_CHARS);
        assert_eq!(research["session"]["maxLength"], MAX_SESSION_CHARS);
        let answers = &paths["/v1/answers"]["post"]["requestBody"]["content"]["application/json"]
            ["schema"]["properties"];
        assert_eq!(answers["qa"]["maxItems"], MAX_ANSWERS);
        assert_eq!(
            answers["qa"]["items"]["properties"]["answer"]["maxLength"],
            MAX_ANSWER_CHARS
        );
        let card = &paths["/v1/card"]["get"]["responses"]["200"]["content"]["application/json"]
            ["schema"]["properties"];
        assert_eq!(card["sessions"]["maxItems"], CARD_SESSIONS);
        let search = &paths["/v1/search"]["get"]["parameters"];
        assert_eq!(search[0]["schema"]["maxLength"], MAX_QUERY_CHARS);
        assert_eq!(search[1]["schema"]["maximum"], MAX_SEARCH_LIMIT);
    }

    /// Every `$ref` names a schema of the document, the status has the
    /// schema of its type, and what any route may answer is declared.
    #[test]
    fn the_document_declares_what_the_routes_answer() {
        let doc = document();
        fn refs<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
            match value {
                Value::Object(map) => {
                    if let Some(Value::String(r)) = map.get("$ref") {
                        out.push(r);
                    }
                    map.values().for_each(|v| refs(v, out));
                }
                Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
                _ => {}
            }
        }
        let mut found = Vec::new();
        refs(&doc, &mut found);
        for r in found {
            let name = r.strip_prefix("#/components/schemas/").expect(r);
            assert!(doc["components"]["schemas"].get(name).is_some(), "{r}");
        }
        let status = &doc["paths"]["/v1/status"]["get"]["responses"]["200"]["content"]
            ["application/json"]["schema"]["$ref"];
        let status = status.as_str().expect("the status schema");
        let name = status.rsplit('/').next().unwrap();
        let properties = &doc["components"]["schemas"][name]["properties"];
        assert!(properties.get("healthy").is_some() && properties.get("last_reconcile").is_some());
        // The thresholds come with the ranges their type checks.
        let parameters = doc["paths"]["/v1/trajectories/analyze"]["post"]["parameters"]
            .as_array()
            .expect("parameters");
        let read_share = parameters
            .iter()
            .find(|p| p["name"] == "read_share")
            .expect("read_share");
        assert_eq!(
            (
                &read_share["schema"]["minimum"],
                &read_share["schema"]["maximum"]
            ),
            (&json!(0), &json!(1))
        );
        assert_eq!(read_share["schema"]["default"], 0.4);
        assert_eq!(parameters.len(), 7);
        for (path, operations) in doc["paths"].as_object().unwrap() {
            for (method, operation) in operations.as_object().unwrap() {
                let responses = &operation["responses"];
                assert!(responses.get("403").is_some(), "{method} {path}");
                if operation["requestBody"]["content"]
                    .get("application/json")
                    .is_some()
                {
                    assert!(
                        responses.get("415").is_some() && responses.get("408").is_some(),
                        "{method} {path}"
                    );
                }
            }
        }
    }
}

//! `GET /openapi.json`: the API described for client generators and checkers.

use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};

use super::AppState;

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
            "type": "object", "required": ["prompt", "qa"],
            "properties": {
                "prompt": {"type": "string", "minLength": 1, "maxLength": 20000, "description": "the request the answers clarify; it names the note"},
                "qa": {"type": "array", "maxItems": 50, "items": {
                    "type": "object", "required": ["question", "answer"],
                    "properties": {
                        "question": {"type": "string", "maxLength": 500, "description": "one line: control characters are refused"},
                        "answer": {"type": "string", "maxLength": 10000},
                        "source": {"type": "string", "description": "`self-research` answers are not saved"}
                    }}},
                "session": {"type": "string"}
            }}}}},
        "responses": {
            "200": {"description": "what was saved and what was skipped", "content": {"application/json": {"schema": {
                "type": "object", "required": ["saved", "skipped"],
                "properties": {
                    "saved": {"type": "array", "items": {"type": "object", "required": ["path", "questions"], "properties": {
                        "path": {"type": "string", "description": "relative to the brain"},
                        "questions": {"type": "array", "items": {"type": "string"}}}}},
                    "skipped": {"type": "array", "items": {"type": "object", "required": ["question", "reason"], "properties": {
                        "question": {"type": "string"},
                        "reason": {"type": "string", "enum": ["self-research", "too-short", "empty", "duplicate", "disabled"]}}}}
                }}}}},
            "400": error_response("not the expected JSON, empty or too long prompt, too many entries, a question with a control character, too long question or answer"),
            "401": error_response("missing or wrong token"),
            "413": error_response("body too large")
        }
    })
}

/// The OpenAPI 3.1 document of the routes noggin serves.
pub fn document() -> Value {
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
                    "required": ["path", "title", "heading", "snippet", "score", "modified"],
                    "properties": {
                        "path": {"type": "string"},
                        "title": {"type": "string"},
                        "heading": {"type": "string"},
                        "snippet": {"type": "string", "description": "HTML: matches in <mark>, everything else escaped"},
                        "score": {"type": "number"},
                        "modified": {"type": "string", "format": "date-time"}
                    }
                }
            }
        },
        "security": [{"bearer": []}],
        "paths": {
            "/healthz": {"get": {"summary": "Liveness", "security": [],
                "responses": {"200": {"description": "noggin is up"}}}},
            "/v1/status": {"get": {"summary": "Brain, index and watcher status",
                "responses": {"200": {"description": "status"}, "401": error_response("missing or wrong token")}}},
            "/v1/search": {"get": {
                "summary": "Ranked notes for a query",
                "parameters": [
                    {"name": "q", "in": "query", "required": true, "schema": {"type": "string", "minLength": 1, "maxLength": 1000}},
                    {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10}},
                    {"name": "folder", "in": "query", "schema": {"type": "string"}},
                    {"name": "tag", "in": "query", "schema": {"type": "string"}}
                ],
                "responses": {
                    "200": {"description": "hits", "content": {"application/json": {"schema": {
                        "type": "object", "required": ["hits"],
                        "properties": {"hits": {"type": "array", "items": {"$ref": "#/components/schemas/Hit"}}}}}}},
                    "400": error_response("empty query, bad limit or invalid UTF-8"),
                    "401": error_response("missing or wrong token")
                }
            }},
            "/v1/research": research_path(),
            "/v1/answers": {"post": answers_operation()},
            "/v1/card": card_path(),
            "/v1/notes/{path}": note_path()
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
                "prompt": {"type": "string", "maxLength": 20000},
                "questions": {"type": "array", "minItems": 1, "maxItems": 20,
                    "items": {"type": "string", "minLength": 1, "maxLength": 500}},
                "session": {"type": "string", "minLength": 1, "maxLength": 200},
                "project_context": {"type": "string"}
            }}}}},
        "responses": {
            "200": {"description": "answered and unanswered questions with evidence", "content": {"application/json": {"schema": {
                "type": "object",
                "required": ["research_id", "answered", "unanswered", "evidence_chars", "took_ms"],
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
                    "took_ms": {"type": "integer"}
                }}}}},
            "400": error_response("no questions, too many, too long, control characters"),
            "401": error_response("missing or wrong token"),
            "413": error_response("body over the limit")
        }
    }})
}

/// `GET /v1/card`.
fn card_path() -> Value {
    json!({"get": {
        "summary": "What the web card shows: the latest research of a session (or of all)",
        "parameters": [{"name": "session", "in": "query", "schema": {"type": "string"}}],
        "responses": {
            "200": {"description": "up to --card-facts facts with answers cut to --card-answer-chars, their sources, the open questions; research is null before the first one",
                "content": {"application/json": {"schema": {"type": "object",
                    "required": ["session", "sessions", "marker", "research"]}}}},
            "401": error_response("missing or wrong token")
        }
    }})
}

/// `GET /v1/notes/{path}`.
fn note_path() -> Value {
    json!({"get": {
        "summary": "One note: markdown source and metadata (the rendered page is /notes/{path})",
        "parameters": [{"name": "path", "in": "path", "required": true, "schema": {"type": "string"}}],
        "responses": {
            "200": {"description": "the note", "content": {"application/json": {"schema": {"type": "object",
                "required": ["path", "title", "tags", "modified", "size", "source"]}}}},
            "401": error_response("missing or wrong token"),
            "404": error_response("no such note inside the brain")
        }
    }})
}

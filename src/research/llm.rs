//! The optional LLM decider: one OpenAI-compatible chat completion per
//! request, with every question and its evidence.
//!
//! The model is told to answer only from the numbered evidence and to cite
//! it; an answer without a valid citation is not trusted. Models wrap JSON in
//! code fences, prose and trailing commas, so the reply is parsed tolerantly.
//! Any failure (timeout, HTTP error, unreadable reply) is returned as an
//! error and the caller keeps the local decider's decisions.

use std::time::Duration;

use serde_json::{json, Value};

use super::{Decision, QuestionEvidence};

/// Settings of the LLM decider.
#[derive(Debug, Clone)]
pub struct LlmSettings {
    /// Base URL of an OpenAI-compatible API (`http://host:port/v1`) or the
    /// full `/chat/completions` URL.
    pub url: String,
    pub model: String,
    pub api_key: Option<String>,
    pub timeout: Duration,
}

impl LlmSettings {
    fn endpoint(&self) -> String {
        let url = self.url.trim_end_matches('/');
        if url.ends_with("/chat/completions") {
            url.to_string()
        } else if url.ends_with("/v1") {
            format!("{url}/chat/completions")
        } else {
            format!("{url}/v1/chat/completions")
        }
    }
}

/// Why the LLM gave no usable decisions.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("LLM request to {url} failed: {source}")]
    Request {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("LLM at {url} answered HTTP {status}")]
    Status { url: String, status: u16 },
    #[error("LLM reply has no readable JSON: {0}")]
    Unreadable(String),
}

const INSTRUCTIONS: &str = "You answer an assistant's open questions about a user's request using ONLY the \
evidence given (excerpts of the user's notes). Never use outside knowledge. If the evidence does not \
clearly state the answer, mark the question unanswered. Reply with JSON only, in this shape: \
{\"answers\": [{\"id\": 1, \"answered\": true, \"answer\": \"one or two sentences\", \"confidence\": 0.9, \
\"citations\": [\"E1.1\"]}]} with one entry per question id; citations name the evidence ids you used.";

/// Asks the model; returns one decision per question, `None` where the
/// model said nothing about it (the local decision stands).
pub async fn decide(
    settings: &LlmSettings,
    prompt: &str,
    project_context: Option<&str>,
    questions: &[QuestionEvidence],
) -> Result<Vec<Option<Decision>>, Error> {
    let url = settings.endpoint();
    let mut user = String::new();
    if !prompt.trim().is_empty() {
        user.push_str(&format!("Request: {prompt}\n\n"));
    }
    if let Some(context) = project_context {
        user.push_str(&format!("Project context:\n{context}\n\n"));
    }
    for (i, q) in questions.iter().enumerate() {
        user.push_str(&format!("Question {}: {}\n", i + 1, q.question));
        for (j, e) in q.evidence.iter().enumerate() {
            let place = if e.heading.is_empty() {
                e.path.clone()
            } else {
                format!("{} › {}", e.path, e.heading)
            };
            user.push_str(&format!(
                "  [E{}.{}] ({place}) {}\n",
                i + 1,
                j + 1,
                e.excerpt
            ));
        }
        if q.evidence.is_empty() {
            user.push_str("  (no evidence)\n");
        }
    }
    let body = json!({
        "model": settings.model,
        "temperature": 0,
        "messages": [
            {"role": "system", "content": INSTRUCTIONS},
            {"role": "user", "content": user},
        ],
    });
    let client = reqwest::Client::builder()
        .timeout(settings.timeout)
        .build()
        .map_err(|source| Error::Request {
            url: url.clone(),
            source,
        })?;
    let mut request = client.post(&url).json(&body);
    if let Some(key) = &settings.api_key {
        request = request.bearer_auth(key);
    }
    let response = request.send().await.map_err(|source| Error::Request {
        url: url.clone(),
        source,
    })?;
    if !response.status().is_success() {
        return Err(Error::Status {
            url,
            status: response.status().as_u16(),
        });
    }
    let text = response.text().await.map_err(|source| Error::Request {
        url: url.clone(),
        source,
    })?;
    let content = serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|v| {
            v.pointer("/choices/0/message/content")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .ok_or_else(|| Error::Unreadable("no choices[0].message.content".into()))?;
    let reply = parse_tolerant_json(&content)
        .ok_or_else(|| Error::Unreadable(content.chars().take(200).collect()))?;
    Ok(decisions_from_reply(&reply, questions))
}

/// Turns the model's reply into decisions, `None` for questions it skipped.
fn decisions_from_reply(reply: &Value, questions: &[QuestionEvidence]) -> Vec<Option<Decision>> {
    let mut decisions: Vec<Option<Decision>> = vec![None; questions.len()];
    let entries = reply
        .get("answers")
        .or(Some(reply))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for entry in entries {
        let Some(i) = entry
            .get("id")
            .and_then(|v| v.as_u64().or_else(|| v.as_str()?.trim().parse().ok()))
            .and_then(|id| (id as usize).checked_sub(1))
            .filter(|&i| i < questions.len())
        else {
            continue;
        };
        let answered = entry
            .get("answered")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let answer = entry
            .get("answer")
            .and_then(Value::as_str)
            .map(str::trim)
            .unwrap_or("");
        let cited: Vec<usize> = entry
            .get("citations")
            .and_then(Value::as_array)
            .map(|c| {
                c.iter()
                    .filter_map(Value::as_str)
                    .filter_map(|id| evidence_index(id, i + 1))
                    .filter(|&j| j < questions[i].evidence.len())
                    .collect()
            })
            .unwrap_or_default();
        decisions[i] = Some(if answered && !answer.is_empty() && !cited.is_empty() {
            let confidence = entry
                .get("confidence")
                .and_then(Value::as_f64)
                .map_or(0.7, |c| c.clamp(0.0, 1.0)) as f32;
            Decision::Answered {
                answer: answer.to_string(),
                confidence,
                cited,
                superseded: Vec::new(),
            }
        } else {
            Decision::Unanswered
        });
    }
    decisions
}

/// "E2.1" (or "[E2.1]") for question 2 → evidence index 0.
fn evidence_index(id: &str, question: usize) -> Option<usize> {
    let id = id.trim().trim_matches(|c| c == '[' || c == ']');
    let (q, e) = id.strip_prefix(['E', 'e'])?.split_once('.')?;
    if q.trim().parse::<usize>().ok()? != question {
        return None;
    }
    e.trim().parse::<usize>().ok()?.checked_sub(1)
}

/// Finds and parses the JSON in a model's reply: code fences, prose around
/// it and trailing commas are tolerated.
pub fn parse_tolerant_json(text: &str) -> Option<Value> {
    let start = text.find(['{', '['])?;
    let close = if text[start..].starts_with('{') {
        '}'
    } else {
        ']'
    };
    let end = text.rfind(close)?;
    if end < start {
        return None;
    }
    let candidate = remove_trailing_commas(&text[start..=end]);
    serde_json::from_str(&candidate).ok()
}

/// Drops commas that directly precede `}` or `]`, outside strings.
fn remove_trailing_commas(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let mut in_string = false;
    let mut escaped = false;
    let chars: Vec<char> = json.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        if c == '"' {
            in_string = true;
        } else if c == ',' {
            let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
            if matches!(next, Some('}') | Some(']')) {
                continue;
            }
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerant_json_parsing() {
        let cases = [
            (r#"{"answers": []}"#, Some(json!({"answers": []}))),
            (
                "```json\n{\"answers\": [{\"id\": 1,}],}\n```",
                Some(json!({"answers": [{"id": 1}]})),
            ),
            (
                "Sure! Here is the JSON:\n{\"a\": \"x, }\", \"b\": [1, 2,],}\nHope it helps.",
                Some(json!({"a": "x, }", "b": [1, 2]})),
            ),
            ("[{\"id\": 2}]", Some(json!([{"id": 2}]))),
            ("no json here", None),
            ("{\"broken\": ", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_tolerant_json(text), want, "{text}");
        }
    }

    #[test]
    fn evidence_ids() {
        assert_eq!(evidence_index("E2.1", 2), Some(0));
        assert_eq!(evidence_index("[E1.2]", 1), Some(1));
        assert_eq!(evidence_index("E1.2", 2), None);
        assert_eq!(evidence_index("E1.0", 1), None);
        assert_eq!(evidence_index("nonsense", 1), None);
    }

    #[test]
    fn endpoints() {
        let mut s = LlmSettings {
            url: "http://127.0.0.1:9/v1".into(),
            model: "m".into(),
            api_key: None,
            timeout: Duration::from_secs(1),
        };
        assert_eq!(s.endpoint(), "http://127.0.0.1:9/v1/chat/completions");
        s.url = "http://127.0.0.1:9/".into();
        assert_eq!(s.endpoint(), "http://127.0.0.1:9/v1/chat/completions");
        s.url = "http://h/api/chat/completions".into();
        assert_eq!(s.endpoint(), "http://h/api/chat/completions");
    }
}

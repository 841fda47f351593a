//! MCP over stdin/stdout, one JSON-RPC message a line.
//!
//! rmcp serves the protocol; each line passes through [`verdict`] on its
//! way in, which answers, as JSON-RPC 2.0 says, what rmcp would not:
//!
//! - a line that is not JSON: a parse error (-32700) with a null id, where
//!   rmcp says nothing and a client waits for an answer that never comes;
//! - a request that is JSON but not a JSON-RPC request (no `"jsonrpc":
//!   "2.0"`, no method): an invalid request (-32600) carrying the request's
//!   id, where rmcp's answer has no id to match it by;
//! - a call of a method noggin serves with parameters that do not fit it
//!   (`tools/call` with `arguments` that are no object, say): invalid
//!   params (-32602) saying what does not fit, where rmcp answers that the
//!   method does not exist;
//! - a call whose arguments say a key twice: the tool error the HTTP API's
//!   400 would be, where rmcp would use the last value silently.
//!
//! Everything else goes to rmcp as it came. Notifications are never
//! answered, as JSON-RPC says: one that is no notification rmcp reads is
//! dropped here, where rmcp would answer it. The answers of rmcp and
//! of this filter reach stdout whole lines at a time, never interleaved.

use rmcp::ServiceExt;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::jsonrpc::{self, INVALID_REQUEST, PARSE_ERROR, SERVER_ERROR};
use super::NogginMcp;
use crate::app::Noggin;

/// Bytes in flight between the filter and rmcp, each way.
const PIPE_BYTES: usize = 64 * 1024;

/// Serves MCP on stdin/stdout until the client goes away.
pub async fn serve(app: Noggin) -> anyhow::Result<()> {
    let (ours, theirs) = tokio::io::duplex(PIPE_BYTES);
    let (from_rmcp, mut to_rmcp) = tokio::io::split(ours);
    let (refusals, mut refused) = mpsc::unbounded_channel::<String>();

    let input = tokio::spawn(async move {
        let mut stdin = BufReader::new(tokio::io::stdin());
        let mut line = Vec::new();
        loop {
            line.clear();
            match stdin.read_until(b'\n', &mut line).await {
                Ok(0) => break,
                Ok(_) => {}
                Err(error) => {
                    tracing::warn!(%error, "cannot read MCP input");
                    break;
                }
            }
            match verdict(&line) {
                Verdict::Pass => {}
                Verdict::Drop => continue,
                Verdict::Answer(answer) => {
                    if refusals.send(answer).is_err() {
                        break;
                    }
                    continue;
                }
            }
            if !line.ends_with(b"\n") {
                line.push(b'\n');
            }
            if to_rmcp.write_all(&line).await.is_err() {
                break;
            }
        }
        // The end of the input, for rmcp as for the client.
        let _ = to_rmcp.shutdown().await;
    });

    let output = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        let mut from_rmcp = BufReader::new(from_rmcp);
        let mut line = Vec::new();
        let (mut rmcp_open, mut refusals_open) = (true, true);
        while rmcp_open || refusals_open {
            // `read_until` keeps what it read in `line` when the other
            // branch wins, so no answer of rmcp is cut.
            let whole: Option<Vec<u8>> = tokio::select! {
                read = from_rmcp.read_until(b'\n', &mut line), if rmcp_open => match read {
                    Ok(0) | Err(_) => {
                        rmcp_open = false;
                        (!line.is_empty()).then(|| std::mem::take(&mut line))
                    }
                    Ok(_) => Some(std::mem::take(&mut line)),
                },
                answer = refused.recv(), if refusals_open => match answer {
                    Some(answer) => Some((answer + "\n").into_bytes()),
                    None => {
                        refusals_open = false;
                        None
                    }
                },
            };
            if let Some(whole) = whole {
                if stdout.write_all(&whole).await.is_err() || stdout.flush().await.is_err() {
                    break;
                }
            }
        }
    });

    let served = serve_rmcp(app, theirs).await;
    // rmcp is done: what is still read is for no one, and the answers
    // written so far go out before noggin ends.
    input.abort();
    let _ = output.await;
    served
}

/// How long a `noggin mcp` that cannot serve waits for its client's first
/// request, to answer it with why.
const REFUSAL_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Answers the client's first request with `why` as a JSON-RPC error, for a
/// `noggin mcp` that cannot serve (another process holds the brain's
/// index): the client shows the reason, where it would only see the
/// connection close. Notifications before it are not answered; after
/// [`REFUSAL_WAIT`] without a request, nothing is.
pub async fn refuse(why: &str) {
    let answered = async {
        let mut stdin = BufReader::new(tokio::io::stdin());
        let mut line = Vec::new();
        loop {
            line.clear();
            if stdin.read_until(b'\n', &mut line).await.unwrap_or(0) == 0 {
                return;
            }
            let Ok(Value::Object(message)) = serde_json::from_slice::<Value>(&line) else {
                continue;
            };
            if !message.contains_key("id") {
                continue;
            }
            let answer = jsonrpc::answer(jsonrpc::id_of(&message), SERVER_ERROR, why.to_string());
            let mut stdout = tokio::io::stdout();
            let _ = stdout.write_all((answer + "\n").as_bytes()).await;
            let _ = stdout.flush().await;
            return;
        }
    };
    let _ = tokio::time::timeout(REFUSAL_WAIT, answered).await;
}

async fn serve_rmcp(app: Noggin, transport: tokio::io::DuplexStream) -> anyhow::Result<()> {
    let service = match NogginMcp::for_stdio(app)
        .serve(tokio::io::split(transport))
        .await
    {
        Ok(service) => service,
        // The input ended before a client said hello (a probe, `< /dev/null`):
        // a clean end, as the end of the input is later.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => {
            tracing::info!("MCP input ended before a client initialized");
            return Ok(());
        }
        Err(e) => anyhow::bail!("cannot start MCP on stdio: {e}"),
    };
    service
        .waiting()
        .await
        .map_err(|e| anyhow::anyhow!("MCP on stdio failed: {e}"))?;
    Ok(())
}

/// What becomes of a line of input.
#[derive(Debug, PartialEq)]
enum Verdict {
    /// rmcp reads it.
    Pass,
    /// A notification rmcp cannot read: no one hears of it.
    Drop,
    /// The error answer to a line that rmcp would not answer as JSON-RPC
    /// says.
    Answer(String),
}

fn verdict(line: &[u8]) -> Verdict {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) || jsonrpc::is_fitting_tool_call(line) {
        return Verdict::Pass;
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(error) => {
            // A client waits for the answer to its id: it is given where
            // the line is JSON that cannot be read whole.
            let id = jsonrpc::id_in_unreadable(line);
            return answer(id, PARSE_ERROR, format!("Parse error: {error}"));
        }
    };
    let Some(object) = value.as_object() else {
        return answer(
            Value::Null,
            INVALID_REQUEST,
            "Invalid Request: a message is one JSON object".into(),
        );
    };
    // A notification is never answered, whatever is wrong with it.
    if object.contains_key("method") && !object.contains_key("id") {
        if jsonrpc::readable(&value) {
            return Verdict::Pass;
        }
        tracing::debug!("dropping a notification that is none");
        return Verdict::Drop;
    }
    match jsonrpc::misread(object, &value).or_else(|| jsonrpc::twice_said(object, line)) {
        Some(answer) => Verdict::Answer(answer),
        None => Verdict::Pass,
    }
}

fn answer(id: Value, code: i64, message: String) -> Verdict {
    Verdict::Answer(jsonrpc::answer(id, code, message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::jsonrpc::INVALID_PARAMS;
    use serde_json::json;

    fn code_and_id(line: &str) -> Option<(i64, Value)> {
        let Verdict::Answer(answer) = verdict(line.as_bytes()) else {
            return None;
        };
        let answer: Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(answer["jsonrpc"], "2.0");
        assert!(
            answer["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{answer}"
        );
        Some((
            answer["error"]["code"].as_i64().unwrap(),
            answer["id"].clone(),
        ))
    }

    #[test]
    fn messages_rmcp_serves_pass() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"search","arguments":{"q":"deploy"}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"status"}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"note:///a.md"}}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#,
            // Unknown methods: rmcp's own answer (method not found) is right.
            r#"{"jsonrpc":"2.0","id":6,"method":"no/such/method","params":{"a":1}}"#,
            // A client's answer to a request of the server.
            r#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
            "",
            "  \r\n",
        ] {
            assert_eq!(verdict(line.as_bytes()), Verdict::Pass, "{line}");
            let with_crlf = format!("{line}\r\n");
            assert_eq!(verdict(with_crlf.as_bytes()), Verdict::Pass, "{line}");
        }
    }

    /// A call rmcp cannot read although it is JSON (arguments nested deeper
    /// than serde_json reads, a number no f64 holds) is answered with its
    /// id: rmcp drops such a line, and the client waited out its timeout.
    #[test]
    fn a_call_too_deep_or_too_large_to_read_is_answered_with_its_id() {
        let deep = format!("{}1{}", "[".repeat(130), "]".repeat(130));
        let shallow = format!("{}1{}", "[".repeat(100), "]".repeat(100));
        let call = |arguments: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"name":"session_events","arguments":{{"session":"s","events":{arguments}}}}}}}"#
            )
        };
        for arguments in [deep.as_str(), "[{\"type\":\"goal\",\"n\":1e400}]"] {
            let line = call(arguments);
            assert!(!jsonrpc::is_fitting_tool_call(line.as_bytes()));
            assert_eq!(
                code_and_id(&line),
                Some((PARSE_ERROR, json!(9))),
                "{arguments}"
            );
        }
        assert_eq!(verdict(call(&shallow).as_bytes()), Verdict::Pass);
        assert_eq!(verdict(call("[{\"n\":1e300}]").as_bytes()), Verdict::Pass);
    }

    #[test]
    fn what_is_not_json_is_a_parse_error() {
        for line in ["this is not json", "{\"jsonrpc\":", "\u{feff}[1,", "\u{0}"] {
            assert_eq!(
                code_and_id(line),
                Some((PARSE_ERROR, Value::Null)),
                "{line}"
            );
        }
        let invalid_utf8: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}";
        assert!(matches!(verdict(invalid_utf8), Verdict::Answer(a) if a.contains("-32700")));
    }

    #[test]
    fn json_that_is_no_request_is_an_invalid_request_with_its_id() {
        let cases = [
            (r#"{"id":6,"method":"ping"}"#, json!(6)),
            (r#"{"jsonrpc":"1.0","id":"x","method":"ping"}"#, json!("x")),
            (r#"{"jsonrpc":"2.0","id":5}"#, json!(5)),
            (r#"{"jsonrpc":"2.0","id":8,"method":42}"#, json!(8)),
            (
                r#"{"jsonrpc":"2.0","id":{"no":1},"method":"ping"}"#,
                Value::Null,
            ),
            (r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, Value::Null),
            ("42", Value::Null),
            // MCP's parameters are an object.
            (
                r#"{"jsonrpc":"2.0","id":9,"method":"no/such","params":[1]}"#,
                json!(9),
            ),
        ];
        for (line, id) in cases {
            assert_eq!(code_and_id(line), Some((INVALID_REQUEST, id)), "{line}");
        }
    }

    #[test]
    fn arguments_that_say_a_key_twice_are_a_tool_error_with_the_id() {
        for (line, key) in [
            (
                r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"search","arguments":{"q":"a","q":"b"}}}"#,
                "q",
            ),
            (
                r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"session_events","arguments":{"session":"s","events":[{"type":"goal","text":"x","type":"decision"}]}}}"#,
                "type",
            ),
        ] {
            let Verdict::Answer(answer) = verdict(line.as_bytes()) else {
                panic!("{line} is answered here");
            };
            let answer: Value = serde_json::from_str(&answer).unwrap();
            assert_eq!(answer["id"], 9, "{answer}");
            assert_eq!(answer["result"]["isError"], true, "{answer}");
            let text = answer["result"]["content"][0]["text"].as_str().unwrap();
            assert!(
                text.starts_with("invalid-json: ")
                    && text.contains(&format!("duplicate field `{key}`")),
                "{text}"
            );
        }
        // The same key in two objects is no key said twice.
        let apart = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"session_events","arguments":{"session":"s","events":[{"type":"goal"},{"type":"decision"}]}}}"#;
        assert_eq!(verdict(apart.as_bytes()), Verdict::Pass);
    }

    #[test]
    fn parameters_that_do_not_fit_a_served_method_are_invalid_params() {
        let cases = [
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":[1,2]}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":"search"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}"#,
        ];
        for line in cases {
            assert_eq!(
                code_and_id(line),
                Some((INVALID_PARAMS, json!(2))),
                "{line}"
            );
        }
        let answer = verdict(cases[0].as_bytes());
        assert!(
            matches!(&answer, Verdict::Answer(a) if a.contains("tools/call")),
            "{answer:?}"
        );
        // Absent params are said to be missing, in the caller's words.
        let answer = verdict(cases[3].as_bytes());
        assert!(
            matches!(&answer, Verdict::Answer(a)
                if a.contains("params (an object) are missing") && !a.contains("WithMeta")),
            "{answer:?}"
        );
    }

    #[test]
    fn notifications_are_never_answered() {
        for line in [
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","method":"no/such/notification","params":{"a":1}}"#,
        ] {
            assert_eq!(verdict(line.as_bytes()), Verdict::Pass, "{line}");
        }
        for line in [
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":7}"#,
            r#"{"method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","method":"no/such/notification","params":[1]}"#,
        ] {
            assert_eq!(verdict(line.as_bytes()), Verdict::Drop, "{line}");
        }
    }
}

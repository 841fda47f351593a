//! JSON-RPC 2.0's error answers where rmcp's own would not say what is
//! wrong with a request: one definition for both transports.
//!
//! rmcp reads a request whose parameters do not fit its method as a request
//! of an unknown method, and answers "method not found"; a request that is
//! no JSON-RPC message at all it answers without its id (over stdio).

use rmcp::model::{
    CallToolRequest, ClientJsonRpcMessage, ClientRequest, InitializeRequest, JsonRpcMessage,
    ListResourcesRequest, ListToolsRequest, PingRequest, ReadResourceRequest,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// JSON-RPC 2.0's error codes noggin answers with itself.
pub(super) const PARSE_ERROR: i64 = -32700;
pub(super) const INVALID_REQUEST: i64 = -32600;
pub(super) const INVALID_PARAMS: i64 = -32602;
/// A server that cannot serve at all (JSON-RPC's range of server errors).
pub(super) const SERVER_ERROR: i64 = -32000;

/// A JSON-RPC error answer, its members in the order rmcp writes them.
#[derive(Serialize)]
struct Answer {
    jsonrpc: &'static str,
    id: Value,
    error: AnswerError,
}

#[derive(Serialize)]
struct AnswerError {
    code: i64,
    message: String,
}

/// The error answer to the request of `id`, as one line of JSON.
pub(super) fn answer(id: Value, code: i64, message: String) -> String {
    let answer = Answer {
        jsonrpc: "2.0",
        id,
        error: AnswerError { code, message },
    };
    serde_json::to_string(&answer).expect("an answer serializes")
}

/// The id a request is answered by: its own when that is a string or a
/// number, else null (as JSON-RPC says when it cannot be told).
pub(super) fn id_of(message: &Map<String, Value>) -> Value {
    message
        .get("id")
        .filter(|id| is_id(id))
        .cloned()
        .unwrap_or(Value::Null)
}

/// The id of a message that is JSON but cannot be read whole (nested
/// deeper than serde_json goes, a number no f64 holds): what the rest of
/// it is does not matter to finding it. Null when there is none to find.
pub(super) fn id_in_unreadable(line: &[u8]) -> Value {
    #[derive(Deserialize)]
    struct Id {
        id: Option<Value>,
    }
    serde_json::from_slice::<Id>(line)
        .ok()
        .and_then(|m| m.id)
        .filter(is_id)
        .unwrap_or(Value::Null)
}

/// True for what JSON-RPC takes as a request's id here: a string or a
/// number.
fn is_id(id: &Value) -> bool {
    id.is_string() || id.is_number()
}

/// The answer to a request (a message with an id) that rmcp would misread:
/// `-32602` for parameters that do not fit a method noggin serves, `-32600`
/// for what is no JSON-RPC message; `None` for a message rmcp reads as
/// what it is.
pub(super) fn misread(message: &Map<String, Value>, whole: &Value) -> Option<String> {
    let read = ClientJsonRpcMessage::deserialize(whole);
    if let Some(misfit) = misfit(message, &read) {
        return Some(misfit);
    }
    read.err().map(|error| {
        answer(
            id_of(message),
            INVALID_REQUEST,
            format!("Invalid Request: {error}"),
        )
    })
}

/// How [`Readable`] calls a key said twice.
const DUPLICATE: &str = "duplicate field";

/// A JSON value, skipped, that rmcp reads as the HTTP API would: not nested
/// deeper than serde_json goes, with no number that no f64 holds (`1e400`;
/// serde's `IgnoredAny` skips both, and rmcp then drops the line without an
/// answer), and with no object that says a key twice (rmcp would keep the
/// last silently, where the HTTP API refuses it; see [`twice_said`]).
struct Readable;

impl<'de> Deserialize<'de> for Readable {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(Look)
    }
}

struct Look;

impl<'de> serde::de::Visitor<'de> for Look {
    type Value = Readable;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Readable, E> {
        Ok(Readable)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Readable, E> {
        Ok(Readable)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Readable, E> {
        Ok(Readable)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Readable, E> {
        Ok(Readable)
    }
    fn visit_str<E>(self, _: &str) -> Result<Readable, E> {
        Ok(Readable)
    }
    fn visit_unit<E>(self) -> Result<Readable, E> {
        Ok(Readable)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Readable, A::Error> {
        while seq.next_element::<Readable>()?.is_some() {}
        Ok(Readable)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Readable, A::Error> {
        // A set, not a list: an object of many keys costs no more than
        // reading it.
        let mut keys = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if keys.contains(&key) {
                return Err(serde::de::Error::custom(format_args!(
                    "{DUPLICATE} `{key}`"
                )));
            }
            keys.insert(key);
            map.next_value::<Readable>()?;
        }
        Ok(Readable)
    }
}

/// True for a `tools/call` request whose parameters fit (a name, arguments
/// that are an object), told in one pass that keeps nothing of the
/// arguments: a call may carry a whole trajectory, which rmcp reads again,
/// and a tree of it and its typed copy cost more than the tool's own
/// reading. A message this does not tell is looked at whole.
pub(super) fn is_fitting_tool_call(message: &[u8]) -> bool {
    /// The members that say what a message is, in one pass over it; the
    /// arguments are only looked at for being an object.
    #[derive(Deserialize)]
    struct Head {
        jsonrpc: Option<Value>,
        id: Option<Value>,
        method: Option<Value>,
        params: Option<CallParams>,
    }
    #[derive(Deserialize)]
    struct CallParams {
        #[serde(rename = "name")]
        _name: String,
        #[serde(rename = "arguments")]
        _arguments: Option<AnObject>,
    }
    /// A JSON object, skipped rather than kept, as [`Readable`] skips it.
    struct AnObject;
    impl<'de> Deserialize<'de> for AnObject {
        fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_map(Look).map(|Readable| AnObject)
        }
    }
    // A struct may be read from an array too: only an object is told here.
    if message.trim_ascii_start().first() != Some(&b'{') {
        return false;
    }
    let Ok(head) = serde_json::from_slice::<Head>(message) else {
        return false;
    };
    head.jsonrpc.as_ref().and_then(Value::as_str) == Some("2.0")
        && head.id.as_ref().is_some_and(is_id)
        && head.method.as_ref().and_then(Value::as_str) == Some("tools/call")
        && head.params.is_some()
}

/// What `/mcp` answers itself, for a body rmcp would misread.
pub struct Refusal {
    /// The JSON-RPC answer.
    pub answer: String,
    /// What the transport gets in the body's place, to judge the request's
    /// headers as it judges every request's, when the body itself must not
    /// reach it: for a call whose arguments say a key twice, a ping of the
    /// same id, which runs no tool and changes nothing.
    pub stand_in: Option<Vec<u8>>,
}

/// The [`Refusal`] of `body`, if rmcp would misread it: a call whose
/// arguments say a key twice ([`twice_said`]), or a request of a method
/// noggin serves whose parameters do not fit it (`-32602`). One look at a
/// fitting call, however long its arguments, tells it is neither.
pub fn refusal(body: &[u8]) -> Option<Refusal> {
    if is_fitting_tool_call(body) {
        return None;
    }
    let whole: Value = serde_json::from_slice(body).ok()?;
    let message = whole.as_object()?;
    if let Some(answer) = twice_said(message, body) {
        let ping = json!({"jsonrpc": "2.0", "id": id_of(message), "method": "ping"});
        return Some(Refusal {
            answer,
            stand_in: Some(ping.to_string().into_bytes()),
        });
    }
    message.get("id")?;
    let answer = misfit(message, &ClientJsonRpcMessage::deserialize(&whole))?;
    Some(Refusal {
        answer,
        stand_in: None,
    })
}

/// The answer to a `tools/call` whose arguments have an object with a key
/// twice (`{"q": "a", "q": "b"}`), at any depth: a tool error with the code
/// the HTTP API refuses the same body with, where rmcp would use the last
/// value silently. `None` for any other message.
pub(super) fn twice_said(message: &Map<String, Value>, line: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Call<'a> {
        #[serde(borrow)]
        params: Option<Params<'a>>,
    }
    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(borrow)]
        arguments: Option<&'a serde_json::value::RawValue>,
    }
    if message.get("method").and_then(Value::as_str) != Some("tools/call") {
        return None;
    }
    let arguments = serde_json::from_slice::<Call>(line)
        .ok()?
        .params?
        .arguments?;
    let error = serde_json::from_str::<Readable>(arguments.get()).err()?;
    // What else makes a value unreadable makes the whole message so, and
    // that is answered before this is asked.
    if !error.to_string().starts_with(DUPLICATE) {
        return None;
    }
    let result = json!({
        "content": [{"type": "text", "text": format!("invalid-json: failed to deserialize parameters: {error}")}],
        "isError": true,
    });
    let answer = json!({"jsonrpc": "2.0", "id": id_of(message), "result": result});
    Some(answer.to_string())
}

fn misfit(
    message: &Map<String, Value>,
    read: &Result<ClientJsonRpcMessage, serde_json::Error>,
) -> Option<String> {
    // Only a request rmcp takes for one of an unknown method, or cannot
    // read at all, may be one whose parameters do not fit.
    match read {
        Ok(JsonRpcMessage::Request(request))
            if matches!(request.request, ClientRequest::CustomRequest(_)) => {}
        Ok(_) => return None,
        Err(_) => {}
    }
    if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return None;
    }
    let method = message.get("method")?.as_str()?;
    let typed = json!({"method": method, "params": message.get("params")});
    let error = match method {
        "initialize" => serde_json::from_value::<InitializeRequest>(typed).err(),
        "ping" => serde_json::from_value::<PingRequest>(typed).err(),
        "tools/list" => serde_json::from_value::<ListToolsRequest>(typed).err(),
        "tools/call" => serde_json::from_value::<CallToolRequest>(typed).err(),
        "resources/list" => serde_json::from_value::<ListResourcesRequest>(typed).err(),
        "resources/read" => serde_json::from_value::<ReadResourceRequest>(typed).err(),
        _ => None,
    }?;
    // serde names rmcp's own types for params that are absent or no object
    // ("expected struct WithMeta"); the caller needs to hear what is wrong.
    let why = match message.get("params") {
        None | Some(Value::Null) => "its params (an object) are missing".to_string(),
        Some(Value::Object(_)) => error.to_string(),
        Some(_) => "its params must be an object".to_string(),
    };
    Some(answer(
        id_of(message),
        INVALID_PARAMS,
        format!("Invalid params of {method}: {why}"),
    ))
}

/// Whether a message without an id (a notification, whatever its shape)
/// is one rmcp reads.
pub(super) fn readable(whole: &Value) -> bool {
    ClientJsonRpcMessage::deserialize(whole).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quick look at a `tools/call` agrees with the whole one: what it
    /// passes, rmcp reads as a call; what it does not, the whole look
    /// judges.
    #[test]
    fn a_fitting_tool_call_is_told_without_a_tree() {
        let fitting = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"q":"deploy"}}}"#,
            r#" {"params":{"name":"status"},"method":"tools/call","id":"a","jsonrpc":"2.0"}"#,
        ];
        for line in fitting {
            assert!(is_fitting_tool_call(line.as_bytes()), "{line}");
            let whole: Value = serde_json::from_str(line).unwrap();
            assert_eq!(misread(whole.as_object().unwrap(), &whole), None, "{line}");
        }
        let other = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{"name":"status"}}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"status"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"status"}}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"status"}}]"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"status"}"#,
        ];
        for line in other {
            assert!(!is_fitting_tool_call(line.as_bytes()), "{line}");
        }
    }
}

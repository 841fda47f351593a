//! What a tool gives back: its structured content, and the text a model
//! reads.
//!
//! rmcp's own `Json` widens every `f32` to `f64` on the way to a JSON value
//! (a confidence of 0.9 came out as `0.8999999761581421`, where the HTTP API
//! writes `0.9`), and its text is always the whole structure. Here the
//! value is written as the HTTP API writes it, and a tool whose point is a
//! block within a budget (`working_context`) shows the model that block
//! rather than the full structure beside it.

use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, ErrorData};
use serde::Serialize;

/// A tool's output. Named `Json` as rmcp's is: the `#[tool]` macro derives
/// a tool's output schema from a return type of that name.
pub struct Json<T> {
    value: T,
    /// What the model reads, when not the JSON of `value`.
    text: Option<String>,
}

impl<T> Json<T> {
    pub fn new(value: T) -> Json<T> {
        Json { value, text: None }
    }

    /// `value` as structured content, `text` as what the model reads.
    pub fn shown_as(value: T, text: String) -> Json<T> {
        Json {
            value,
            text: Some(text),
        }
    }
}

impl<T: Serialize> IntoCallToolResult for Json<T> {
    fn into_call_tool_result(self) -> Result<CallToolResponse, ErrorData> {
        let unwritable = |e: serde_json::Error| {
            ErrorData::internal_error(format!("cannot write the tool's output: {e}"), None)
        };
        // Written once as text, then read back: each number is the one the
        // text says.
        let json = serde_json::to_string(&self.value).map_err(unwritable)?;
        let value: serde_json::Value = serde_json::from_str(&json).map_err(unwritable)?;
        let mut result = CallToolResult::structured(value);
        result.content = vec![ContentBlock::text(self.text.unwrap_or(json))];
        Ok(result.into())
    }
}

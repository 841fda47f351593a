//! The one error type of the HTTP API and the extractors that produce it.
//!
//! Every failure leaves as `{"error": {"code", "message"}}`. 4xx are the
//! caller's doing and are not logged as errors; 5xx are logged with their
//! detail and answered without it.

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::de::DeserializeOwned;
use serde_json::json;

/// An API error: a status, a stable machine-readable code and a message.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not-found", message)
    }

    /// A passing shortage (file descriptors, a note an editor keeps saving):
    /// 503 with `Retry-After`, so the caller retries instead of reporting a bug.
    pub fn busy(error: impl std::fmt::Display) -> Self {
        tracing::warn!(%error, "request refused for now");
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "busy",
            "noggin is short of resources or the note is being edited; try again in a moment",
        )
    }

    /// A failure of noggin itself: logged here, answered without detail.
    pub fn internal(error: impl std::fmt::Display) -> Self {
        tracing::error!(%error, "request failed");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "noggin failed to handle this request; see its log",
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error": {"code": self.code, "message": self.message}});
        let mut response = (self.status, Json(body)).into_response();
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            response.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from_static("1"),
            );
        }
        response
    }
}

/// Every use case's error maps to HTTP here, and only here.
impl From<crate::app::Error> for ApiError {
    fn from(error: crate::app::Error) -> Self {
        match error {
            crate::app::Error::Invalid { code, message } => ApiError::bad_request(code, message),
            crate::app::Error::NotFound(message) => ApiError::not_found(message),
            crate::app::Error::UnknownSession(message) => {
                ApiError::new(StatusCode::NOT_FOUND, "unknown-session", message)
            }
            crate::app::Error::TooLarge { code, message } => {
                ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, code, message)
            }
            crate::app::Error::Busy(message) => ApiError::busy(message),
            crate::app::Error::Unavailable { code, message } => {
                ApiError::new(StatusCode::SERVICE_UNAVAILABLE, code, message)
            }
            crate::app::Error::Internal(error) => ApiError::internal(format!("{error:#}")),
        }
    }
}

/// Through the use cases' error, so a session error gets the same status
/// and code whichever way it comes.
impl From<crate::context::Error> for ApiError {
    fn from(error: crate::context::Error) -> Self {
        ApiError::from(crate::app::Error::from(error))
    }
}

/// A JSON object as the body, read into `T`; rejections (bad JSON, wrong
/// type, too large) use the API's error shape. Anything but an object is
/// refused: serde would also read a struct from a list, by position.
pub struct AppJson<T>(pub T);

impl<S, T> FromRequest<S> for AppJson<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match Json::<ObjectOnly<T>>::from_request(req, state).await {
            Ok(Json(ObjectOnly(value))) => Ok(AppJson(value)),
            Err(rejection) => Err(json_rejection(rejection)),
        }
    }
}

/// `T` read from a JSON object only, in the same single pass over the body.
struct ObjectOnly<T>(T);

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for ObjectOnly<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Object<T>(std::marker::PhantomData<T>);
        impl<'de, T: serde::Deserialize<'de>> serde::de::Visitor<'de> for Object<T> {
            type Value = T;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }
        deserializer
            .deserialize_map(Object(std::marker::PhantomData))
            .map(ObjectOnly)
    }
}

/// Any JSON value as the body (session events come as a list or an
/// object), with the API's rejections. An object with a key twice is
/// refused, as the typed bodies refuse a duplicate field: `{"type":
/// "user_message", …, "type": "goal"}` is no event of either kind.
pub struct AnyJson(pub serde_json::Value);

/// A JSON value in which no object has a key twice, at any depth.
struct Unique(serde_json::Value);

impl<'de> serde::Deserialize<'de> for Unique {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(UniqueVisitor).map(Unique)
    }
}

struct UniqueVisitor;

impl<'de> serde::de::Visitor<'de> for UniqueVisitor {
    type Value = serde_json::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Unique(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(serde_json::Value::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(serde::de::Error::custom(format_args!(
                    "duplicate field `{key}`"
                )));
            }
            let Unique(value) = map.next_value()?;
            object.insert(key, value);
        }
        Ok(serde_json::Value::Object(object))
    }
}

impl<S> FromRequest<S> for AnyJson
where
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match Json::<Unique>::from_request(req, state).await {
            Ok(Json(Unique(value))) => Ok(AnyJson(value)),
            Err(rejection) => Err(json_rejection(rejection)),
        }
    }
}

fn json_rejection(rejection: JsonRejection) -> ApiError {
    if timed_out(&rejection) {
        return ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "body-timeout",
            "the request body did not arrive in time (--body-timeout-ms)",
        );
    }
    let status = rejection.status();
    let code = match status {
        StatusCode::PAYLOAD_TOO_LARGE => "body-too-large",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported-media-type",
        _ => "invalid-json",
    };
    // A body of the wrong shape is as bad a request as broken JSON: one
    // status for both (axum would say 422 for the former).
    let status = if status.is_client_error() && status != StatusCode::UNPROCESSABLE_ENTITY {
        status
    } else {
        StatusCode::BAD_REQUEST
    };
    ApiError::new(status, code, rejection.body_text())
}

/// True when the body stopped coming: the server's body timeout, not a
/// malformed body.
fn timed_out(rejection: &JsonRejection) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(rejection);
    while let Some(error) = cause {
        if error.is::<super::serve::BodyTimedOut>() {
            return true;
        }
        cause = error.source();
    }
    false
}

/// `Query` that refuses query strings that are not valid UTF-8 once
/// percent-decoded (instead of silently replacing the bytes).
pub struct AppQuery<T>(pub T);

impl<S, T> FromRequestParts<S> for AppQuery<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let raw = parts.uri.query().unwrap_or("");
        for pair in raw.split('&') {
            let bytes: Vec<u8> = percent_encoding::percent_decode_str(pair).collect();
            if std::str::from_utf8(&bytes).is_err() {
                return Err(ApiError::bad_request(
                    "invalid-query",
                    "the query string is not valid UTF-8 after percent-decoding",
                ));
            }
        }
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(value)) => Ok(AppQuery(value)),
            Err(rejection) => Err(query_rejection(rejection)),
        }
    }
}

fn query_rejection(rejection: QueryRejection) -> ApiError {
    ApiError::bad_request("invalid-query", rejection.body_text())
}

//! An answer that is not a success: the model's `Error` object with its HTTP status.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::otg::{Error, ErrorKind, Refusal};

/// A failed request: the status, and the model's `Error` whose `code` is that status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub error: Error,
}

impl ApiError {
    /// The request was refused (`kind: validation`), with a 4xx `status`.
    pub fn refused(status: StatusCode, msg: impl Into<String>) -> ApiError {
        ApiError {
            status,
            error: Error {
                code: i32::from(status.as_u16()),
                kind: Some(ErrorKind::Validation),
                errors: vec![msg.into()],
            },
        }
    }

    /// 400: a body or a value the server does not take.
    pub fn bad(msg: impl Into<String>) -> ApiError {
        ApiError::refused(StatusCode::BAD_REQUEST, msg)
    }

    /// 409: the request does not fit the state traffic is in.
    pub fn conflict(msg: impl Into<String>) -> ApiError {
        ApiError::refused(StatusCode::CONFLICT, msg)
    }

    /// 500: the server could not do what was asked (`kind: internal`).
    pub fn internal(msg: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            error: Error {
                code: 500,
                kind: Some(ErrorKind::Internal),
                errors: vec![msg.into()],
            },
        }
    }

    /// The message, for tests and logs.
    pub fn message(&self) -> &str {
        self.error.errors.first().map_or("", String::as_str)
    }
}

impl From<Refusal> for ApiError {
    fn from(r: Refusal) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            error: r.to_error(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        json(self.status, &self.error)
    }
}

/// `v` as a JSON answer with `status`.
pub fn json<T: serde::Serialize>(status: StatusCode, v: &T) -> Response {
    match serde_json::to_vec(v) {
        Ok(body) => (
            status,
            [(axum::http::header::CONTENT_TYPE, "application/json")],
            body,
        )
            .into_response(),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

//! A body rmcp cannot read, answered with HTTP 400 and the JSON-RPC error
//! that says what is wrong; and the JSON answers the middleware writes.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::router::MAX_BODY;
use crate::wire;

/// rmcp answers a body it cannot read as a client message with HTTP 415
/// and plain text, whatever is wrong with it; clients expect HTTP 400 and
/// the JSON-RPC error that says what (see `wire`). The body is kept, as
/// shared bytes, to read it again only then.
pub(super) async fn answer_unreadable(request: Request, next: Next) -> Response {
    let json = request.headers().get(header::CONTENT_TYPE).and_then(|value| value.to_str().ok()).is_some_and(
        |value| value.split(';').next().unwrap_or_default().trim().eq_ignore_ascii_case("application/json"),
    );
    if request.method() != Method::POST || !json {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let body = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(body) => body,
        Err(error) => {
            let too_long = std::error::Error::source(&error)
                .is_some_and(|source| source.is::<http_body_util::LengthLimitError>());
            return if too_long {
                json_response(StatusCode::PAYLOAD_TOO_LARGE, wire::too_long(MAX_BODY))
            } else {
                // The client stopped sending, or took longer than the read timeout.
                (StatusCode::BAD_REQUEST, format!("could not read the request body: {error}")).into_response()
            };
        }
    };
    let response = next.run(Request::from_parts(parts, Body::from(body.clone()))).await;
    if response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return json_response(StatusCode::BAD_REQUEST, wire::unreadable(&body));
    }
    response
}

fn json_response(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

pub(super) fn json_rpc_error(status: StatusCode, code: i64, message: &str) -> Response {
    json_response(status, wire::answer(code, None, message.to_owned()))
}

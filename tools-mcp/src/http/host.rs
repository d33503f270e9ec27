//! The host a request names, made plain before rmcp checks it against the
//! allowed hosts (RFC 9112 §3.2, <https://www.rfc-editor.org/rfc/rfc9112#section-3.2>):
//! a request with more than one `Host` is refused, and the authority of an
//! absolute-form target (`POST http://evil.example/mcp`) is the host,
//! whatever `Host` says.

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

pub(super) async fn one_host(mut request: Request, next: Next) -> Response {
    // rmcp reads the first `Host` only: a second one after a good first one
    // would pass its check while a proxy in front may route on the second.
    if request.headers().get_all(header::HOST).iter().nth(1).is_some() {
        return (StatusCode::BAD_REQUEST, "Bad Request: more than one Host header").into_response();
    }
    // "When an origin server receives a request with an absolute-form of
    // request-target, the origin server MUST ignore the received Host header
    // field (if any) and instead use the host information of the
    // request-target" (RFC 9112 §3.2.2); over HTTP/2 the target's authority
    // is `:authority`, which takes the same place. rmcp reads `Host` only.
    if let Some(authority) = request.uri().authority() {
        // Without any `user@` before the host, which `Host` never carries.
        let host = authority.as_str().rsplit('@').next().unwrap_or_default();
        match HeaderValue::from_str(host) {
            Ok(host) => {
                request.headers_mut().insert(header::HOST, host);
            }
            Err(_) => {
                return (StatusCode::BAD_REQUEST, "Bad Request: invalid target authority").into_response();
            }
        }
    }
    next.run(request).await
}

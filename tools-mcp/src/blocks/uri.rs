//! The file name a resource URI carries: escaped into a `tool://` URI by
//! the server, read back from any URI's last segment by the client.

/// The last segment of a URI's path, unescaped: the file name in
/// `tool://chart/week%201.png` or `https://example.com/a/report.pdf`.
pub(super) fn last_segment(uri: &str) -> Option<String> {
    let uri = uri.split(['?', '#']).next().unwrap_or_default();
    let path = match uri.split_once("://") {
        Some((_, rest)) => &rest[rest.find('/')?..],
        None => uri.split_once(':').map_or(uri, |(_, rest)| rest),
    };
    let segment = path.rsplit('/').next().filter(|segment| !segment.is_empty())?;
    Some(unescape(segment))
}

/// `text` with every byte outside URI's unreserved characters
/// percent-encoded, to stand in a path segment.
pub(super) fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            escaped.push(char::from(byte));
        } else {
            escaped.push_str(&format!("%{byte:02X}"));
        }
    }
    escaped
}

/// Percent-escapes decoded; a `%` that starts no escape is kept as it is.
pub(super) fn unescape(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = bytes.get(at + 1..at + 3).and_then(|pair| std::str::from_utf8(pair).ok());
        match (bytes[at], hex.and_then(|hex| u8::from_str_radix(hex, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                at += 3;
            }
            (byte, _) => {
                out.push(byte);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

//! clean_json never panics, and text that already is an object or array
//! comes back as it was (trimmed).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let cleaned = toolcall::clean_json(text);
    let trimmed = text.trim();
    if serde_json::from_str::<serde_json::Value>(trimmed).is_ok_and(|v| v.is_object() || v.is_array()) {
        assert_eq!(cleaned, trimmed);
    }
});

//! The export folder: written in a stable layout, checked against the code.

use crate::corpus;

use std::path::PathBuf;

use toolcall_core::Toolset;
use toolcall_provider::{Dialect, export};

/// A fresh folder under the system's temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("tools-export-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn small() -> Toolset {
    let mut set = Toolset::new();
    set.add(corpus::tool::<corpus::Flat>("get_weather", "Weather for a city.")).unwrap();
    set.add(corpus::tool::<corpus::Empty>("now", "The time.")).unwrap();
    set
}

#[test]
fn files_are_one_per_tool_and_dialect_in_pretty_json() {
    let dir = TempDir::new("layout");
    let written = export::write(&small(), &dir.0, &Dialect::EXPORTED).unwrap();
    let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
    assert_eq!(
        names,
        [
            "anthropic/get_weather.json",
            "anthropic/now.json",
            "gemini/get_weather.json",
            "gemini/now.json",
            "mcp/get_weather.json",
            "mcp/now.json",
            "openai/get_weather.json",
            "openai/now.json",
            "openai-strict/get_weather.json",
            "openai-strict/now.json",
        ]
    );
    let text = std::fs::read_to_string(dir.0.join("gemini/now.json")).unwrap();
    assert_eq!(text, "{\n  \"name\": \"now\",\n  \"description\": \"The time.\"\n}\n");
    // Stable: a second export writes the same bytes.
    let again = export::render(&small(), &Dialect::EXPORTED).unwrap();
    for (path, contents) in again {
        assert_eq!(std::fs::read_to_string(dir.0.join(&path)).unwrap(), contents, "{}", path.display());
    }
    export::assert_up_to_date(&small(), &dir.0);
}

#[test]
fn a_changed_schema_a_renamed_tool_and_a_missing_file_are_reported() {
    let dir = TempDir::new("drift");
    export::write(&small(), &dir.0, &Dialect::EXPORTED).unwrap();
    let mut changed = Toolset::new();
    changed.add(corpus::tool::<corpus::Renamed>("get_weather", "Weather for a city.")).unwrap();
    changed.add(corpus::tool::<corpus::Empty>("current_time", "The time.")).unwrap();
    let err = export::compare(&changed, &dir.0, &Dialect::EXPORTED).unwrap_err();
    let export::ExportError::OutOfDate(differences) = &err else { panic!("not a drift: {err}") };
    let files = |pick: fn(&export::Difference) -> bool| -> Vec<String> {
        let relative = |d: &export::Difference| d.path().strip_prefix(&dir.0).unwrap().display().to_string();
        differences.iter().filter(|d| pick(d)).map(relative).collect()
    };
    let stale = files(|d| matches!(d, export::Difference::Stale { .. }));
    assert_eq!(
        stale,
        [
            "openai/now.json",
            "openai-strict/now.json",
            "anthropic/now.json",
            "gemini/now.json",
            "mcp/now.json"
        ]
    );
    let missing = files(|d| matches!(d, export::Difference::Missing { .. }));
    assert_eq!(missing.len(), 5, "{missing:?}");
    assert!(missing.iter().all(|path| path.ends_with("/current_time.json")), "{missing:?}");
    let drifted = files(|d| matches!(d, export::Difference::Changed { .. }));
    assert_eq!(drifted.len(), 5, "{drifted:?}");
    assert!(drifted.iter().all(|path| path.ends_with("/get_weather.json")), "{drifted:?}");
    // The message is the report `assert_up_to_date` shows: stale files first, then by path.
    let report = err.to_string();
    assert!(report.starts_with("stale: "), "{report}");
    assert!(report.contains("openai/now.json (no tool of that name now)"), "{report}");
    assert!(report.contains("missing: ") && report.contains("current_time.json"), "{report}");
    assert!(report.contains("changed: ") && report.contains("mcp/get_weather.json"), "{report}");
    assert!(report.contains("-        \"city\""), "the diff shows the removed field:\n{report}");
    assert!(report.contains("+        \"queryText\""), "the diff shows the new field:\n{report}");
    // Writing again removes the stale files and makes the folder match.
    export::write(&changed, &dir.0, &Dialect::EXPORTED).unwrap();
    assert!(!dir.0.join("openai/now.json").exists());
    export::compare(&changed, &dir.0, &Dialect::EXPORTED).unwrap();
}

#[test]
#[should_panic(expected = "are out of date")]
fn assert_up_to_date_fails_on_drift() {
    let dir = TempDir::new("panic");
    export::write(&small(), &dir.0, &[Dialect::Mcp]).unwrap();
    export::assert_up_to_date(&small(), &dir.0);
}

#[test]
fn an_inexpressible_tool_fails_the_export() {
    let dir = TempDir::new("refused");
    let set = Toolset::builder().add(corpus::tool::<corpus::Recursive>("tree", "")).build().unwrap();
    let err = export::write(&set, &dir.0, &[Dialect::Gemini]).unwrap_err();
    assert!(err.to_string().contains("tool `tree` cannot be sent as gemini"), "{err}");
    let err = export::compare(&set, &dir.0, &[Dialect::Gemini]).unwrap_err();
    assert!(matches!(&err, export::ExportError::Dialect(e) if e.tool.as_deref() == Some("tree")), "{err}");
}

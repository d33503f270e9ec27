//! Tool definitions written to a folder at build time, and the check that a
//! checked-in folder still matches the code.
//!
//! The layout is `DIR/<dialect>/<tool>.json`, one file per tool and dialect
//! (the native web search as `web_search.json`), pretty JSON with a trailing
//! newline, so that the same code always writes the same bytes. A renamed
//! tool or a changed schema then shows up as a diff in review, and
//! [`assert_up_to_date`] fails a test before the change breaks stored
//! message history.
//!
//! ```
//! use toolcall_provider::{Dialect, export};
//! let dir = std::env::temp_dir().join(format!("tools-export-doc-{}", std::process::id()));
//! let tools = toolcall_core::Toolset::new();
//! export::write(&tools, &dir, &Dialect::EXPORTED).unwrap();
//! export::assert_up_to_date(&tools, &dir);
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use super::{Dialect, DialectError};
use toolcall_core::Toolset;

/// Set this environment variable to `1` to make [`assert_up_to_date`]
/// rewrite the folder instead of failing (then review the diff).
pub const UPDATE_ENV: &str = "TOOLS_UPDATE_SCHEMAS";

/// Why an export, or its comparison with a checked-in folder, failed.
///
/// The message of [`ExportError::OutOfDate`] is the report
/// [`assert_up_to_date`] panics with: every difference, one per line,
/// changed files with their diff.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// A tool cannot be expressed in a dialect.
    #[error(transparent)]
    Dialect(#[from] DialectError),
    /// A file or folder could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// The folder differs from the export ([`compare`]): every difference,
    /// stale files first, then the export's files in path order.
    #[error("{}", report(.0))]
    OutOfDate(Vec<Difference>),
}

/// One file that differs between a checked-in folder and the export.
#[derive(Debug)]
#[non_exhaustive]
pub enum Difference {
    /// A checked-in file the export no longer has: a tool removed or renamed.
    Stale {
        /// The file.
        path: PathBuf,
    },
    /// A file of the export the folder lacks: a tool added or renamed.
    Missing {
        /// The file the export would write.
        path: PathBuf,
    },
    /// A file whose contents changed: a changed schema or description.
    Changed {
        /// The file.
        path: PathBuf,
        /// A unified diff, the checked-in file first.
        diff: String,
    },
    /// A file of the export that is there but could not be read.
    Unreadable {
        /// The file.
        path: PathBuf,
        /// What the system said.
        error: io::Error,
    },
}

impl Difference {
    /// The file that differs.
    pub fn path(&self) -> &Path {
        match self {
            Self::Stale { path } | Self::Missing { path } => path,
            Self::Changed { path, .. } | Self::Unreadable { path, .. } => path,
        }
    }
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Stale { path } => write!(f, "stale: {} (no tool of that name now)", path.display()),
            Self::Missing { path } => write!(f, "missing: {}", path.display()),
            Self::Changed { path, diff } => write!(f, "changed: {}\n{diff}", path.display()),
            Self::Unreadable { path, error } => write!(f, "unreadable: {}: {error}", path.display()),
        }
    }
}

fn report(differences: &[Difference]) -> String {
    let mut report = String::new();
    for difference in differences {
        let _ = writeln!(report, "{difference}");
    }
    report
}

/// Every file of the export, relative to the folder (`openai/get_forecast.json`),
/// with its contents, sorted by path.
///
/// # Errors
///
/// [`DialectError`] for the first tool, web search option or limit a dialect refuses
/// ([`Dialect::definitions`]).
pub fn render(toolset: &Toolset, dialects: &[Dialect]) -> Result<BTreeMap<PathBuf, String>, DialectError> {
    let mut files = BTreeMap::new();
    for dialect in dialects {
        for definition in dialect.definitions(toolset)? {
            let path = Path::new(dialect.name()).join(format!("{}.json", definition.name));
            files.insert(path, pretty(&definition.value));
        }
    }
    Ok(files)
}

fn pretty(value: &serde_json::Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
    text.push('\n');
    text
}

/// Write the export to `dir`, replacing what each dialect's folder held
/// (stale `.json` files of removed or renamed tools are deleted). Returns the
/// files written, relative to `dir`.
///
/// # Errors
///
/// [`ExportError::Dialect`] when a dialect refuses the toolset (nothing is written then);
/// [`ExportError::Io`] when a folder or file cannot be created, listed, deleted or written.
pub fn write(toolset: &Toolset, dir: &Path, dialects: &[Dialect]) -> Result<Vec<PathBuf>, ExportError> {
    let files = render(toolset, dialects)?;
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| ExportError::Io { path, source }
    };
    for dialect in dialects {
        let folder = dir.join(dialect.name());
        std::fs::create_dir_all(&folder).map_err(io(&folder))?;
        for stale in json_files(&folder).map_err(io(&folder))? {
            if !files.contains_key(&Path::new(dialect.name()).join(&stale)) {
                let path = folder.join(&stale);
                std::fs::remove_file(&path).map_err(io(&path))?;
            }
        }
    }
    for (relative, text) in &files {
        let path = dir.join(relative);
        std::fs::write(&path, text).map_err(io(&path))?;
    }
    Ok(files.into_keys().collect())
}

/// The `.json` file names in a folder, sorted; none if it does not exist.
fn json_files(folder: &Path) -> io::Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(folder) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error),
    };
    let mut names = Vec::new();
    for entry in entries {
        let name = PathBuf::from(entry?.file_name());
        if name.extension().is_some_and(|ext| ext == "json") {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

/// Compare `dir` with the export of `toolset` in `dialects`: `Ok` if they
/// match, otherwise every stale, missing, changed (with a unified diff,
/// checked-in file first) and unreadable file.
///
/// # Errors
///
/// [`ExportError::OutOfDate`] listing every difference (run [`write()`] to update the folder);
/// [`ExportError::Dialect`] when a dialect refuses the toolset; [`ExportError::Io`] when a
/// folder cannot be listed.
pub fn compare(toolset: &Toolset, dir: &Path, dialects: &[Dialect]) -> Result<(), ExportError> {
    let files = render(toolset, dialects)?;
    let mut differences = Vec::new();
    for dialect in dialects {
        let folder = dir.join(dialect.name());
        let existing =
            json_files(&folder).map_err(|source| ExportError::Io { path: folder.clone(), source })?;
        for name in existing {
            if !files.contains_key(&Path::new(dialect.name()).join(&name)) {
                differences.push(Difference::Stale { path: folder.join(name) });
            }
        }
    }
    for (relative, expected) in &files {
        let path = dir.join(relative);
        match std::fs::read_to_string(&path) {
            Ok(actual) if &actual == expected => {}
            Ok(actual) => {
                let diff = similar::TextDiff::from_lines(&actual, expected);
                let diff =
                    diff.unified_diff().context_radius(3).header("checked in", "generated").to_string();
                differences.push(Difference::Changed { path, diff });
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                differences.push(Difference::Missing { path });
            }
            Err(error) => differences.push(Difference::Unreadable { path, error }),
        }
    }
    if differences.is_empty() { Ok(()) } else { Err(ExportError::OutOfDate(differences)) }
}

/// Fail (panic, for tests) when `dir` no longer matches the export of
/// `toolset` in [`Dialect::EXPORTED`], with a diff of every difference.
/// With `TOOLS_UPDATE_SCHEMAS=1` the folder is rewritten instead.
pub fn assert_up_to_date(toolset: &Toolset, dir: impl AsRef<Path>) {
    let dir = dir.as_ref();
    if std::env::var(UPDATE_ENV).is_ok_and(|v| v == "1") {
        if let Err(error) = write(toolset, dir, &Dialect::EXPORTED) {
            panic!("could not update the exported schemas in {}: {error}", dir.display());
        }
        return;
    }
    if let Err(report) = compare(toolset, dir, &Dialect::EXPORTED) {
        panic!(
            "the exported tool schemas in {} are out of date:\n{report}\nIf the change is intended, \
             rewrite them ({UPDATE_ENV}=1 cargo test, or the export_schemas example) and commit them; \
             a renamed tool or changed schema affects stored message history.",
            dir.display()
        );
    }
}

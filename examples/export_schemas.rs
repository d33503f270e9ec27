//! Write every example tool's definition in every dialect to a folder, one
//! file per tool and dialect (`DIR/<dialect>/<tool>.json`).
//!
//! ```text
//! cargo run --example export_schemas -- --out schemas [--dialect openai]
//! ```
//!
//! Dialects: openai, openai-strict, anthropic, gemini, mcp (and
//! openai-responses, openai-responses-strict, anthropic-strict).

#[path = "export_set/mod.rs"]
mod export_set;

use std::path::PathBuf;
use std::process::ExitCode;

use toolcall::provider::{Dialect, export, limits};

fn main() -> ExitCode {
    let mut out = None;
    let mut dialects = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--out", Some(dir)) => out = Some(PathBuf::from(dir)),
            ("--dialect", Some(name)) => match name.parse::<Dialect>() {
                Ok(dialect) => dialects.push(dialect),
                Err(error) => return fail(&error.to_string()),
            },
            _ => return fail(&format!("unexpected argument `{arg}`")),
        }
    }
    let Some(out) = out else { return fail("missing --out DIR") };
    if dialects.is_empty() {
        dialects = Dialect::EXPORTED.to_vec();
    }
    let tools = export_set::toolset();
    match export::write(&tools, &out, &dialects) {
        Ok(files) => {
            for file in files {
                println!("{}", out.join(file).display());
            }
        }
        Err(error) => return fail(&error.to_string()),
    }
    for dialect in dialects {
        eprintln!("{}", limits::report(dialect, &tools));
    }
    ExitCode::SUCCESS
}

fn fail(message: &str) -> ExitCode {
    eprintln!("export_schemas: {message}\nusage: export_schemas --out DIR [--dialect NAME]...");
    ExitCode::FAILURE
}

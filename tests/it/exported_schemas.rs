//! The example tools' exported schemas in `schemas/` match the code: a
//! renamed tool or a changed schema fails here before it breaks stored
//! message history. Rewrite them with
//! `cargo run --example export_schemas -- --out schemas`.

#[path = "../../examples/export_set/mod.rs"]
mod export_set;

#[test]
fn exported_schemas_are_up_to_date() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
    toolcall::provider::export::assert_up_to_date(&export_set::toolset(), dir);
}

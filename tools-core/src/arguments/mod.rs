//! How a tool reads the arguments a model sent, one pipeline for every
//! tool: the size limit, [`clean_json`], the depth limit (skipped when the
//! request type bounds the nesting), serde (what it refuses is read again
//! with the nulls that mean "not given" dropped and the numbers sent as
//! strings read), then the schema's constraints.
//!
//! - `clean`: the lenient cleaner (fences, prose, double encoding);
//! - `limits`: [`ArgumentLimits`] and the checks on the raw text;
//! - `schema`: [`Parameters`], the canonical schema, its constraints and how
//!   deep a request of it can nest;
//! - `node`: a subschema found by a value's path, following `$ref`s;
//! - `nulls`: `null` for an optional field that takes none, read as
//!   "not given" when serde refuses it;
//! - `lax`: a number or boolean sent as a string (`"days": "2"`), read as
//!   pydantic's lax mode reads it where the schema takes no string;
//! - `parse`: the pipeline itself, typed ([`Parameters::parse`]) and
//!   untyped ([`Parameters::parse_object`]);
//! - `reasons`: a failure to read the arguments, in the model's terms;
//! - `report`: every problem of arguments serde refused at once (unknown
//!   and missing fields, wrong types, constraints), from the schema's
//!   validator, up to a bound;
//! - `constraints`: the schema's constraints, each violation worded with
//!   its field's path.

mod clean;
mod constraints;
mod lax;
mod limits;
mod node;
mod nulls;
mod parse;
mod reasons;
mod report;
mod schema;

pub use clean::clean_json;
pub use limits::ArgumentLimits;
pub use schema::{JsonObject, Parameters};

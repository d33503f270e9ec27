//! The `#[tool]` attribute (see issue 3); empty until the macro lands.

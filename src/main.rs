//! The `loom` command line.
fn main() {}

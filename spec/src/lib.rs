//! loom-spec: placeholder, filled in by the spec work.

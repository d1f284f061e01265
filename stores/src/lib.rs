//! loom-stores: placeholder, filled in by the stores work.

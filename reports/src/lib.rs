//! loom-report: placeholder, filled in by the reports work.

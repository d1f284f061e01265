//! Every vector file as its own named test (datatest-stable), run against the
//! reference kernel in-process. Expected failures (vectors/src/expected_failures.rs)
//! still run: a listed vector must fail, and an unexpected pass fails the test.

use loom_report::Status;
use loom_vectors::format::read_vector_file;
use loom_vectors::runner::{run_vector, Claims, InProcessKernel, KernelClient};
use std::path::Path;

fn run_one(path: &Path) -> datatest_stable::Result<()> {
    let vector = read_vector_file(path)?;
    let mut kernel = InProcessKernel::default();
    let claims = Claims::from_hello(kernel.hello().map_err(|e| e.to_string())?);
    let result = run_vector(&mut kernel, &claims, &vector);
    match result.status {
        Status::Pass | Status::Xfail => Ok(()),
        other => Err(format!(
            "{} ({}): {other}: {}\n{}",
            vector.id,
            vector.rules.join(", "),
            result.message.unwrap_or_default(),
            result
                .failure
                .map(|f| serde_json::to_string_pretty(&f).unwrap_or_default())
                .unwrap_or_default()
        )
        .into()),
    }
}

datatest_stable::harness! {
    { test = run_one, root = "cases", pattern = r"^.*\.json$" },
}

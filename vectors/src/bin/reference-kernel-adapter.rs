//! Serves the reference kernel over the stdio kernel protocol (the same server as
//! `loom kernel-adapter`), for tests and benches of this crate.

fn main() {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    if let Err(e) = loom_vectors::serve_reference_kernel(stdin.lock(), stdout.lock()) {
        eprintln!("kernel adapter: {e}");
        std::process::exit(1);
    }
}

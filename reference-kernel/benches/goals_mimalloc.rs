//! `benches/goals.rs` on mimalloc, the allocator the `loom` binary uses:
//! `cargo bench -p loom-kernel --bench goals_mimalloc`.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "goals.rs"]
mod goals;

fn main() {
    goals::main()
}

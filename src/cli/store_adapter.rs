//! `loom store-adapter`: the reference SQLite and PostgreSQL stores over the stdio store
//! protocol (`loom_harness::store_server`).

use clap::Args;

use super::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};

/// Arguments of `loom store-adapter`.
#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
loom conform --store 'cmd:loom store-adapter --store sqlite:/tmp/shared.db' --clients 4\n  \
loom conform --store 'cmd:loom store-adapter --store postgres://postgres@127.0.0.1:5432/test --schema loom_kill' --kit durability\n  \
loom sim --store 'cmd:loom store-adapter --store sqlite:/tmp/sim-{seed}.db' --seeds 5\n\n\
Every process started with the same --store (and --schema) shares one database, so hello answers sharedBackend: true; \
every write is committed before it is answered, so hello answers durable: true and the durability kit kills it for real.\n\n\
Exit status: 0 standard input closed (the harness is done), 1 the protocol broke (a request line that is not JSON, \
standard output gone), 2 usage error or a store that cannot be opened.")]
pub struct StoreAdapterArgs {
    /// The store to serve: sqlite:PATH (a database file) or postgres://URL.
    #[arg(long)]
    pub store: String,
    /// The PostgreSQL schema the processes share (created if missing).
    #[arg(long, default_value = "loom_store_adapter")]
    pub schema: String,
}

/// Runs `loom store-adapter`.
pub fn run(args: StoreAdapterArgs) -> u8 {
    let opened = loom_harness::store_server::serve(&args.store, &args.schema);
    match opened {
        Ok(()) => EXIT_OK,
        Err(e)
            if e.starts_with("--store")
                || e.starts_with("opening")
                || e.starts_with("connecting") =>
        {
            eprintln!("error: {e}");
            EXIT_USAGE
        }
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_FAILED
        }
    }
}

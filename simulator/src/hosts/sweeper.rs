//! The dispatcher's sweeper: the half of the dispatcher that watches the log and
//! re-queues every execution that is neither parked nor ended (a crashed resume, a run
//! that lost its store, a continued execution whose successor was never started).

use std::time::Duration;

use loom_kernel::spi::EventStore;

use crate::store_client::StoreClient;

pub async fn sweeper() -> super::HostResult {
    let client = StoreClient::new("dispatcher");
    loop {
        tokio::time::sleep(Duration::from_millis(super::SWEEP_MS)).await;
        let Ok(ids) = client.list_executions().await else {
            continue;
        };
        for id in ids {
            let Ok(log) = client.read(&id).await else {
                continue;
            };
            let state = loom_kernel::fold(&log);
            // A continued execution whose successor was not started (a crash between
            // `EXECUTION_CONTINUED` and the start): its recovery starts it.
            let unstarted_successor = match log
                .iter()
                .rev()
                .find(|e| e.event_type == "EXECUTION_CONTINUED")
            {
                Some(e) if state.status == loom_kernel::fold::Status::Continued => {
                    let to = e.payload["continuedTo"].as_str().unwrap_or_default();
                    matches!(client.read(to).await, Ok(l) if l.is_empty())
                }
                _ => false,
            };
            if !unstarted_successor
                && (state.status.is_terminal() || state.suspended_on().is_some())
            {
                continue;
            }
            let flow_id = log
                .first()
                .map(|e| e.workflow_id.clone())
                .unwrap_or_default();
            let package = loom_kernel::spi::ExecutionPackage {
                execution_id: id,
                flow_id,
                resume_hint: None,
                compute_target: None,
            };
            // AlreadyExists means it is queued or leased: nothing to do.
            let _ = client.dispatch(&package).await;
        }
    }
}

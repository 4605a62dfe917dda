//! Actions a session runs in order (Volcano's `pkg/scheduler/actions`).

pub mod allocate;
pub mod backfill;

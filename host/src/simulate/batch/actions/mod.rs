//! Actions a session runs in order (Volcano's `pkg/scheduler/actions`),
//! and their factory: the session loop names an action, this runs it.

pub mod allocate;
pub mod backfill;

use super::framework::session::Session;
use crate::config::batch::PluginOption;
use anyhow::Result;

/// Runs the configured action `name` on the session. The configuration
/// admits only these names (`config::batch`), so no other arrives here.
pub fn execute(name: &str, s: &mut Session, tiers: &[Vec<PluginOption>]) -> Result<()> {
    match name {
        "allocate" => allocate::execute(s, tiers),
        "backfill" => backfill::execute(s),
        _ => Ok(()),
    }
}

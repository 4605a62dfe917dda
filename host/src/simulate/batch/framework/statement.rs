//! A job's operations in one allocate pass (Volcano's
//! `framework.Statement`): placements are tentative until the job is
//! ready, so a gang that cannot run gives everything back.

use super::session::Session;
use crate::engine::schedule::Decision;
use anyhow::Result;

/// The placements of one job's pass, in order.
#[derive(Default)]
pub struct Statement {
    allocated: Vec<usize>,
}

impl Statement {
    pub fn allocate(&mut self, s: &mut Session, task: usize, decision: Decision) -> Result<()> {
        s.allocate(task, decision)?;
        self.allocated.push(task);
        Ok(())
    }

    /// Binds what was placed.
    pub fn commit(self, s: &mut Session) {
        for t in self.allocated {
            s.dispatch(t);
        }
    }

    /// Undoes every placement, last first, so the job holds nothing.
    pub fn discard(self, s: &mut Session) {
        for &t in self.allocated.iter().rev() {
            s.unallocate(t);
        }
    }
}

//! `drf`: Dominant Resource Fairness between jobs. A job's share is its
//! largest ratio of allocated to cluster total over the resources; lower
//! shares go first, and shares follow every allocation in the session.

use super::super::framework::plugin::Plugin;
use super::super::framework::state::State;
use super::super::resource::{Res, share};
use std::cmp::Ordering;

pub struct Drf {
    total: Res,
    /// Per job (by index): allocated and share.
    allocated: Vec<Res>,
    shares: Vec<f64>,
}

impl Drf {
    pub fn open(s: &State) -> Drf {
        let mut d = Drf {
            total: s.total.clone(),
            allocated: vec![Res::default(); s.jobs.len()],
            shares: vec![0.0; s.jobs.len()],
        };
        for (j, job) in s.jobs.iter().enumerate() {
            for &t in &job.tasks {
                if s.tasks[t].status.allocated() {
                    d.allocated[j].add(&s.tasks[t].resreq);
                }
            }
            d.update(j);
        }
        d
    }

    fn update(&mut self, job: usize) {
        let mut best = 0.0;
        for name in self.total.names() {
            let sh = share(self.allocated[job].get(name), self.total.get(name));
            if sh > best {
                best = sh;
            }
        }
        self.shares[job] = best;
    }
}

impl Plugin for Drf {
    fn name(&self) -> &'static str {
        "drf"
    }

    fn job_order(&self, _s: &State, l: usize, r: usize) -> Ordering {
        self.shares[l]
            .partial_cmp(&self.shares[r])
            .unwrap_or(Ordering::Equal)
    }

    fn on_allocate(&mut self, s: &State, task: usize) {
        let job = s.tasks[task].job;
        self.allocated[job].add(&s.tasks[task].resreq);
        self.update(job);
    }

    fn on_deallocate(&mut self, s: &State, task: usize) {
        let job = s.tasks[task].job;
        self.allocated[job].sub(&s.tasks[task].resreq);
        self.update(job);
    }
}

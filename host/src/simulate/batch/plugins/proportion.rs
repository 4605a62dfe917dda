//! `proportion`: queues share the cluster by weight. Each queue with jobs
//! *deserves* a part found by weighted water-filling (capped by what it
//! asks for and its capability, at least its guarantee); a queue at or
//! above its deserved share is skipped (`Overused`), a task that would
//! take it above is not placed (`Allocatable`), and queues with lower
//! shares go first.

use super::super::framework::plugin::Plugin;
use super::super::framework::state::{QueueInfo, State};
use super::super::job::Task;
use super::super::resource::{Res, share};
use std::cmp::Ordering;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default)]
struct Attr {
    weight: i32,
    share: f64,
    deserved: Res,
    allocated: Res,
    request: Res,
    guarantee: Res,
    real_capability: Res,
}

pub struct Proportion {
    /// By queue name: only queues that have jobs this session.
    queues: BTreeMap<String, Attr>,
}

impl Proportion {
    pub fn open(s: &State) -> Proportion {
        let mut total_guarantee = Res::default();
        for q in &s.queues {
            total_guarantee.add(&q.guarantee);
        }
        let mut queues: BTreeMap<String, Attr> = BTreeMap::new();
        for job in &s.jobs {
            let Some(q) = s.queue(&job.queue) else {
                continue;
            };
            let attr = queues.entry(q.name.clone()).or_insert_with(|| {
                let mut real = s.total.exceeded_part(&total_guarantee);
                real.add(&q.guarantee);
                if let Some(cap) = &q.capability {
                    real.min_dimension(cap, true);
                }
                Attr {
                    weight: q.weight,
                    guarantee: q.guarantee.clone(),
                    real_capability: real,
                    ..Default::default()
                }
            });
            for &t in &job.tasks {
                let task = &s.tasks[t];
                if task.status.allocated() {
                    attr.allocated.add(&task.resreq);
                    attr.request.add(&task.resreq);
                } else if task.status == super::super::job::TaskStatus::Pending {
                    attr.request.add(&task.resreq);
                }
            }
        }
        let mut p = Proportion { queues };
        p.water_fill(&s.total);
        p
    }

    /// Iterative weighted water-filling of the cluster total over the
    /// queues that still want more.
    fn water_fill(&mut self, total: &Res) {
        let mut remaining = total.clone();
        let mut meet: Vec<String> = Vec::new();
        // Each round meets a queue or shrinks what remains; the bound
        // only guards against float cycles.
        for _ in 0..10_000 {
            let total_weight: i64 = self
                .queues
                .iter()
                .filter(|(n, _)| !meet.contains(n))
                .map(|(_, a)| a.weight as i64)
                .sum();
            if total_weight == 0 {
                break;
            }
            let old_remaining = remaining.clone();
            let mut increased = Res::default();
            let mut decreased = Res::default();
            for (name, attr) in self.queues.iter_mut() {
                if meet.contains(name) {
                    continue;
                }
                let old = attr.deserved.clone();
                let mut part = remaining.clone();
                part.multi(attr.weight as f64 / total_weight as f64);
                attr.deserved.add(&part);
                attr.deserved.min_dimension(&attr.real_capability, true);
                attr.deserved.min_dimension(&attr.request, false);
                attr.deserved = attr.deserved.max(&attr.guarantee);
                update_share(attr);
                if attr.request.less_equal(&attr.deserved) || same(&attr.deserved, &old) {
                    meet.push(name.clone());
                }
                let (inc, dec) = attr.deserved.diff(&old);
                increased.add(&inc);
                decreased.add(&dec);
            }
            remaining.sub(&increased).add(&decreased);
            if remaining.is_empty() || same(&remaining, &old_remaining) {
                break;
            }
        }
    }
}

/// Equal in every dimension, a missing one being zero.
fn same(a: &Res, b: &Res) -> bool {
    a.cpu == b.cpu
        && a.memory == b.memory
        && a.scalars
            .keys()
            .chain(b.scalars.keys())
            .all(|k| a.get(k) == b.get(k))
}

fn update_share(attr: &mut Attr) {
    let mut best = 0.0;
    for name in attr.deserved.names() {
        let sh = share(attr.allocated.get(name), attr.deserved.get(name));
        if sh > best {
            best = sh;
        }
    }
    attr.share = best;
}

impl Plugin for Proportion {
    fn name(&self) -> &'static str {
        "proportion"
    }

    fn queue_order(&self, _s: &State, l: &QueueInfo, r: &QueueInfo) -> Ordering {
        if l.priority != r.priority {
            return r.priority.cmp(&l.priority);
        }
        let ls = self.queues.get(&l.name).map_or(0.0, |a| a.share);
        let rs = self.queues.get(&r.name).map_or(0.0, |a| a.share);
        ls.partial_cmp(&rs).unwrap_or(Ordering::Equal)
    }

    fn overused(&self, _s: &State, queue: &QueueInfo) -> Option<bool> {
        let attr = self.queues.get(&queue.name)?;
        Some(attr.deserved.less_equal(&attr.allocated))
    }

    fn allocatable(&self, _s: &State, queue: &QueueInfo, task: &Task) -> Option<bool> {
        let attr = self.queues.get(&queue.name)?;
        let mut future = attr.allocated.clone();
        future.add(&task.resreq);
        Some(future.less_equal_in(&attr.deserved, &task.resreq))
    }

    fn on_allocate(&mut self, s: &State, task: usize) {
        let job = &s.jobs[s.tasks[task].job];
        if let Some(attr) = self.queues.get_mut(&job.queue) {
            attr.allocated.add(&s.tasks[task].resreq);
            update_share(attr);
        }
    }

    fn on_deallocate(&mut self, s: &State, task: usize) {
        let job = &s.jobs[s.tasks[task].job];
        if let Some(attr) = self.queues.get_mut(&job.queue) {
            attr.allocated.sub(&s.tasks[task].resreq);
            update_share(attr);
        }
    }

    fn queue_share(&self, queue: &str) -> Option<(Res, Res)> {
        let a = self.queues.get(queue)?;
        Some((a.deserved.clone(), a.allocated.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::framework::state::{QueueInfo, State};
    use super::super::super::job::{Job, Task, TaskStatus};
    use super::*;
    use std::sync::Arc;

    fn cpu(milli: f64) -> Res {
        Res {
            cpu: milli,
            ..Default::default()
        }
    }

    fn task(job: usize, milli: f64, status: TaskStatus) -> Task {
        Task {
            key: String::new(),
            name: String::new(),
            namespace: String::new(),
            uid: String::new(),
            created: None,
            gated: false,
            object: Arc::new(Default::default()),
            role: String::new(),
            priority: 0,
            resreq: cpu(milli),
            best_effort: false,
            status,
            node: None,
            last: None,
            job,
        }
    }

    fn job(queue: &str, tasks: Vec<usize>) -> Job {
        Job {
            uid: queue.into(),
            name: queue.into(),
            namespace: String::new(),
            queue: queue.into(),
            min_available: 1,
            task_min: Default::default(),
            task_min_total: 0,
            priority: 0,
            created: None,
            phase: "Inqueue".into(),
            tasks,
            fit_errors: Default::default(),
            queue_hold: Default::default(),
        }
    }

    fn queue(name: &str, weight: i32, capability: Option<Res>) -> QueueInfo {
        QueueInfo {
            name: name.into(),
            weight,
            priority: 0,
            created: None,
            capability,
            guarantee: Res::default(),
        }
    }

    #[test]
    fn water_filling_gives_the_unmet_remainder_to_who_still_wants() {
        // 8 cpu, weights 3:1. a wants 10 (4 running), b 1 (pending).
        // Round 1: a 6, b 2 -> capped at its request 1 (met). 1 cpu
        // remains; round 2 gives it all to a: 7.
        let s = State {
            tasks: vec![
                task(0, 4000.0, TaskStatus::Running),
                task(0, 6000.0, TaskStatus::Pending),
                task(1, 1000.0, TaskStatus::Pending),
            ],
            jobs: vec![job("a", vec![0, 1]), job("b", vec![2])],
            queues: vec![queue("a", 3, None), queue("b", 1, None)],
            total: cpu(8000.0),
        };
        let p = Proportion::open(&s);
        let (da, aa) = p.queue_share("a").unwrap();
        let (db, _) = p.queue_share("b").unwrap();
        assert_eq!((da.cpu, db.cpu), (7000.0, 1000.0));
        assert_eq!(aa.cpu, 4000.0);
        // a's share is 4/7; b's 0: b goes first.
        assert_eq!(
            p.queue_order(&s, &s.queues[1], &s.queues[0]),
            std::cmp::Ordering::Less
        );
        // a may take 3 more cpu, not 3.5.
        assert_eq!(
            p.allocatable(&s, &s.queues[0], &task(0, 3000.0, TaskStatus::Pending)),
            Some(true)
        );
        assert_eq!(
            p.allocatable(&s, &s.queues[0], &task(0, 3500.0, TaskStatus::Pending)),
            Some(false)
        );
    }

    #[test]
    fn capability_caps_what_a_queue_deserves() {
        let s = State {
            tasks: vec![task(0, 8000.0, TaskStatus::Pending)],
            jobs: vec![job("a", vec![0])],
            queues: vec![queue("a", 1, Some(cpu(2000.0)))],
            total: cpu(8000.0),
        };
        let p = Proportion::open(&s);
        assert_eq!(p.queue_share("a").unwrap().0.cpu, 2000.0);
        assert_eq!(p.overused(&s, &s.queues[0]), Some(false));
    }
}

//! Scheduling logic of the FGD paper's simulator, for replaying the openb
//! GPU-sharing trace in sift.
//!
//! Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads
//! with Fragmentation Gradient Descent", USENIX ATC '23; simulator
//! `hkust-adsl/kubernetes-scheduler-simulator` (kube-scheduler v1.20.5 with
//! the Open-Gpu-Share filter/reserve plugin and one score plugin per policy).
//! Every function cites the simulator file and function it follows. The code
//! is written from a reading of that source, not translated line by line.
//!
//! The crate is pure: no I/O, no Kubernetes types, no clock and no entropy.
//! Randomness comes from a caller-provided [`rng::RandomSource`] (a seeded
//! [`rng::Xoshiro256`] is included); Go's `math/rand` stream is not emulated.
//!
//! - [`model`]: the node/pod model, which GPU models a pod accepts.
//! - [`gpu`]: the GPU filter, GPU-id selection, allocation.
//! - [`frag`]: typical pods and the fragmentation measure F.
//! - [`policy`]: FGD, BestFit, DotProd, GpuPacking, GpuClustering, Random
//!   scores; v1.20 aggregation and host selection.
//! - [`workload`]: arrival order (shuffle) and workload tuning.
//! - [`metric`]: allocation-ratio and frag curves bucketed by arrived load.
//!
//! One scheduling step of a replay, as the simulator does it:
//! ```
//! use sift_gpu_share_logic::{frag::TypicalPods, gpu::*, policy::*, rng::Xoshiro256};
//!
//! let mut nodes = vec![GpuNode::new(96_000, 786_432, 8, "G2"), GpuNode::new(64_000, 262_144, 2, "T4")];
//! let pod = GpuPod { cpu_milli: 8000, mem_mib: 30_000, num_gpu: 1, gpu_milli: 500, gpu_spec: vec![] };
//! let typical = TypicalPods::from_pods([&pod]);
//! let mut rng = Xoshiro256::seed_from_u64(42);
//!
//! let feasible: Vec<usize> = (0..nodes.len())
//!     .filter(|&i| fits_cpu_mem(&nodes[i], &pod) && fits(&nodes[i], &pod))
//!     .collect();
//! let views: Vec<&GpuNode> = feasible.iter().map(|&i| &nodes[i]).collect();
//! let totals = score_feasible_nodes(Policy::Fgd, &views, &pod, &typical, &mut rng).unwrap();
//! let host = feasible[select_host(&totals, TieBreak::FirstIndex, &mut rng).unwrap()];
//! let ids = select_gpus(Policy::Fgd.gpu_sel(), &nodes[host], &pod, Some(&typical), &mut rng).unwrap();
//! allocate(&mut nodes[host], &pod, &ids).unwrap();
//! assert_eq!(nodes[host].gpu_milli_used(), 500);
//! ```

pub mod frag;
pub mod gpu;
pub mod metric;
pub mod model;
pub mod policy;
pub mod rng;
pub mod workload;

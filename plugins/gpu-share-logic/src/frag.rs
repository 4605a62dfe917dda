//! Typical pods and the FGD fragmentation measure.
//!
//! Follows `pkg/utils/frag.go` of `hkust-adsl/kubernetes-scheduler-simulator`:
//! `GetTypicalPods`, `GetNodePodFrag`, `CanNodeHostPodOnGpuMemory`,
//! `GetGpuFragMilliByNodeResAndPodRes`, `NodeGpuShareFragAmount`,
//! `NodeGpuShareFragAmountScore`, `FragAmount.FragAmountSumExceptQ3`, and the
//! ordering of `pkg/type/resource.go` (`TargetPodList.Less`, `PodResource.Less`).
//!
//! The fragmentation of a node for a pod class m is the idle GPU milli that
//! m cannot use; the node's fragmentation is the class-frequency-weighted sum
//! `F(node) = Σ_m p_m · frag_m(node)` over the typical pods. FGD schedules to
//! make F fall the most (or rise the least).

use std::collections::HashMap;

use crate::model::{GpuNode, GpuPod, model_accessible_str};

/// A typical-pod class: the key of `tgtPodResCntMap` in `GetTypicalPods`,
/// i.e. `simontype.PodResource` = (milli-CPU, milli-GPU per GPU, GPU count,
/// GPU model string). Memory is **not** part of the key.
///
/// The derived `Ord` (field order) is `PodResource.Less`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PodClass {
    pub cpu_milli: i64,
    pub gpu_milli: u32,
    pub num_gpu: u32,
    /// The raw `|`-joined `gpu-card-model` annotation (empty = any model).
    pub gpu_spec: String,
}

impl PodClass {
    /// The class of a pod.
    pub fn of(pod: &GpuPod) -> Self {
        PodClass {
            cpu_milli: pod.cpu_milli,
            gpu_milli: pod.gpu_milli,
            num_gpu: pod.num_gpu,
            gpu_spec: pod.gpu_spec_string(),
        }
    }
}

/// A class with its (renormalised) frequency `p_m ∈ [0, 1]`.
#[derive(Clone, Debug, PartialEq)]
pub struct TypicalPod {
    pub class: PodClass,
    pub freq: f64,
}

/// Knobs of `GetTypicalPods` (`v1alpha1.TypicalPodsConfig`). The paper's runs
/// use the script defaults: CPU pods included, 95 % popularity threshold,
/// increase step 1, GPU resource weight 0 (so every pod counts 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TypicalPodsConfig {
    /// `isInvolvedCpuPods`: count pods with `num_gpu == 0`.
    pub include_cpu_pods: bool,
    /// `podPopularityThreshold`, percent; ≤ 0 means the simulator's 60.
    pub popularity_threshold_pct: i64,
}

impl Default for TypicalPodsConfig {
    fn default() -> Self {
        TypicalPodsConfig {
            include_cpu_pods: true,
            popularity_threshold_pct: 95,
        }
    }
}

/// The typical-pod table, most frequent class first.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct TypicalPods {
    pub pods: Vec<TypicalPod>,
}

impl TypicalPods {
    /// For each typical pod, whether a node of `model` is one its class
    /// allows (CPU-only classes: always).
    pub fn accessible_on(&self, model: &str) -> Vec<bool> {
        self.pods
            .iter()
            .map(|tp| tp.class.gpu_milli == 0 || model_accessible_str(model, &tp.class.gpu_spec))
            .collect()
    }

    /// [`TypicalPods::from_pods_with`] with the paper's settings. Pass the
    /// **original, untuned** workload: the simulator builds the table in
    /// `SetTypicalPods` before `TunePodsByNodeTotalResource`.
    pub fn from_pods<'a, I: IntoIterator<Item = &'a GpuPod>>(pods: I) -> Self {
        Self::from_pods_with(pods, TypicalPodsConfig::default())
    }

    /// `GetTypicalPods`:
    /// 1. count pods per [`PodClass`] (skipping CPU pods if so configured);
    /// 2. sort by count descending, ties by `PodResource.Less` descending
    ///    (larger CPU first, then larger milli-GPU, GPU count, model string);
    /// 3. take classes one at a time while the cumulative count is below
    ///    `threshold% × total` (so the last class taken crosses it);
    /// 4. `p_m = (count/total) / (cum/total)`, i.e. renormalise the kept
    ///    classes to sum to 1. If every class was taken, `p_m = count/total`.
    ///
    /// The float operations are done in the simulator's order.
    pub fn from_pods_with<'a, I: IntoIterator<Item = &'a GpuPod>>(
        pods: I,
        cfg: TypicalPodsConfig,
    ) -> Self {
        let mut counts: HashMap<PodClass, f64> = HashMap::new();
        let mut total = 0.0f64;
        for p in pods {
            if !cfg.include_cpu_pods && p.num_gpu == 0 {
                continue;
            }
            *counts.entry(PodClass::of(p)).or_insert(0.0) += 1.0;
            total += 1.0;
        }
        let mut list: Vec<(PodClass, f64)> = counts.into_iter().collect();
        list.sort_by(|a, b| {
            b.1.partial_cmp(&a.1)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then_with(|| b.0.cmp(&a.0))
        });

        let threshold = if cfg.popularity_threshold_pct > 0 {
            cfg.popularity_threshold_pct
        } else {
            60
        };
        let expected = threshold as f64 * total / 100.0;
        let mut taken = 0usize;
        let mut cum = 0.0f64;
        let mut freqs: Vec<f64> = Vec::with_capacity(list.len());
        while cum < expected && taken < list.len() {
            let count = list[taken].1;
            cum += count;
            freqs.push(count / total);
            taken += 1;
        }
        if taken < list.len() {
            let kept = cum / total;
            for f in &mut freqs {
                *f /= kept;
            }
        }
        TypicalPods {
            pods: list
                .into_iter()
                .zip(freqs)
                .map(|((class, _), freq)| TypicalPod { class, freq })
                .collect(),
        }
    }

    /// A table given explicitly (tests, or a table computed elsewhere).
    pub fn from_entries(entries: Vec<(PodClass, f64)>) -> Self {
        TypicalPods {
            pods: entries
                .into_iter()
                .map(|(class, freq)| TypicalPod { class, freq })
                .collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.pods.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pods.is_empty()
    }

    /// Σ p_m (should be 1 within 1e-3; `PodListRatioSum`).
    pub fn freq_sum(&self) -> f64 {
        self.pods.iter().map(|p| p.freq).sum()
    }
}

/// The frag categories of `GetNodePodFrag`, in `FragRatioDataMap` index order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FragCase {
    /// Q1: GPU does not fit and CPU lacks.
    Q1LackBoth = 0,
    /// Q2: GPU does not fit, CPU is enough.
    Q2LackGpu = 1,
    /// Q3: the class fits.
    Q3Satisfied = 2,
    /// Q4: GPU fits, CPU lacks.
    Q4LackCpu = 3,
    /// XL: a CPU-only class that fits.
    XlSatisfied = 4,
    /// XR: a CPU-only class that lacks CPU.
    XrLackCpu = 5,
    /// The node's model is not in the class's spec.
    NoAccess = 6,
}

/// `CanNodeHostPodOnGpuMemory`: at least `num_gpu` *distinct* devices with
/// `left ≥ gpu_milli` (unlike the filter, no packing several onto one
/// device). Returns false for `num_gpu == 0` only if there are no devices at
/// all, matching the Go loop; the function is reached only with
/// `gpu_milli > 0`.
pub fn can_host_on_gpus(gpus: &[u32], gpu_milli: u32, num_gpu: u32) -> bool {
    let mut need = i64::from(num_gpu);
    for &left in gpus {
        if left >= gpu_milli {
            need -= 1;
            if need <= 0 {
                return true;
            }
        }
    }
    false
}

/// `GetNodePodFrag` on a node state (CPU left, devices, model).
pub fn frag_case(cpu_left: i64, gpus: &[u32], model: &str, class: &PodClass) -> FragCase {
    let accessible = class.gpu_milli == 0 || model_accessible_str(model, &class.gpu_spec);
    frag_case_with(cpu_left, gpus, accessible, class)
}

/// [`frag_case`] with the model check done: `accessible` says whether the
/// node's model is one the class allows.
fn frag_case_with(cpu_left: i64, gpus: &[u32], accessible: bool, class: &PodClass) -> FragCase {
    let cpu_ok = cpu_left >= class.cpu_milli;
    if class.gpu_milli == 0 {
        return if cpu_ok {
            FragCase::XlSatisfied
        } else {
            FragCase::XrLackCpu
        };
    }
    if !accessible {
        return FragCase::NoAccess;
    }
    match (
        can_host_on_gpus(gpus, class.gpu_milli, class.num_gpu),
        cpu_ok,
    ) {
        (true, true) => FragCase::Q3Satisfied,
        (true, false) => FragCase::Q4LackCpu,
        (false, true) => FragCase::Q2LackGpu,
        (false, false) => FragCase::Q1LackBoth,
    }
}

/// `frag_m(node)` for one class, in milli-GPU: when the class fits (Q3) only
/// the devices too small for it count (`left < gpu_milli`,
/// `GetGpuFragMilliByNodeResAndPodRes`); in every other case (Q1, Q2, Q4,
/// XL, XR, no access) **all** idle GPU milli counts. Note that CPU-only
/// classes therefore always contribute the node's full idle GPU milli.
pub fn node_frag_for_class(node: &GpuNode, class: &PodClass) -> i64 {
    frag_for_class_raw(node.cpu_milli_left, &node.gpus, &node.model, class)
}

fn frag_for_class_raw(cpu_left: i64, gpus: &[u32], model: &str, class: &PodClass) -> i64 {
    let idle: i64 = gpus.iter().map(|&g| i64::from(g)).sum();
    match frag_case(cpu_left, gpus, model, class) {
        FragCase::Q3Satisfied => gpus
            .iter()
            .filter(|&&g| g < class.gpu_milli)
            .map(|&g| i64::from(g))
            .sum(),
        _ => idle,
    }
}

/// Frag milli per [`FragCase`] bucket (`utils.FragAmount.Data`).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct FragAmount {
    pub data: [f64; 7],
}

impl FragAmount {
    /// `FragAmountSumExceptQ3`: the fragmentation (the FGD objective and
    /// Fig. 7's "frag amount").
    pub fn sum_except_q3(&self) -> f64 {
        let mut out = 0.0;
        for (i, v) in self.data.iter().enumerate() {
            if i != FragCase::Q3Satisfied as usize {
                out += v;
            }
        }
        out
    }

    /// `FragAmountSumQ1Q2Q4`.
    pub fn sum_q1_q2_q4(&self) -> f64 {
        self.data[FragCase::Q1LackBoth as usize]
            + self.data[FragCase::Q2LackGpu as usize]
            + self.data[FragCase::Q4LackCpu as usize]
    }

    /// Σ of all buckets: the (frequency-weighted) idle GPU milli, the
    /// denominator of the simulator's frag ratio.
    pub fn idle(&self) -> f64 {
        self.data.iter().sum()
    }

    /// Element-wise `+=` (`AddFragAmount`).
    pub fn add(&mut self, other: &FragAmount) {
        for (a, b) in self.data.iter_mut().zip(other.data.iter()) {
            *a += b;
        }
    }
}

/// `NodeGpuShareFragAmount` on a node state. For each typical pod in table
/// order: a Q3 class adds `p·frag` to the Q2 bucket and `p·(idle − frag)` to
/// Q3; any other case adds `p·idle` to its own bucket.
pub fn frag_amount_raw(
    cpu_left: i64,
    gpus: &[u32],
    model: &str,
    typical: &TypicalPods,
) -> FragAmount {
    frag_amount_masked(cpu_left, gpus, &typical.accessible_on(model), typical)
}

/// [`frag_amount_raw`] with the model checks done
/// ([`TypicalPods::accessible_on`]): FGD evaluates one node up to nine
/// times per pod, and matching models is string work.
pub fn frag_amount_masked(
    cpu_left: i64,
    gpus: &[u32],
    accessible: &[bool],
    typical: &TypicalPods,
) -> FragAmount {
    let mut fa = FragAmount::default();
    let idle: i64 = gpus.iter().map(|&g| i64::from(g)).sum();
    for (tp, &ok) in typical.pods.iter().zip(accessible) {
        if !(0.0..=1.0).contains(&tp.freq) {
            continue; // the simulator logs and skips bad frequencies
        }
        let case = frag_case_with(cpu_left, gpus, ok, &tp.class);
        if case == FragCase::Q3Satisfied {
            let frag: i64 = gpus
                .iter()
                .filter(|&&g| g < tp.class.gpu_milli)
                .map(|&g| i64::from(g))
                .sum();
            fa.data[FragCase::Q2LackGpu as usize] += tp.freq * frag as f64;
            fa.data[FragCase::Q3Satisfied as usize] += tp.freq * (idle - frag) as f64;
        } else {
            fa.data[case as usize] += tp.freq * idle as f64;
        }
    }
    fa
}

/// `NodeGpuShareFragAmount` for a node.
pub fn node_frag_amount(node: &GpuNode, typical: &TypicalPods) -> FragAmount {
    frag_amount_raw(node.cpu_milli_left, &node.gpus, &node.model, typical)
}

/// `F(node) = Σ_m p_m · frag_m(node)` (`NodeGpuShareFragAmountScore`), in
/// milli-GPU.
pub fn node_frag(node: &GpuNode, typical: &TypicalPods) -> f64 {
    node_frag_amount(node, typical).sum_except_q3()
}

/// F for a hypothetical node state (used by FGD's what-if placements).
pub fn frag_raw(cpu_left: i64, gpus: &[u32], model: &str, typical: &TypicalPods) -> f64 {
    frag_amount_raw(cpu_left, gpus, model, typical).sum_except_q3()
}

/// [`frag_raw`] with the model checks done ([`frag_amount_masked`]).
pub fn frag_masked(cpu_left: i64, gpus: &[u32], accessible: &[bool], typical: &TypicalPods) -> f64 {
    frag_amount_masked(cpu_left, gpus, accessible, typical).sum_except_q3()
}

/// The cluster-wide amount of `ClusterGpuFragReport`: node amounts summed in
/// node order. `sum_except_q3()` is the logged "Frag amount"; Fig. 7 plots
/// `100 · amount / (1000 · total GPUs)`.
pub fn cluster_frag_amount<'a, I: IntoIterator<Item = &'a GpuNode>>(
    nodes: I,
    typical: &TypicalPods,
) -> FragAmount {
    let mut total = FragAmount::default();
    for n in nodes {
        total.add(&node_frag_amount(n, typical));
    }
    total
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::tests::{pod, ref_node};

    pub(crate) fn class(cpu: i64, num_gpu: u32, gpu_milli: u32, spec: &str) -> PodClass {
        PodClass {
            cpu_milli: cpu,
            gpu_milli,
            num_gpu,
            gpu_spec: spec.into(),
        }
    }

    /// A: 4 cores + 0.5 GPU (p .5), B: 8 cores + 2 GPUs (p .25), C: 2 cores
    /// CPU-only (p .25).
    pub(crate) fn abc() -> TypicalPods {
        TypicalPods::from_entries(vec![
            (class(4000, 1, 500, ""), 0.5),
            (class(8000, 2, 1000, ""), 0.25),
            (class(2000, 0, 0, ""), 0.25),
        ])
    }

    #[test]
    fn cases_on_reference_node() {
        let n = ref_node(); // [1000, 500, 0, 1000], 16 cores left, V100M16
        let case = |c: &PodClass| frag_case(n.cpu_milli_left, &n.gpus, &n.model, c);
        assert_eq!(case(&class(4000, 1, 500, "")), FragCase::Q3Satisfied);
        assert_eq!(case(&class(32_000, 1, 1000, "")), FragCase::Q4LackCpu);
        assert_eq!(case(&class(4000, 3, 1000, "")), FragCase::Q2LackGpu);
        assert_eq!(case(&class(32_000, 3, 1000, "")), FragCase::Q1LackBoth);
        assert_eq!(case(&class(2000, 0, 0, "")), FragCase::XlSatisfied);
        assert_eq!(case(&class(20_000, 0, 0, "")), FragCase::XrLackCpu);
        assert_eq!(case(&class(1000, 1, 100, "T4|A10")), FragCase::NoAccess);
        assert_eq!(
            case(&class(1000, 1, 100, "T4|V100M16")),
            FragCase::Q3Satisfied
        );

        // Q3 counts only devices too small for the class.
        assert_eq!(node_frag_for_class(&n, &class(4000, 1, 500, "")), 0); // only GPU 2 (0)
        assert_eq!(node_frag_for_class(&n, &class(4000, 1, 600, "")), 500); // GPUs 1, 2
        assert_eq!(node_frag_for_class(&n, &class(8000, 2, 1000, "")), 500);
        // Every other case: all 2500 idle milli.
        assert_eq!(node_frag_for_class(&n, &class(32_000, 1, 1000, "")), 2500);
        assert_eq!(node_frag_for_class(&n, &class(2000, 0, 0, "")), 2500);
        assert_eq!(node_frag_for_class(&n, &class(1000, 1, 100, "T4")), 2500);
    }

    #[test]
    fn node_frag_hand_computed() {
        let n = ref_node();
        let t = abc();
        // A: Q3, frag 0; B: Q3, frag 500 → .25·500 = 125; C: XL → .25·2500 = 625.
        let fa = node_frag_amount(&n, &t);
        assert_eq!(fa.sum_except_q3(), 750.0);
        assert_eq!(fa.data[FragCase::Q2LackGpu as usize], 125.0);
        assert_eq!(
            fa.data[FragCase::Q3Satisfied as usize],
            0.5 * 2500.0 + 0.25 * 2000.0
        );
        assert_eq!(fa.data[FragCase::XlSatisfied as usize], 625.0);
        assert_eq!(fa.idle(), 2500.0);
        assert_eq!(node_frag(&n, &t), 750.0);

        // A node without GPUs has no fragmentation.
        let cpu = GpuNode::new(64_000, 1, 0, "");
        assert_eq!(node_frag(&cpu, &t), 0.0);

        let cl = cluster_frag_amount([&n, &n, &cpu], &t);
        assert_eq!(cl.sum_except_q3(), 1500.0);
        assert_eq!(cl.idle(), 5000.0);
    }

    /// Expected values of the simulator's own `TestNodeGpuShareFragAmountWithNonGpu`
    /// (`pkg/utils/frag_test.go`), same typical-pod table.
    #[test]
    fn matches_simulator_frag_test_with_non_gpu() {
        let rows: &[(i64, u32, u32, f64)] = &[
            (15700, 1000, 1, 28.69),
            (11900, 1000, 1, 18.93),
            (11400, 1000, 1, 12.27),
            (1000, 0, 0, 7.36),
            (18710, 1000, 1, 4.85),
            (8200, 1000, 1, 3.79),
            (16400, 1000, 1, 3.31),
            (9810, 1000, 1, 1.97),
            (15200, 1000, 1, 1.87),
            (11200, 1000, 1, 1.81),
            (14200, 1000, 1, 1.76),
            (12000, 0, 0, 1.65),
            (14900, 1000, 1, 1.39),
            (60200, 1000, 4, 1.23),
            (64200, 1000, 8, 1.07),
            (32200, 1000, 4, 1.01),
            (17400, 1000, 2, 0.91),
            (30200, 1000, 2, 0.69),
            (16000, 1000, 1, 0.64),
            (15000, 1000, 1, 0.59),
            (64000, 1000, 8, 0.53),
            (15000, 0, 0, 0.53),
            (11910, 1000, 1, 0.53),
            (120200, 1000, 8, 0.48),
            (11300, 1000, 1, 0.37),
            (30000, 1000, 2, 0.32),
            (9800, 1000, 1, 0.32),
            (8000, 1000, 1, 0.32),
            (2000, 1000, 1, 0.27),
            (2000, 80, 1, 0.27),
            (1000, 1000, 1, 0.27),
        ];
        let t = TypicalPods::from_entries(
            rows.iter()
                .map(|&(cpu, milli, n, pct)| (class(cpu, n, milli, ""), pct / 100.0))
                .collect(),
        );
        let mut n = GpuNode::new(64_000, 1, 8, "P100");
        assert!((node_frag(&n, &t) - 887.20).abs() < 0.01);
        n.cpu_milli_left = 32_000;
        n.gpus = vec![1000, 1000, 1000, 1000, 0, 0, 0, 0];
        assert!((node_frag(&n, &t) - 554.4).abs() < 0.01);
        n.cpu_milli_left = 0;
        assert!((node_frag(&n, &t) - 4000.0).abs() < 0.01);
    }

    #[test]
    fn typical_pods_cut_and_order() {
        let x = pod(4000, 1, 500);
        let y = pod(8000, 1, 1000);
        let z_small = pod(1000, 0, 0);
        let z_big = pod(9000, 0, 0);
        let mut all = vec![x.clone(); 5];
        all.extend(vec![y.clone(); 3]);
        all.push(z_small.clone());
        all.push(z_big.clone());

        // 95 % of 10 = 9.5: cum 5, 8, 9, 10 → all four kept, p = count/total.
        let t = TypicalPods::from_pods(&all);
        let got: Vec<(PodClass, f64)> = t.pods.iter().map(|p| (p.class.clone(), p.freq)).collect();
        assert_eq!(
            got,
            vec![
                (PodClass::of(&x), 0.5),
                (PodClass::of(&y), 0.3),
                (PodClass::of(&z_big), 0.1), // tie on count: larger CPU first
                (PodClass::of(&z_small), 0.1),
            ]
        );

        // 80 %: expected 8; cum 5 (<8) → 8 (stop) → keep X, Y renormalised by .8.
        let cfg = TypicalPodsConfig {
            include_cpu_pods: true,
            popularity_threshold_pct: 80,
        };
        let t = TypicalPods::from_pods_with(&all, cfg);
        assert_eq!(t.len(), 2);
        assert_eq!(t.pods[0].freq, 0.5 / 0.8);
        assert_eq!(t.pods[1].freq, 0.3 / 0.8);
        assert!((t.freq_sum() - 1.0).abs() < 1e-12);

        // CPU pods excluded: 8 pods; 95 % = 7.6 → X (5), Y (8) → all kept.
        let cfg = TypicalPodsConfig {
            include_cpu_pods: false,
            popularity_threshold_pct: 95,
        };
        let t = TypicalPods::from_pods_with(&all, cfg);
        assert_eq!(t.len(), 2);
        assert_eq!(t.pods[0].freq, 5.0 / 8.0);

        // Memory is not part of the class.
        let mut x2 = x.clone();
        x2.mem_mib = 99;
        assert_eq!(PodClass::of(&x), PodClass::of(&x2));
        // The model spec is.
        let mut x3 = x.clone();
        x3.gpu_spec = vec!["T4".into()];
        assert_ne!(PodClass::of(&x), PodClass::of(&x3));
    }
}

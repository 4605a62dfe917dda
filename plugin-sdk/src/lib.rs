//! # sift-sdk: write kube-scheduler plugins for sift
//!
//! A plugin is one [`Plugin`] impl and one [`export_plugin!`] call: a
//! filter (the default), and optionally a scorer and a reserver, as
//! [`Plugin::EXTENSION_POINTS`] declares. Built for `wasm32-wasip2`, the
//! crate becomes a WebAssembly component implementing sift's contract
//! (`wit/`); the SDK keeps the node table the host syncs into the instance
//! and batches calls, so the plugin only sees Kubernetes concepts. Built
//! natively, the same macro registers the plugin for in-process use:
//! unit-test it with `cargo test`, and the host runs it as a native
//! baseline.
//!
//! A filter that needs nothing computed per pod implements `filter` alone:
//! the default `prepare` proceeds with the default pod state.
//!
//! ```
//! use sift_sdk::{export_plugin, Args, Node, Plugin, Pod, Status};
//!
//! /// Rejects nodes whose name starts with the configured prefix.
//! pub struct AvoidPrefix { prefix: String }
//!
//! impl Plugin for AvoidPrefix {
//!     const NAME: &'static str = "AvoidPrefix";
//!     type PodState = ();
//!
//!     fn new(args: Args) -> Result<Self, String> {
//!         Ok(AvoidPrefix { prefix: args.get_str("prefix")?.unwrap_or("tmp-").into() })
//!     }
//!
//!     fn filter(&self, _pod: &Pod, _state: &(), node: &Node) -> Status {
//!         if node.name.starts_with(&self.prefix) {
//!             return Status::unresolvable("node(s) had an avoided name");
//!         }
//!         Status::success()
//!     }
//! }
//!
//! export_plugin!(AvoidPrefix);
//! # fn main() {}
//! ```

pub mod cluster;
pub mod model;
pub mod quantity;
pub mod resources;
pub mod scoring;
pub mod selector;
pub mod status;
pub mod toleration;

// Reached through `model` and `cluster`, whose paths plugins use.
mod hash;
mod labels;

#[cfg(not(target_arch = "wasm32"))]
pub mod native;

#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
pub mod guest;

pub use cluster::{
    ClusterTables, ClusterView, Domains, FastMap, FastSet, GroupCount, GroupIndex, IdMap,
    NominatedPod, ObjectTables, PodGroup,
};
pub use model::{
    ContainerImage, Found, HostPort, LabelKey, LabelSelector, LabelValue, Labels, Node,
    NodeCondition, NodeFields, NodeMemo, ObjectWrite, OwnerReference, Pod, PodAffinityTerm,
    PodAnnotations, PodVolumes, Reservation, SelectorRequirement, SelectorTerm, Taint, Toleration,
    TopologySpreadConstraint, Volume, WeightedPodAffinityTerm, WeightedSelectorTerm,
};
pub use quantity::Quantity;
pub use resources::Resources;
pub use selector::PodSelector;
pub use status::{Code, PreScore, Prepare, Status};

/// [`Plugin`]'s name before contract 0.3 added scorers and reservers,
/// kept so that plugins written against it build unchanged:
/// `impl Predicate for X` is `impl Plugin for X`.
///
/// ```
/// use sift_sdk::{export_predicate, Args, ClusterView, Node, Pod, Predicate, Prepare, Status};
///
/// pub struct NoTmp;
///
/// impl Predicate for NoTmp {
///     const NAME: &'static str = "NoTmp";
///     type PodState = ();
///     fn new(_: Args) -> Result<Self, String> { Ok(NoTmp) }
///     fn prepare(&self, _: &Pod, _: &dyn ClusterView) -> Prepare<()> { Prepare::Proceed(()) }
///     fn filter(&self, _: &Pod, _: &(), node: &Node) -> Status {
///         if node.name.starts_with("tmp-") { Status::unresolvable("tmp") } else { Status::success() }
///     }
/// }
///
/// export_predicate!(NoTmp);
/// # fn main() { assert_eq!(sift_native_plugin().name, "NoTmp"); }
/// ```
pub use Plugin as Predicate;

/// kube-scheduler's highest node score: a normalized score is in
/// `0..=MAX_NODE_SCORE` (`framework.MaxNodeScore`).
pub const MAX_NODE_SCORE: i64 = 100;

/// The extension points a plugin implements (kube-scheduler's plugin
/// interfaces); the host calls only those.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExtensionPoints(u8);

impl ExtensionPoints {
    /// PreFilter and Filter: [`Plugin::prepare`], [`Plugin::filter`].
    pub const FILTER: ExtensionPoints = ExtensionPoints(1);
    /// PreScore, Score, NormalizeScore: [`Plugin::pre_score`],
    /// [`Plugin::score`], [`Plugin::normalize_scores`].
    pub const SCORE: ExtensionPoints = ExtensionPoints(2);
    /// Reserve: [`Plugin::reserve`].
    pub const RESERVE: ExtensionPoints = ExtensionPoints(4);
    pub const NONE: ExtensionPoints = ExtensionPoints(0);

    pub const fn contains(self, other: ExtensionPoints) -> bool {
        self.0 & other.0 == other.0
    }

    pub const fn union(self, other: ExtensionPoints) -> ExtensionPoints {
        ExtensionPoints(self.0 | other.0)
    }

    pub const fn bits(self) -> u8 {
        self.0
    }

    pub const fn from_bits(bits: u8) -> ExtensionPoints {
        ExtensionPoints(bits & 7)
    }
}

impl std::ops::BitOr for ExtensionPoints {
    type Output = ExtensionPoints;
    fn bitor(self, other: ExtensionPoints) -> ExtensionPoints {
        self.union(other)
    }
}

/// "filter, score", or "none".
impl std::fmt::Display for ExtensionPoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = [
            (Self::FILTER, "filter"),
            (Self::SCORE, "score"),
            (Self::RESERVE, "reserve"),
        ]
        .into_iter()
        .filter(|(p, _)| self.contains(*p))
        .map(|(_, n)| n)
        .collect();
        if names.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&names.join(", "))
        }
    }
}

/// A scheduler plugin, as kube-scheduler's framework has them: PreFilter +
/// Filter (a filter, the default), and optionally PreScore, Score,
/// NormalizeScore and Reserve, as [`Plugin::EXTENSION_POINTS`] declares.
/// Every method has a default, so a plugin implements only what its
/// extension points need: a filter `filter`, a scorer `score`, a reserver
/// `reserve`.
///
/// `prepare` runs once per pod (in every instance that filters it), then
/// `filter` once per node. Both must be deterministic: the host may spread a
/// pod's nodes over several instances. The same holds for `pre_score`,
/// `score` and `normalize_scores`.
pub trait Plugin: Sized + Send + Sync + 'static {
    /// The name in configuration and statuses, e.g. `"NodePorts"`.
    const NAME: &'static str;
    /// What the plugin implements: filter (the default), score, reserve.
    const EXTENSION_POINTS: ExtensionPoints = ExtensionPoints::FILTER;
    /// Pod annotation keys the plugin reads on nodes' bound pods
    /// ([`Node::pod_annotations`]), e.g. the GPU ids a reserve step wrote.
    const POD_ANNOTATION_KEYS: &'static [&'static str] = &[];
    /// The node fields `filter` reads; the host sends no others.
    const NODE_FIELDS: NodeFields = NodeFields::ALL;
    /// The node label keys `filter` reads, when it reads only a few
    /// (`None`: all). A component keeps just these labels of each node, so
    /// its node table stays small enough to stay in cache (GpuModel at
    /// 5,000 nodes of 14 labels: 1.2-1.4x faster per pod). Other labels
    /// read in `filter` are then absent; natively, nodes stay whole.
    const NODE_LABELS: Option<&'static [&'static str]> = None;
    /// Whether `prepare` reads the pods placed in the cluster and the
    /// namespaces (PodTopologySpread, InterPodAffinity). Only then does
    /// the host sync them into a component; otherwise the cluster view a
    /// component's `prepare` gets has nodes but no pods or namespaces.
    const READS_CLUSTER: bool = false;
    /// Whether the plugin reads [`Pod::object`], the whole Pod as JSON (the
    /// escape hatch for fields the model lacks). Off by default: it costs a
    /// serialization and a copy per pod.
    const POD_OBJECT: bool = false;
    /// The kinds of cluster objects `prepare` reads through
    /// [`ClusterView::object`], by their `kind` (e.g.
    /// `"PersistentVolumeClaim"`, `"StorageClass"`). The host syncs those
    /// objects into a component, whole; none by default.
    const OBJECT_KINDS: &'static [&'static str] = &[];
    /// What `prepare` (or `pre_score`) computes once per pod for `filter`
    /// (or `score`) to use: kube-scheduler's CycleState entry. `Default`
    /// is what the default `prepare` and `pre_score` proceed with.
    type PodState: Default + Send + Sync + 'static;

    /// Builds the plugin from its configured arguments.
    fn new(args: Args) -> Result<Self, String>;

    /// Once per pod: skip, reject everywhere, narrow the nodes, or proceed.
    /// `cluster` is every node and, with [`Plugin::READS_CLUSTER`], the
    /// pods on them and the namespaces (kube-scheduler's PreFilter sees the
    /// whole snapshot).
    /// The default proceeds with `PodState::default()` when the plugin
    /// declares [`ExtensionPoints::FILTER`], so that a filter implementing
    /// `filter` alone filters (a default of Skip made such a filter
    /// silently pass every pod), and skips otherwise.
    fn prepare(&self, _pod: &Pod, _cluster: &dyn ClusterView) -> Prepare<Self::PodState> {
        if Self::EXTENSION_POINTS.contains(ExtensionPoints::FILTER) {
            Prepare::Proceed(Self::PodState::default())
        } else {
            Prepare::Skip
        }
    }

    /// Whether the pod fits on this node.
    fn filter(&self, _pod: &Pod, _state: &Self::PodState, _node: &Node) -> Status {
        Status::success()
    }

    /// PreScore: once per pod, with the nodes that passed filtering; Skip
    /// leaves every node's total as it is. The default proceeds with
    /// `PodState::default()` when the plugin declares
    /// [`ExtensionPoints::SCORE`], as `prepare` does for filters, so a
    /// scorer implementing `score` alone scores; it skips otherwise.
    fn pre_score(
        &self,
        _pod: &Pod,
        _feasible: &[&Node],
        _cluster: &dyn ClusterView,
    ) -> PreScore<Self::PodState> {
        if Self::EXTENSION_POINTS.contains(ExtensionPoints::SCORE) {
            PreScore::Proceed(Self::PodState::default())
        } else {
            PreScore::Skip
        }
    }

    /// Score: the node's raw score for the pod.
    fn score(&self, _pod: &Pod, _state: &Self::PodState, _node: &Node) -> Result<i64, Status> {
        Ok(0)
    }

    /// NormalizeScore: maps all feasible nodes' raw scores (in the order
    /// `pre_score` got the nodes) to `0..=MAX_NODE_SCORE` in place. The
    /// default keeps them, for scores already in range.
    fn normalize_scores(
        &self,
        _pod: &Pod,
        _state: &Self::PodState,
        _scores: &mut [i64],
    ) -> Result<(), Status> {
        Ok(())
    }

    /// Reserve: the host chose `node` for `pod`; pick what it takes there
    /// (e.g. GPU ids) and return annotations the assumed pod carries.
    /// An error makes the pod unschedulable this cycle.
    fn reserve(&self, _pod: &Pod, _node: &Node) -> Result<Vec<(String, String)>, Status> {
        Ok(Vec::new())
    }

    /// PreBind's writes, decided at Reserve (contract 0.7 and later): the
    /// cluster objects to change before `pod` is bound to `node` (a
    /// claim's selected node, a volume's claim reference, a device
    /// allocation), each whole as it must be afterwards and of one of
    /// [`Plugin::OBJECT_KINDS`]. A simulation applies them to its state,
    /// the live scheduler writes them to the API server; either way they
    /// come back through `cluster` before the next pod. `cluster` is what
    /// `prepare` saw, so a plugin can recompute its pod state here. Called
    /// only with [`ExtensionPoints::RESERVE`]; an error makes the pod
    /// unschedulable this cycle. None by default.
    fn pre_bind(
        &self,
        _pod: &Pod,
        _node: &Node,
        _cluster: &dyn ClusterView,
    ) -> Result<Vec<ObjectWrite>, Status> {
        Ok(Vec::new())
    }

    /// kube-scheduler's `AddPod` (PreFilterExtensions): the state for a
    /// filter pass in which `added`, pods nominated to `node`, run there.
    /// `node` already counts their requests, ports and pods; the state is
    /// what must learn of them if it counts pods (PodTopologySpread,
    /// InterPodAffinity). `None`, the default, keeps the state as is.
    fn add_pods(
        &self,
        _pod: &Pod,
        _state: &Self::PodState,
        _node: &Node,
        _added: &[NominatedPod],
    ) -> Option<Self::PodState> {
        None
    }
}

/// A plugin's arguments: the JSON object from sift's configuration.
#[derive(Clone, Debug, Default)]
pub struct Args(serde_json::Map<String, serde_json::Value>);

impl Args {
    /// Parses the JSON text the host passes (`"{}"` or empty for none).
    pub fn from_json(text: &str) -> Result<Args, String> {
        if text.trim().is_empty() {
            return Ok(Args::default());
        }
        match serde_json::from_str(text) {
            Ok(serde_json::Value::Object(map)) => Ok(Args(map)),
            Ok(serde_json::Value::Null) => Ok(Args::default()),
            Ok(other) => Err(format!("plugin arguments must be an object, got {other}")),
            Err(e) => Err(format!("plugin arguments are not valid JSON: {e}")),
        }
    }

    /// Deserializes all arguments into `T` (use `#[serde(deny_unknown_fields)]`
    /// on `T` so typos are reported).
    pub fn parse<T: serde::de::DeserializeOwned>(&self) -> Result<T, String> {
        serde_json::from_value(serde_json::Value::Object(self.0.clone()))
            .map_err(|e| format!("invalid plugin arguments: {e}"))
    }

    /// A string argument, `None` when absent.
    pub fn get_str(&self, key: &str) -> Result<Option<&str>, String> {
        match self.0.get(key) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(serde_json::Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(format!("argument {key:?} must be a string, got {other}")),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The first pass of a node with pods nominated to it: `node` already
/// holds `added`; the state learns of them through [`Plugin::add_pods`].
/// What both the component and the native registration run.
fn filter_nominated<P: Plugin>(
    plugin: &P,
    pod: &Pod,
    state: &P::PodState,
    node: &Node,
    added: &[NominatedPod],
) -> Status {
    match plugin.add_pods(pod, state, node, added) {
        Some(updated) => plugin.filter(pod, &updated, node),
        None => plugin.filter(pod, state, node),
    }
}

/// Makes a [`Plugin`] a sift plugin: on `wasm32` it exports the
/// component's contract; natively it defines `sift_native_plugin()`, the
/// in-process registration the host and tests use.
#[macro_export]
macro_rules! export_plugin {
    ($plugin:ty) => {
        #[cfg(not(target_arch = "wasm32"))]
        /// This plugin, registered for in-process use.
        pub fn sift_native_plugin() -> $crate::native::NativePlugin {
            $crate::native::NativePlugin::of::<$plugin>()
        }

        #[cfg(target_arch = "wasm32")]
        const _: () = {
            ::std::thread_local! {
                static SIFT_STATE: ::std::cell::RefCell<$crate::guest::State<$plugin>> =
                    ::std::cell::RefCell::new($crate::guest::State::default());
            }
            struct SiftGlue;
            impl $crate::guest::Guest for SiftGlue {
                fn describe() -> $crate::guest::wit::PluginInfo {
                    $crate::guest::describe::<$plugin>()
                }
                fn init(args: ::std::string::String) -> ::std::result::Result<(), ::std::string::String> {
                    SIFT_STATE.with(|s| s.borrow_mut().init(&args))
                }
                fn sync_nodes(
                    upserts: ::std::vec::Vec<$crate::guest::wit::NodeEntry>,
                    removals: ::std::vec::Vec<u32>,
                ) {
                    SIFT_STATE.with(|s| s.borrow_mut().sync_nodes(upserts, removals))
                }
                fn sync_pod_groups(
                    upserts: ::std::vec::Vec<$crate::guest::wit::PodGroup>,
                    removals: ::std::vec::Vec<u64>,
                ) {
                    SIFT_STATE.with(|s| s.borrow_mut().sync_pod_groups(upserts, removals))
                }
                fn sync_placements(upserts: ::std::vec::Vec<$crate::guest::wit::Placement>) {
                    SIFT_STATE.with(|s| s.borrow_mut().sync_placements(upserts))
                }
                fn sync_namespaces(
                    upserts: ::std::vec::Vec<$crate::guest::wit::Namespace>,
                    removals: ::std::vec::Vec<::std::string::String>,
                ) {
                    SIFT_STATE.with(|s| s.borrow_mut().sync_namespaces(upserts, removals))
                }
                fn sync_objects(
                    kind: ::std::string::String,
                    upserts: ::std::vec::Vec<$crate::guest::wit::ClusterObject>,
                    removals: ::std::vec::Vec<::std::string::String>,
                ) {
                    SIFT_STATE.with(|s| s.borrow_mut().sync_objects(kind, upserts, removals))
                }
                fn prepare(pod: $crate::guest::wit::Pod) -> $crate::guest::wit::PrepareResult {
                    SIFT_STATE.with(|s| s.borrow_mut().prepare(pod))
                }
                fn filter(slots: ::std::vec::Vec<u32>) -> $crate::guest::wit::Verdicts {
                    SIFT_STATE.with(|s| s.borrow().filter(&slots))
                }
                fn filter_nominated(
                    slot: u32,
                    added: ::std::vec::Vec<$crate::guest::wit::NominatedPod>,
                ) -> $crate::guest::wit::Status {
                    SIFT_STATE.with(|s| s.borrow().filter_nominated(slot, added))
                }
            }
            impl $crate::guest::ScorerGuest for SiftGlue {
                fn pre_score(
                    pod: $crate::guest::wit::Pod,
                    feasible: ::std::vec::Vec<u32>,
                ) -> $crate::guest::wit::PreScoreResult {
                    SIFT_STATE.with(|s| s.borrow_mut().pre_score(pod, feasible))
                }
                fn score(
                    slots: ::std::vec::Vec<u32>,
                ) -> ::std::result::Result<::std::vec::Vec<i64>, $crate::guest::wit::Status> {
                    SIFT_STATE.with(|s| s.borrow().score(&slots))
                }
                fn normalize_scores(
                    scores: ::std::vec::Vec<i64>,
                ) -> ::std::result::Result<::std::vec::Vec<i64>, $crate::guest::wit::Status> {
                    SIFT_STATE.with(|s| s.borrow().normalize_scores(scores))
                }
            }
            impl $crate::guest::ReserverGuest for SiftGlue {
                fn reserve(
                    pod: $crate::guest::wit::Pod,
                    slot: u32,
                ) -> ::std::result::Result<
                    $crate::guest::wit::Reservation,
                    $crate::guest::wit::Status,
                > {
                    SIFT_STATE.with(|s| s.borrow().reserve(pod, slot))
                }
            }
            $crate::guest::bindings::__export_guest!(SiftGlue with_types_in $crate::guest::bindings);
        };
    };
}

/// [`export_plugin!`]'s name before contract 0.3, kept (as [`Predicate`]
/// is) so that plugins written against it build unchanged.
#[macro_export]
macro_rules! export_predicate {
    ($plugin:ty) => {
        $crate::export_plugin!($plugin);
    };
}

/// Log levels for [`log`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogLevel {
    Trace,
    Debug,
    Info,
    Warn,
    Error,
}

/// Writes to the host's log, tagged with the plugin's name and version.
/// Natively (tests, the baseline) it writes to stderr at `Warn` and above.
pub fn log(level: LogLevel, message: &str) {
    #[cfg(target_arch = "wasm32")]
    guest::log(level, message);
    #[cfg(not(target_arch = "wasm32"))]
    if matches!(level, LogLevel::Warn | LogLevel::Error) {
        eprintln!("[{level:?}] {message}");
    }
}

/// The README's plugin example, compiled as a doctest so it stays true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeExample;

/// The defaults of `prepare` and `pre_score`: a plugin that implements
/// only `filter` (or only `score`) is not skipped.
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    struct OnlyFilter;

    impl Plugin for OnlyFilter {
        const NAME: &'static str = "OnlyFilter";
        type PodState = ();
        fn new(_: Args) -> Result<Self, String> {
            Ok(OnlyFilter)
        }
        fn filter(&self, _: &Pod, _: &(), _: &Node) -> Status {
            Status::unresolvable("rejected")
        }
    }

    struct OnlyScore;

    impl Plugin for OnlyScore {
        const NAME: &'static str = "OnlyScore";
        const EXTENSION_POINTS: ExtensionPoints = ExtensionPoints::SCORE;
        type PodState = u8;
        fn new(_: Args) -> Result<Self, String> {
            Ok(OnlyScore)
        }
        fn score(&self, _: &Pod, state: &u8, _: &Node) -> Result<i64, Status> {
            Ok(7 + i64::from(*state))
        }
    }

    #[test]
    fn a_filter_without_prepare_filters_and_a_scorer_without_pre_score_scores() {
        let cluster = ClusterTables::default();
        let pod = Pod::default();
        let node = Node::default();
        let filter = native::NativePlugin::of::<OnlyFilter>()
            .instantiate("{}")
            .unwrap();
        let Prepare::Proceed(state) = filter.prepare(&pod, &cluster) else {
            panic!("a filter's default prepare proceeds");
        };
        assert!(!filter.filter(&pod, &state, &node).is_success());
        let scorer = native::NativePlugin::of::<OnlyScore>()
            .instantiate("{}")
            .unwrap();
        assert_eq!(scorer.score(&pod, &[&node], &cluster), Ok(Some(vec![7])));
        // Not a filter: its prepare skips, as before.
        assert!(matches!(OnlyScore.prepare(&pod, &cluster), Prepare::Skip));
        assert!(matches!(
            OnlyFilter.pre_score(&pod, &[&node], &cluster),
            PreScore::Skip
        ));
    }
}

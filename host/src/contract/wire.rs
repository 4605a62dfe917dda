//! What every contract version shares by name and shape, written once and
//! expanded in each version's module against that version's generated
//! types: conversions of the common records (status, labels, resources,
//! ports, taints, tolerations, node selector terms) and the calls whose
//! signatures did not change.

/// Expands, in a version module with `wire` (its generated types),
/// `Status`, `Code` and `NodeFields` in scope, the conversions of the
/// records all versions share. Each version writes its own `pod_to_wire`
/// from these, and its node conversions with [`node_conversions`].
macro_rules! shared_conversions {
    () => {
        fn status_from_wire(s: wire::Status) -> Status {
            Status::new(
                match s.code {
                    wire::Code::Success => Code::Success,
                    wire::Code::Error => Code::Error,
                    wire::Code::Unschedulable => Code::Unschedulable,
                    wire::Code::UnschedulableAndUnresolvable => Code::UnschedulableAndUnresolvable,
                    wire::Code::Skip => Code::Skip,
                },
                s.reasons,
            )
        }

        fn labels_to_wire(l: &sift_sdk::Labels) -> Vec<wire::Label> {
            l.iter()
                .map(|(k, v)| wire::Label {
                    key: k.to_string(),
                    value: v.to_string(),
                })
                .collect()
        }

        fn resources_to_wire(r: &sift_sdk::Resources) -> wire::Resources {
            wire::Resources {
                milli_cpu: r.milli_cpu,
                memory: r.memory,
                ephemeral_storage: r.ephemeral_storage,
                allowed_pod_number: r.allowed_pod_number,
                scalar: r
                    .scalar
                    .iter()
                    .map(|(name, amount)| wire::ResourceAmount {
                        name: name.clone(),
                        amount: *amount,
                    })
                    .collect(),
            }
        }

        fn port_to_wire(p: &sift_sdk::HostPort) -> wire::HostPort {
            wire::HostPort {
                port: p.port,
                protocol: p.protocol.clone(),
                host_ip: p.host_ip.clone(),
            }
        }

        fn empty_resources() -> wire::Resources {
            resources_to_wire(&sift_sdk::Resources::default())
        }

        fn requirement_to_wire(r: &sift_sdk::SelectorRequirement) -> wire::SelectorRequirement {
            wire::SelectorRequirement {
                key: r.key.clone(),
                operator: r.operator.clone(),
                values: r.values.clone(),
            }
        }

        fn taints_to_wire(taints: &[sift_sdk::Taint]) -> Vec<wire::Taint> {
            taints
                .iter()
                .map(|t| wire::Taint {
                    key: t.key.clone(),
                    value: t.value.clone(),
                    effect: t.effect.clone(),
                })
                .collect()
        }

        fn tolerations_to_wire(tolerations: &[sift_sdk::Toleration]) -> Vec<wire::Toleration> {
            tolerations
                .iter()
                .map(|t| wire::Toleration {
                    key: t.key.clone(),
                    operator: t.operator.clone(),
                    value: t.value.clone(),
                    effect: t.effect.clone(),
                    toleration_seconds: t.toleration_seconds,
                })
                .collect()
        }

        fn term_to_wire(t: &sift_sdk::SelectorTerm) -> wire::SelectorTerm {
            wire::SelectorTerm {
                match_expressions: t
                    .match_expressions
                    .iter()
                    .map(requirement_to_wire)
                    .collect(),
                match_fields: t.match_fields.iter().map(requirement_to_wire).collect(),
            }
        }

        fn terms_to_wire(terms: &[sift_sdk::SelectorTerm]) -> Vec<wire::SelectorTerm> {
            terms.iter().map(term_to_wire).collect()
        }

        /// `n`'s field if the plugin reads it, else the empty value.
        fn masked<T: Default>(
            fields: NodeFields,
            flag: NodeFields,
            value: impl FnOnce() -> T,
        ) -> T {
            if fields.contains(flag) {
                value()
            } else {
                T::default()
            }
        }
    };
}

pub(crate) use shared_conversions;

/// Expands a version's `node_fields_from_wire` and `node_to_wire`: the
/// `node-fields` flags it has (named alike in `wire` and `NodeFields`),
/// and the node fields it adds to 0.1's, each given as an expression of
/// the node `$n` and the plugin's fields `$fields` (masked by the caller).
macro_rules! node_conversions {
    (flags: [$($flag:ident),* $(,)?],
     more: |$n:ident, $fields:ident| { $($field:ident: $value:expr),* $(,)? }) => {
        fn node_fields_from_wire(f: wire::NodeFields) -> NodeFields {
            let mut out = NodeFields::NONE;
            $(
                if f & wire::NodeFields::$flag == wire::NodeFields::$flag {
                    out = out | NodeFields::$flag;
                }
            )*
            out
        }

        /// A node with only the fields the plugin reads.
        fn node_to_wire($n: &sift_sdk::Node, $fields: NodeFields) -> wire::Node {
            let resources = $fields.contains(NodeFields::RESOURCES);
            wire::Node {
                name: $n.name.clone(),
                labels: masked($fields, NodeFields::LABELS, || labels_to_wire(&$n.labels)),
                taints: masked($fields, NodeFields::TAINTS, || taints_to_wire(&$n.taints)),
                unschedulable: $fields.contains(NodeFields::UNSCHEDULABLE) && $n.unschedulable,
                allocatable: if resources {
                    resources_to_wire(&$n.allocatable)
                } else {
                    empty_resources()
                },
                requested: if resources {
                    resources_to_wire(&$n.requested)
                } else {
                    empty_resources()
                },
                pod_count: if resources { $n.pod_count } else { 0 },
                used_ports: masked($fields, NodeFields::PORTS, || {
                    $n.used_ports.iter().map(port_to_wire).collect()
                }),
                $($field: $value,)*
            }
        }
    };
}

pub(crate) use node_conversions;

/// Expands, in a version module with `Bindings`, `Pre`, `WirePod`, `wire`
/// and the conversions in scope, the calls whose shape every version
/// shares: link, pre, init, sync-nodes, prepare, filter. A version's own
/// calls (`describe`, 0.2's cluster syncs) stay in its file.
macro_rules! shared_calls {
    () => {
        pub(super) fn init(
            b: &Bindings,
            store: &mut Store<InstanceState>,
            args: &str,
        ) -> wasmtime::Result<Result<(), String>> {
            b.sift_predicate_predicate().call_init(store, args)
        }

        pub(super) fn sync_nodes(
            b: &Bindings,
            store: &mut Store<InstanceState>,
            snapshot: &Snapshot,
            slots: &[u32],
            removals: &[u32],
            fields: NodeFields,
        ) -> wasmtime::Result<()> {
            let upserts: Vec<wire::NodeEntry> = slots
                .iter()
                .map(|&slot| wire::NodeEntry {
                    slot,
                    node: node_to_wire(snapshot.node(slot), fields),
                })
                .collect();
            b.sift_predicate_predicate()
                .call_sync_nodes(store, &upserts, removals)
        }

        pub(super) fn prepare(
            b: &Bindings,
            store: &mut Store<InstanceState>,
            pod: &WirePod,
        ) -> wasmtime::Result<PrepareOutcome> {
            Ok(
                match b.sift_predicate_predicate().call_prepare(store, pod)? {
                    wire::PrepareResult::Proceed => PrepareOutcome::Proceed,
                    wire::PrepareResult::Skip => PrepareOutcome::Skip,
                    wire::PrepareResult::Reject(s) => PrepareOutcome::Reject(status_from_wire(s)),
                    wire::PrepareResult::Narrow(names) => PrepareOutcome::Narrow(names),
                },
            )
        }

        pub(super) fn filter(
            b: &Bindings,
            store: &mut Store<InstanceState>,
            slots: &[u32],
        ) -> wasmtime::Result<Verdicts> {
            let got = b.sift_predicate_predicate().call_filter(store, slots)?;
            Ok(Verdicts {
                statuses: got.statuses.into_iter().map(status_from_wire).collect(),
                rejections: got.rejections,
            })
        }

        pub(super) fn pre(
            instance_pre: InstancePre<InstanceState>,
        ) -> wasmtime::Result<Pre<InstanceState>> {
            Pre::new(instance_pre)
        }

        /// Adds what this version's components import from the host.
        pub(super) fn link(linker: &mut Linker<InstanceState>) -> wasmtime::Result<()> {
            Bindings::add_to_linker::<InstanceState, HasSelf<InstanceState>>(linker, |t| t)
        }
    };
}

pub(crate) use shared_calls;

/// Expands, in a version module with `bindings` in scope, the host side of
/// the imports every version has: `log` (into the plugin's log lines) and
/// the `types` interface.
macro_rules! shared_imports {
    () => {
        impl bindings::sift::predicate::log::Host for InstanceState {
            fn log(&mut self, level: bindings::sift::predicate::log::Level, message: String) {
                use bindings::sift::predicate::log::Level;
                let level = match level {
                    Level::Trace => LogLevel::Trace,
                    Level::Debug => LogLevel::Debug,
                    Level::Info => LogLevel::Info,
                    Level::Warn => LogLevel::Warn,
                    Level::Error => LogLevel::Error,
                };
                self.plugin_log(level, &message);
            }
        }

        impl bindings::sift::predicate::types::Host for InstanceState {}
    };
}

pub(crate) use shared_imports;

/// Expands, in a 0.2-or-later version module, the cluster-view calls
/// (pod groups, placements, namespaces) and `filter-nominated`.
macro_rules! since_0_2_calls {
    () => {
        /// Cluster view: new groups, and groups no placement names any more.
        pub(super) fn sync_pod_groups(
            b: &Bindings,
            store: &mut Store<InstanceState>,
            upserts: &[&PodGroup],
            removals: &[u64],
        ) -> wasmtime::Result<()> {
            let upserts: Vec<wire::PodGroup> = upserts.iter().map(|g| group_to_wire(g)).collect();
            b.sift_predicate_predicate()
                .call_sync_pod_groups(store, &upserts, removals)
        }

        /// Cluster view: the pods on the nodes at `slots`.
        pub(super) fn sync_placements(
            b: &Bindings,
            store: &mut Store<InstanceState>,
            snapshot: &Snapshot,
            slots: &[u32],
        ) -> wasmtime::Result<()> {
            let upserts: Vec<wire::Placement> = slots
                .iter()
                .map(|&slot| wire::Placement {
                    slot,
                    groups: snapshot
                        .pods_on(slot)
                        .iter()
                        .map(|g| wire::GroupCount {
                            group: g.group.id,
                            count: g.count,
                        })
                        .collect(),
                })
                .collect();
            b.sift_predicate_predicate()
                .call_sync_placements(store, &upserts)
        }

        /// Cluster view: namespaces' labels.
        pub(super) fn sync_namespaces(
            b: &Bindings,
            store: &mut Store<InstanceState>,
            namespaces: &Namespaces,
            removals: &[String],
        ) -> wasmtime::Result<()> {
            let upserts: Vec<wire::Namespace> = namespaces
                .iter()
                .map(|(name, labels)| wire::Namespace {
                    name: name.clone(),
                    labels: labels_to_wire(labels),
                })
                .collect();
            b.sift_predicate_predicate()
                .call_sync_namespaces(store, &upserts, removals)
        }

        /// The node at `slot` with `added` on it: a nominated first pass.
        pub(super) fn filter_nominated(
            b: &Bindings,
            store: &mut Store<InstanceState>,
            slot: u32,
            added: &[NominatedPod],
        ) -> wasmtime::Result<Status> {
            let added: Vec<wire::NominatedPod> = added
                .iter()
                .map(|n| wire::NominatedPod {
                    requests: resources_to_wire(&n.requests),
                    host_ports: n.host_ports.iter().map(port_to_wire).collect(),
                    group: group_to_wire(&n.group),
                })
                .collect();
            let status = b
                .sift_predicate_predicate()
                .call_filter_nominated(store, slot, &added)?;
            Ok(status_from_wire(status))
        }
    };
}

pub(crate) use since_0_2_calls;

/// Expands, in a 0.2-or-later version module, the conversions of 0.2's
/// pod record and the cluster view's groups, with the fields a later
/// version adds to each (the pod as `$p`, the group as `$g`).
macro_rules! since_0_2_conversions {
    () => {
        since_0_2_conversions!(|p| {});
    };
    (|$p:ident| { $($field:ident: $value:expr),* $(,)? }) => {
        since_0_2_conversions!(|$p| { $($field: $value),* }, |g| {});
    };
    (|$p:ident| { $($field:ident: $value:expr),* $(,)? },
     |$g:ident| { $($gfield:ident: $gvalue:expr),* $(,)? }) => {
        fn group_to_wire($g: &PodGroup) -> wire::PodGroup {
            let g = $g;
            wire::PodGroup {
                $($gfield: $gvalue,)*
                id: g.id,
                namespace: g.namespace.clone(),
                labels: labels_to_wire(&g.labels),
                anti_affinity: g.anti_affinity.iter().map(affinity_term_to_wire).collect(),
                terminating: g.terminating,
            }
        }

        /// The pod; its whole object only for a plugin that reads it.
        pub(super) fn pod_to_wire($p: &sift_sdk::Pod, with_object: bool) -> WirePod {
            let p = $p;
            wire::Pod {
                $($field: $value,)*
                object: match (&p.object, with_object) {
                    (Some(json), true) => json.to_string(),
                    _ => String::new(),
                },
                name: p.name.clone(),
                namespace: p.namespace.clone(),
                uid: p.uid.clone(),
                labels: labels_to_wire(&p.labels),
                node_name: p.node_name.clone(),
                node_selector: labels_to_wire(&p.node_selector),
                required_node_affinity: p.required_node_affinity.as_deref().map(terms_to_wire),
                tolerations: tolerations_to_wire(&p.tolerations),
                host_ports: p.host_ports.iter().map(port_to_wire).collect(),
                requests: resources_to_wire(&p.requests),
                annotations: labels_to_wire(&p.annotations),
                owner_references: p.owner_references.iter().map(owner_to_wire).collect(),
                priority: p.priority,
                priority_class_name: p.priority_class_name.clone(),
                scheduler_name: p.scheduler_name.clone(),
                nominated_node_name: p.nominated_node_name.clone(),
                terminating: p.terminating,
                topology_spread_constraints: p
                    .topology_spread_constraints
                    .iter()
                    .map(|c| wire::TopologySpreadConstraint {
                        max_skew: c.max_skew,
                        topology_key: c.topology_key.clone(),
                        when_unsatisfiable: c.when_unsatisfiable.clone(),
                        label_selector: c.label_selector.as_ref().map(selector_to_wire),
                        min_domains: c.min_domains,
                        node_affinity_policy: c.node_affinity_policy.clone(),
                        node_taints_policy: c.node_taints_policy.clone(),
                        match_label_keys: c.match_label_keys.clone(),
                    })
                    .collect(),
                pod_affinity: p.pod_affinity.iter().map(affinity_term_to_wire).collect(),
                pod_anti_affinity: p
                    .pod_anti_affinity
                    .iter()
                    .map(affinity_term_to_wire)
                    .collect(),
            }
        }

        fn selector_to_wire(s: &sift_sdk::LabelSelector) -> wire::LabelSelector {
            wire::LabelSelector {
                match_labels: s
                    .match_labels
                    .iter()
                    .map(|(k, v)| wire::Label {
                        key: k.clone(),
                        value: v.clone(),
                    })
                    .collect(),
                match_expressions: s
                    .match_expressions
                    .iter()
                    .map(requirement_to_wire)
                    .collect(),
            }
        }

        fn affinity_term_to_wire(t: &sift_sdk::PodAffinityTerm) -> wire::PodAffinityTerm {
            wire::PodAffinityTerm {
                label_selector: t.label_selector.as_ref().map(selector_to_wire),
                namespaces: t.namespaces.clone(),
                namespace_selector: t.namespace_selector.as_ref().map(selector_to_wire),
                topology_key: t.topology_key.clone(),
                match_label_keys: t.match_label_keys.clone(),
                mismatch_label_keys: t.mismatch_label_keys.clone(),
            }
        }
    };
}

pub(crate) use since_0_2_conversions;

/// `owner_to_wire` for the versions whose owner-reference has no
/// api-version (0.2 to 0.4); 0.5 defines its own.
macro_rules! owners_without_api_version {
    () => {
        fn owner_to_wire(o: &sift_sdk::OwnerReference) -> wire::OwnerReference {
            wire::OwnerReference {
                kind: o.kind.clone(),
                name: o.name.clone(),
                controller: o.controller,
            }
        }
    };
}

pub(crate) use owners_without_api_version;

/// The conversions of 0.4 and later: 0.4's pod, group and node fields,
/// plus the pod fields a later version adds (`|p| { field: value, .. }`)
/// and its node flags and fields (`node: [FLAG] |n, fields| { .. }`).
macro_rules! since_0_4_conversions {
    (|$p:ident| { $($field:ident: $value:expr),* $(,)? }) => {
        since_0_4_conversions!(|$p| { $($field: $value),* }, node: [] |n, fields| {});
    };
    (|$p:ident| { $($field:ident: $value:expr),* $(,)? },
     node: [$($flag:ident),*] |$n:ident, $f:ident| { $($nfield:ident: $nvalue:expr),* $(,)? }) => {
        since_0_2_conversions!(|$p| {
            non_zero_requests: wire::NonZero {
                milli_cpu: $p.non_zero_requests.milli_cpu,
                memory: $p.non_zero_requests.memory,
            },
            preferred_node_affinity: $p
                .preferred_node_affinity
                .iter()
                .map(|t| wire::WeightedSelectorTerm {
                    weight: t.weight,
                    preference: term_to_wire(&t.preference),
                })
                .collect(),
            preferred_pod_affinity: weighted_to_wire(&$p.preferred_pod_affinity),
            preferred_pod_anti_affinity: weighted_to_wire(&$p.preferred_pod_anti_affinity),
            images: $p.images.clone(),
            $($field: $value,)*
        }, |g| {
            affinity: g.affinity.iter().map(affinity_term_to_wire).collect(),
            preferred_affinity: weighted_to_wire(&g.preferred_affinity),
            preferred_anti_affinity: weighted_to_wire(&g.preferred_anti_affinity),
        });

        fn weighted_to_wire(
            terms: &[sift_sdk::WeightedPodAffinityTerm],
        ) -> Vec<wire::WeightedPodAffinityTerm> {
            terms
                .iter()
                .map(|t| wire::WeightedPodAffinityTerm {
                    weight: t.weight,
                    term: affinity_term_to_wire(&t.term),
                })
                .collect()
        }

        node_conversions! {
            flags: [LABELS, TAINTS, UNSCHEDULABLE, RESOURCES, PORTS, ANNOTATIONS, CONDITIONS, OBJECT, IMAGES $(, $flag)*],
            more: |$n, $f| {
                $($nfield: $nvalue,)*
                annotations: masked($f, NodeFields::ANNOTATIONS, || labels_to_wire(&$n.annotations)),
                conditions: masked($f, NodeFields::CONDITIONS, || {
                    $n.conditions
                        .iter()
                        .map(|c| wire::NodeCondition {
                            type_: c.type_.clone(),
                            status: c.status.clone(),
                        })
                        .collect()
                }),
                object: masked($f, NodeFields::OBJECT, || {
                    $n.object.as_deref().unwrap_or_default().to_string()
                }),
                non_zero_requested: if $f.contains(NodeFields::RESOURCES) {
                    wire::NonZero {
                        milli_cpu: $n.non_zero_requested.milli_cpu,
                        memory: $n.non_zero_requested.memory,
                    }
                } else {
                    wire::NonZero { milli_cpu: 0, memory: 0 }
                },
                images: masked($f, NodeFields::IMAGES, || {
                    $n.images
                        .iter()
                        .map(|i| wire::ContainerImage {
                            names: i.names.clone(),
                            size_bytes: i.size_bytes,
                        })
                        .collect()
                }),
                // The host keeps only the keys plugins named (ClusterState).
                pod_annotations: $n
                    .pod_annotations
                    .iter()
                    .map(|p| wire::PodAnnotations {
                        pod: p.pod.clone(),
                        annotations: labels_to_wire(&p.annotations),
                    })
                    .collect(),
            }
        }
    };
}

pub(crate) use since_0_4_conversions;

/// Expands, in a 0.3-or-later version module, `describe` (with the
/// extension points) and the scorer and reserver calls.
macro_rules! since_0_3_calls {
    () => {
        since_0_3_calls!(|info| { object_kinds: Vec::new() });
    };
    (|$info:ident| { $($field:ident: $value:expr),* $(,)? }) => {
        pub(super) fn describe(
            b: &Bindings,
            store: &mut Store<InstanceState>,
        ) -> wasmtime::Result<Describe> {
            let $info = b.sift_predicate_predicate().call_describe(store)?;
            Ok(Describe {
                $($field: $value,)*
                name: $info.name,
                node_fields: node_fields_from_wire($info.node_fields),
                cluster: $info.cluster,
                pod_object: $info.pod_object,
                extension_points: [
                    (wire::ExtensionPoints::FILTER, ExtensionPoints::FILTER),
                    (wire::ExtensionPoints::SCORE, ExtensionPoints::SCORE),
                    (wire::ExtensionPoints::RESERVE, ExtensionPoints::RESERVE),
                ]
                .into_iter()
                .filter(|(theirs, _)| $info.extension_points.contains(*theirs))
                .fold(ExtensionPoints::NONE, |acc, (_, ours)| acc | ours),
                pod_annotation_keys: $info.pod_annotation_keys,
            })
        }

        /// PreScore: the pod and the feasible nodes' slots.
        pub(super) fn pre_score(
            b: &Bindings,
            store: &mut Store<InstanceState>,
            pod: &WirePod,
            feasible: &[u32],
        ) -> wasmtime::Result<PreScored> {
            Ok(
                match b
                    .sift_predicate_scorer()
                    .call_pre_score(store, pod, feasible)?
                {
                    wire::PreScoreResult::Proceed => PreScored::Proceed,
                    wire::PreScoreResult::Skip => PreScored::Skip,
                    wire::PreScoreResult::Error(s) => PreScored::Error(status_from_wire(s)),
                },
            )
        }

        /// Score: one raw score per slot, or the plugin's error.
        pub(super) fn score(
            b: &Bindings,
            store: &mut Store<InstanceState>,
            slots: &[u32],
        ) -> wasmtime::Result<Result<Vec<i64>, Status>> {
            Ok(b.sift_predicate_scorer()
                .call_score(store, slots)?
                .map_err(status_from_wire))
        }

        /// NormalizeScore over all feasible nodes' raw scores.
        pub(super) fn normalize_scores(
            b: &Bindings,
            store: &mut Store<InstanceState>,
            scores: &[i64],
        ) -> wasmtime::Result<Result<Vec<i64>, Status>> {
            Ok(b.sift_predicate_scorer()
                .call_normalize_scores(store, scores)?
                .map_err(status_from_wire))
        }

        /// Reserve: the annotations the assumed pod carries, and the
        /// objects to write (`reserved_from_wire`, per version).
        pub(super) fn reserve(
            b: &Bindings,
            store: &mut Store<InstanceState>,
            pod: &WirePod,
            slot: u32,
        ) -> wasmtime::Result<Result<Reserved, Status>> {
            Ok(b.sift_predicate_reserver()
                .call_reserve(store, pod, slot)?
                .map(reserved_from_wire)
                .map_err(status_from_wire))
        }
    };
}

/// Expands, in a version module from 0.3 to 0.6, Reserve's answer:
/// annotations only.
macro_rules! annotations_reserved {
    () => {
        fn reserved_from_wire(labels: Vec<wire::Label>) -> Reserved {
            Reserved {
                annotations: labels.into_iter().map(|l| (l.key, l.value)).collect(),
                writes: Vec::new(),
            }
        }
    };
}

pub(crate) use annotations_reserved;

pub(crate) use since_0_3_calls;

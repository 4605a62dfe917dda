//! Conversions between the model and the records every contract version
//! shares by name and shape (status, labels, resources, ports, taints,
//! tolerations, node selector terms), written once and expanded in each
//! version's module against that version's generated `wire` types.

/// Expands, in a version module with `wire` (its generated types),
/// `Status`, `Code` and `NodeFields` in scope, the conversions of the
/// records all versions share. Each version writes its own `node_to_wire`
/// and `pod_to_wire` from these.
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

        fn terms_to_wire(terms: &[sift_sdk::SelectorTerm]) -> Vec<wire::SelectorTerm> {
            terms
                .iter()
                .map(|t| wire::SelectorTerm {
                    match_expressions: t
                        .match_expressions
                        .iter()
                        .map(requirement_to_wire)
                        .collect(),
                    match_fields: t.match_fields.iter().map(requirement_to_wire).collect(),
                })
                .collect()
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

//! Taints and tolerations as `v1.Toleration.ToleratesTaint` defines them.

use crate::model::{Taint, Toleration, str_eq};

/// The taint kube-scheduler puts on cordoned nodes.
pub const TAINT_NODE_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";

/// An empty effect or key in the toleration matches any; operator `Exists`
/// matches any value, `Equal` (or empty) needs the same value; any other
/// operator tolerates nothing.
pub fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    if !toleration.effect.is_empty() && !str_eq(&toleration.effect, &taint.effect) {
        return false;
    }
    if !toleration.key.is_empty() && !str_eq(&toleration.key, &taint.key) {
        return false;
    }
    match toleration.operator.as_str() {
        "" | "Equal" => str_eq(&toleration.value, &taint.value),
        "Exists" => true,
        _ => false,
    }
}

/// True when some toleration tolerates the taint.
pub fn any_tolerates(tolerations: &[Toleration], taint: &Taint) -> bool {
    tolerations.iter().any(|t| tolerates(t, taint))
}

/// The first taint, among those `filter` selects, that no toleration
/// tolerates (kube-scheduler's `FindMatchingUntoleratedTaint`).
pub fn find_untolerated<'a>(
    taints: &'a [Taint],
    tolerations: &[Toleration],
    filter: impl Fn(&Taint) -> bool,
) -> Option<&'a Taint> {
    taints
        .iter()
        .filter(|t| filter(t))
        .find(|t| !any_tolerates(tolerations, t))
}

/// Taints that keep pods off a node: effects NoSchedule and NoExecute.
pub fn is_do_not_schedule(taint: &Taint) -> bool {
    str_eq(&taint.effect, "NoSchedule") || str_eq(&taint.effect, "NoExecute")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taint(k: &str, v: &str, e: &str) -> Taint {
        Taint {
            key: k.into(),
            value: v.into(),
            effect: e.into(),
        }
    }

    fn tol(k: &str, op: &str, v: &str, e: &str) -> Toleration {
        Toleration {
            key: k.into(),
            operator: op.into(),
            value: v.into(),
            effect: e.into(),
            toleration_seconds: None,
        }
    }

    #[test]
    fn matching_rules() {
        let t = taint("dedicated", "gpu", "NoSchedule");
        assert!(tolerates(
            &tol("dedicated", "Equal", "gpu", "NoSchedule"),
            &t
        ));
        assert!(tolerates(&tol("dedicated", "", "gpu", ""), &t));
        assert!(tolerates(&tol("dedicated", "Exists", "", ""), &t));
        assert!(
            tolerates(&tol("", "Exists", "", ""), &t),
            "empty key + Exists tolerates all"
        );
        assert!(!tolerates(&tol("dedicated", "Equal", "cpu", ""), &t));
        assert!(!tolerates(&tol("dedicated", "Exists", "", "NoExecute"), &t));
        assert!(!tolerates(&tol("dedicated", "Gt", "1", ""), &t));
    }

    #[test]
    fn prefer_no_schedule_is_not_filtered() {
        let taints = [
            taint("a", "", "PreferNoSchedule"),
            taint("b", "", "NoExecute"),
        ];
        let found = find_untolerated(&taints, &[], is_do_not_schedule);
        assert_eq!(found.map(|t| t.key.as_str()), Some("b"));
    }
}

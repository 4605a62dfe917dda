//! NodePorts: a pod's host ports must be free on the node.

use sift_sdk::model::str_eq;
use sift_sdk::{
    Args, ClusterView, HostPort, Node, NodeFields, Plugin, Pod, Prepare, Status, export_plugin,
};

pub const ERR_REASON: &str = "node(s) didn't have free ports for the requested pod ports";

const BIND_ALL: &str = "0.0.0.0";

pub struct NodePorts;

impl Plugin for NodePorts {
    const NAME: &'static str = "NodePorts";
    const NODE_FIELDS: NodeFields = NodeFields::PORTS;
    type PodState = ();

    fn new(_: Args) -> Result<Self, String> {
        Ok(NodePorts)
    }

    /// Pods without host ports skip this plugin, as upstream's PreFilter does.
    fn prepare(&self, pod: &Pod, _cluster: &dyn ClusterView) -> Prepare<()> {
        if pod.host_ports.is_empty() {
            Prepare::Skip
        } else {
            Prepare::Proceed(())
        }
    }

    fn filter(&self, pod: &Pod, _: &(), node: &Node) -> Status {
        if pod
            .host_ports
            .iter()
            .any(|want| conflicts(&node.used_ports, want))
        {
            return Status::unschedulable(ERR_REASON);
        }
        Status::success()
    }
}

/// kube-scheduler's `HostPortInfo.CheckConflict`: same protocol and port,
/// and either side binds all addresses (0.0.0.0) or both bind the same one.
pub fn conflicts(used: &[HostPort], want: &HostPort) -> bool {
    if want.port <= 0 {
        return false;
    }
    let (ip, proto) = sanitize(want);
    used.iter().any(|u| {
        let (uip, uproto) = sanitize(u);
        u.port == want.port
            && str_eq(uproto, proto)
            && (str_eq(ip, BIND_ALL) || str_eq(uip, BIND_ALL) || str_eq(uip, ip))
    })
}

fn sanitize(p: &HostPort) -> (&str, &str) {
    let ip = if p.host_ip.is_empty() {
        BIND_ALL
    } else {
        &p.host_ip
    };
    let proto = if p.protocol.is_empty() {
        "TCP"
    } else {
        &p.protocol
    };
    (ip, proto)
}

export_plugin!(NodePorts);

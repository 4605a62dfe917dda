package sift

// The contract's types (interface sift:predicate/types@0.1.0), as Go values.
// Values handed to a Predicate own their memory (strings are copied out of
// the call's argument memory) unless a doc comment says otherwise.

// Code is kube-scheduler's status code (enum code).
type Code uint8

const (
	// Success: the node passes.
	Success Code = iota
	// Error: something went wrong inside the plugin (not a verdict on the node).
	Error
	// Unschedulable: the node does not fit now, but could after preemption.
	Unschedulable
	// UnschedulableAndUnresolvable: the node does not fit and preemption would not help.
	UnschedulableAndUnresolvable
	// Skip: only from Prepare (use the Skip() result instead).
	SkipCode
)

// Status is a verdict with its human-readable reasons.
type Status struct {
	Code    Code
	Reasons []string
}

// NodeFields says which node fields a plugin reads (flags node-fields).
// Fields not asked for arrive empty in SyncNodes.
type NodeFields uint8

const (
	FieldLabels NodeFields = 1 << iota
	FieldTaints
	FieldUnschedulable
	FieldResources
	FieldPorts
)

// PluginInfo is what Describe returns.
type PluginInfo struct {
	// The plugin's name as configs and statuses name it, e.g. "GpuModel".
	Name       string
	NodeFields NodeFields
}

// ResourceAmount is one amount in kube-scheduler's integer unit for it.
type ResourceAmount struct {
	Name   string
	Amount int64
}

// Resources as kube-scheduler's framework.Resource holds them.
type Resources struct {
	MilliCPU         int64
	Memory           int64
	EphemeralStorage int64
	AllowedPodNumber int64
	// Extended resources, hugepages-*, attachable-volumes-*, sorted by name.
	Scalar []ResourceAmount
}

// Label is a key and a value (labels and node selectors).
type Label struct {
	Key   string
	Value string
}

// Taint of a node; Effect is NoSchedule, PreferNoSchedule or NoExecute.
type Taint struct {
	Key    string
	Value  string
	Effect string
}

// Toleration as written in the pod spec (empty strings where unset).
type Toleration struct {
	Key      string
	Operator string
	Value    string
	Effect   string
	// nil when unset.
	TolerationSeconds *int64
}

// HostPort a container asks for, or one in use on a node.
type HostPort struct {
	Port     int32
	Protocol string
	HostIP   string
}

// SelectorRequirement of a node selector term, operator kept as written.
type SelectorRequirement struct {
	Key      string
	Operator string
	Values   []string
}

// SelectorTerm: requirements ANDed; the terms of a selector are ORed.
type SelectorTerm struct {
	MatchExpressions []SelectorRequirement
	MatchFields      []SelectorRequirement
}

// Pod is the pod to place.
type Pod struct {
	Name         string
	Namespace    string
	UID          string
	Labels       []Label
	NodeName     string
	NodeSelector []Label
	// Required node affinity terms; nil when the pod has none (distinct
	// from a non-nil, empty slice: zero terms).
	RequiredNodeAffinity []SelectorTerm
	Tolerations          []Toleration
	HostPorts            []HostPort
	Requests             Resources
}

// Label returns the value of the pod label key and whether it is set.
func (p *Pod) Label(key string) (string, bool) { return findLabel(p.Labels, key) }

// Node is a node with what the pods bound to it use. Only the fields the
// plugin asked for in Describe are filled; the name always is.
type Node struct {
	Name          string
	Labels        []Label
	Taints        []Taint
	Unschedulable bool
	Allocatable   Resources
	Requested     Resources
	PodCount      uint32
	UsedPorts     []HostPort
}

// Label returns the value of the node label key and whether it is set.
func (n *Node) Label(key string) (string, bool) { return findLabel(n.Labels, key) }

func findLabel(labels []Label, key string) (string, bool) {
	for i := range labels {
		if labels[i].Key == key {
			return labels[i].Value, true
		}
	}
	return "", false
}

// NodeEntry is a node stored at a slot of the instance's node table.
type NodeEntry struct {
	Slot uint32
	Node Node
}

type prepareKind uint8

const (
	kindProceed prepareKind = iota
	kindSkip
	kindReject
	kindNarrow
)

// PrepareResult is what Prepare decided (variant prepare-result). Make one
// with Proceed, Skip, Reject or Narrow.
type PrepareResult struct {
	kind   prepareKind
	status Status
	names  []string
}

// Proceed: filter every node.
func Proceed() PrepareResult { return PrepareResult{kind: kindProceed} }

// Skip: nothing to check for this pod; Filter is not called.
func Skip() PrepareResult { return PrepareResult{kind: kindSkip} }

// Reject: no node can pass; the status applies to every node.
func Reject(status Status) PrepareResult { return PrepareResult{kind: kindReject, status: status} }

// Narrow: only the named nodes can pass; Filter is called for those only.
func Narrow(names []string) PrepareResult { return PrepareResult{kind: kindNarrow, names: names} }

// Rejection pairs a node's position in Filter's slots with the position of
// its status in Verdicts.Statuses (tuple<u32, u32>; its memory layout is
// the canonical ABI's, so a []Rejection is handed to the host as is).
type Rejection struct {
	Index  uint32
	Status uint32
}

// Verdicts of one Filter call: each distinct status once, and the nodes
// that did not pass. Nodes not mentioned pass.
type Verdicts struct {
	Statuses   []Status
	Rejections []Rejection
}

// Level of a log line (enum level of interface log).
type Level uint8

const (
	Trace Level = iota
	Debug
	Info
	Warn
	ErrorLevel
)

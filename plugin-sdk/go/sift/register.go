package sift

// Predicate is a filter predicate: implement it and call Register from an
// init function of package main. The host calls, per instance: Describe,
// then Init once, then SyncNodes whenever its node table changed, then per
// pod Prepare followed by zero or more Filter calls. An instance is used by
// one host thread at a time, so a Predicate needs no locking.
type Predicate interface {
	// Describe says who the plugin is and which node fields it reads.
	Describe() PluginInfo
	// Init configures the instance with the plugin's arguments as JSON
	// ("{}" when none). An error refuses the configuration.
	Init(args string) error
	// SyncNodes stores upserts at their slots and forgets removals.
	// removals is a view into the call's argument memory: it is valid
	// until SyncNodes returns (copy it to keep it). Upserts are owned.
	SyncNodes(upserts []NodeEntry, removals []uint32)
	// Prepare starts a cycle for pod (kube-scheduler's PreFilter) and
	// replaces the previous pod.
	Prepare(pod *Pod) PrepareResult
	// Filter checks the prepared pod against the nodes at slots, in order.
	// slots is a view into the call's argument memory, valid until Filter
	// returns. The returned Verdicts (and everything they point to) must
	// not be modified afterwards: the host reads them after Filter returns.
	Filter(slots []uint32) Verdicts
}

var plugin Predicate

// Register makes p the predicate this module exports. Call it once, from
// an init function: Go runs init functions in _initialize, before the host
// calls any export.
func Register(p Predicate) {
	if plugin != nil {
		panic("sift: Register called twice")
	}
	plugin = p
}

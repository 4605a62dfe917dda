package sift

import "strconv"

// Plugin is a scheduler plugin. Embed Base and implement Info and what
// your extension points need; Base answers the rest:
//
//	type plugin struct{ sift.Base }
//	func (plugin) Info() sift.Info { return sift.Info{Name: "NoTmp", NodeFields: sift.FieldLabels} }
//	func (plugin) Filter(pod *sift.Pod, node *sift.Node) *sift.Status { ... }
//	func init() { sift.Register(plugin{}) }
//
// An instance serves one host thread at a time, so a plugin needs no
// locking, and may keep what Prepare or PreScore computed for a pod in its
// own fields for Filter and Score to read (kube-scheduler's CycleState):
// register a pointer then.
type Plugin interface {
	// Info says who the plugin is and what the host should send it.
	Info() Info
	// Init configures the instance with its arguments as JSON ("{}" when
	// none); an error refuses the configuration.
	Init(args string) error
	// Prepare starts filtering a pod (PreFilter): Proceed(), Skip(),
	// Reject(status) or Narrow(names...). Base proceeds if the plugin
	// filters and skips otherwise.
	Prepare(pod *Pod) Prepared
	// Filter says whether the prepared pod fits node: nil (it does) or a
	// status. Base passes every node.
	Filter(pod *Pod, node *Node) *Status
	// PreScore starts scoring a pod over the feasible nodes: Proceed(),
	// Skip() or Reject(status) (an error). Base proceeds if the plugin
	// scores and skips otherwise.
	PreScore(pod *Pod, nodes []*Node) Prepared
	// Score rates node for the pre-scored pod; a status is an error.
	Score(pod *Pod, node *Node) (int64, *Status)
	// NormalizeScores brings the scores (in the order of the nodes
	// scored) into 0..MaxNodeScore, in place; Base leaves them alone.
	// DefaultNormalize is kube-scheduler's DefaultNormalizeScore.
	NormalizeScores(pod *Pod, scores []int64) *Status
	// Reserve returns the annotations the pod carries once assumed on
	// node, which later pods' filters see on the node's pods.
	Reserve(pod *Pod, node *Node) (map[string]string, *Status)
	// PreBind returns the objects to write before the pod is bound.
	PreBind(pod *Pod, node *Node) ([]ObjectWrite, *Status)

	// embedsBase makes Base required, so that a method added to Plugin
	// later reaches every plugin with its default.
	embedsBase()
}

// Base gives every Plugin method but Info its default.
type Base struct{}

func (Base) Init(string) error                                { return nil }
func (Base) Prepare(*Pod) Prepared                            { return Prepared{kind: kindDefault} }
func (Base) Filter(*Pod, *Node) *Status                       { return nil }
func (Base) PreScore(*Pod, []*Node) Prepared                  { return Prepared{kind: kindDefault} }
func (Base) Score(*Pod, *Node) (int64, *Status)               { return 0, nil }
func (Base) NormalizeScores(*Pod, []int64) *Status            { return nil }
func (Base) Reserve(*Pod, *Node) (map[string]string, *Status) { return nil, nil }
func (Base) PreBind(*Pod, *Node) ([]ObjectWrite, *Status)     { return nil, nil }
func (Base) embedsBase()                                      {}

var registered Plugin

// Register makes p the plugin this module exports. Call it once, from an
// init function: Go runs them before the host calls any export.
func Register(p Plugin) {
	if registered != nil {
		panic("sift: Register called twice")
	}
	registered = p
}

type preparedKind uint8

// The cases of prepare-result, in the contract's order, then the SDK's own.
const (
	kindProceed preparedKind = iota
	kindSkip
	kindReject
	kindNarrow
	kindDefault
)

// Prepared is what Prepare and PreScore answer.
type Prepared struct {
	kind   preparedKind
	status *Status
	names  []string
}

// Proceed: go on with this pod.
func Proceed() Prepared { return Prepared{kind: kindProceed} }

// Skip: the plugin has nothing to say about this pod (its Filter or Score
// is not called for it).
func Skip() Prepared { return Prepared{kind: kindSkip} }

// Reject: from Prepare, no node fits (status says why); from PreScore,
// status must be an error.
func Reject(status *Status) Prepared { return Prepared{kind: kindReject, status: status} }

// Narrow: only the nodes named can fit (kube-scheduler's PreFilterResult);
// Filter is called for those only. Prepare only.
func Narrow(names ...string) Prepared { return Prepared{kind: kindNarrow, names: names} }

// Unschedulable is a status for a node that does not fit now, but could
// after preemption.
func Unschedulable(reasons ...string) *Status {
	return &Status{Code: CodeUnschedulable, Reasons: reasons}
}

// Unresolvable is a status for a node that does not fit, whatever is
// preempted (UnschedulableAndUnresolvable).
func Unresolvable(reasons ...string) *Status {
	return &Status{Code: CodeUnresolvable, Reasons: reasons}
}

// Error is a status for a plugin's own failure: the host aborts the cycle.
func Error(message string) *Status { return &Status{Code: CodeError, Reasons: []string{message}} }

// MaxNodeScore is kube-scheduler's framework.MaxNodeScore.
const MaxNodeScore = 100

// DefaultNormalize is kube-scheduler's DefaultNormalizeScore: scores are
// scaled to 0..MaxNodeScore by the highest (at least 0), truncating;
// reverse turns high into low. With no positive score, scores stay as they
// are (all MaxNodeScore when reverse).
func DefaultNormalize(scores []int64, reverse bool) {
	var top int64
	for _, s := range scores {
		if s > top {
			top = s
		}
	}
	if top == 0 {
		if reverse {
			for i := range scores {
				scores[i] = MaxNodeScore
			}
		}
		return
	}
	for i, s := range scores {
		s = MaxNodeScore * s / top
		if reverse {
			s = MaxNodeScore - s
		}
		scores[i] = s
	}
}

// Level is a log level (enum level).
type Level uint8

const (
	LogTrace Level = iota
	LogDebug
	LogInfo
	LogWarn
	LogError
)

// panicMessage describes a recovered panic as the other SDKs describe an
// exception: the method (as JavaScript names it), then the panic's text.
// Without package fmt, which a plugin that does not use it should not pay
// for (about 0.7 MiB).
func panicMessage(where string, v any) string {
	switch x := v.(type) {
	case error:
		return where + ": " + x.Error()
	case string:
		return where + ": " + x
	case interface{ String() string }:
		return where + ": " + x.String()
	default:
		return where + ": panic with a value of a type that is neither string nor error"
	}
}

func slotError(what string, slot uint32) *Status {
	return Error(what + ": node slot " + strconv.FormatUint(uint64(slot), 10) + " was never synced")
}

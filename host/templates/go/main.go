// {{Plugin}}: rejects nodes labelled `sift.io/{{name}}: deny`.
//
// Package sift (./sdk, sift's Go SDK) holds the contract's canonical-ABI
// bindings; this file is all a plugin author writes. Read the pitfalls in
// sdk/sift/doc.go before importing more of Go's standard library.
package main

import "sift.io/sdk/sift"

const denyLabel = "sift.io/{{name}}"

// Sent with every Filter call; rejections point at it by index.
var statuses = []sift.Status{
	{Code: sift.UnschedulableAndUnresolvable, Reasons: []string{"node(s) were denied by {{Plugin}}"}},
}

type plugin struct {
	// Slot -> whether the node is denied: the host syncs nodes once per
	// change, then asks about batches of slots.
	denied     []bool
	rejections []sift.Rejection
}

func (p *plugin) Describe() sift.PluginInfo {
	return sift.PluginInfo{Name: "{{Plugin}}", NodeFields: sift.FieldLabels}
}

func (p *plugin) Init(args string) error { return nil }

func (p *plugin) SyncNodes(upserts []sift.NodeEntry, removals []uint32) {
	for _, slot := range removals {
		if int(slot) < len(p.denied) {
			p.denied[slot] = false
		}
	}
	for i := range upserts {
		e := &upserts[i]
		for int(e.Slot) >= len(p.denied) {
			p.denied = append(p.denied, false)
		}
		v, _ := e.Node.Label(denyLabel)
		p.denied[e.Slot] = v == "deny"
	}
}

func (p *plugin) Prepare(pod *sift.Pod) sift.PrepareResult { return sift.Proceed() }

func (p *plugin) Filter(slots []uint32) sift.Verdicts {
	rejections := p.rejections[:0]
	for i, slot := range slots {
		if int(slot) < len(p.denied) && p.denied[slot] {
			rejections = append(rejections, sift.Rejection{Index: uint32(i), Status: 0})
		}
	}
	p.rejections = rejections
	return sift.Verdicts{Statuses: statuses, Rejections: rejections}
}

func init() { sift.Register(&plugin{}) }

// Required by -buildmode=c-shared; never called.
func main() {}

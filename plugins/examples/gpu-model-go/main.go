// GpuModel in Go: a pod that asks for GPUs runs only on a node with a GPU
// of a model it accepts. The same predicate as plugins/gpu-model (Rust) and
// the same cases (tests/cases/GpuModel).
//
// Package sift (plugin-sdk/go/sift) holds the hand-written canonical-ABI bindings of
// sift:predicate@0.1.0; this file is all a plugin author writes. Build with
// build.sh (Go's wasip1 port, -buildmode=c-shared, then
// `sift component new`).
package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"sift.io/sdk/sift"
)

const (
	nodeModelLabel = "alibabacloud.com/gpu-card-model"
	podModelsLabel = "sift.io/gpu-models"
	errNoGPU       = "node(s) had no GPU"
	errModel       = "node(s) didn't have an accepted GPU model"
)

var gpuResources = [...]string{
	"alibabacloud.com/gpu-milli",
	"alibabacloud.com/gpu-count",
	"nvidia.com/gpu",
}

// Sent once each per Filter call; rejections point at them by index.
var statuses = []sift.Status{
	{Code: sift.UnschedulableAndUnresolvable, Reasons: []string{errNoGPU}},
	{Code: sift.UnschedulableAndUnresolvable, Reasons: []string{errModel}},
	{Code: sift.Error, Reasons: []string{"filter called without a prepared pod"}},
}

const (
	statusNoGPU = iota
	statusModel
	statusError
)

type gpuModel struct {
	// Slot -> the node's GPU model ("" = none). Only this label is kept.
	models []string
	// Whether a pod is prepared, and the models it accepts (empty: any).
	prepared bool
	accepted []string
	// Reused by every Filter call: the host has read the previous call's
	// verdicts before it makes the next call.
	rejections []sift.Rejection
}

func (g *gpuModel) Describe() sift.PluginInfo {
	return sift.PluginInfo{Name: "GpuModel", NodeFields: sift.FieldLabels}
}

// Init takes no arguments. It shows that Go's standard library works in
// the sandbox, and what the sandbox grants: no file can be opened (there
// is no preopened directory), and the clock reads 1970 unless the
// operator grants clocks.
func (g *gpuModel) Init(args string) error {
	if _, err := os.ReadFile("/etc/passwd"); err == nil {
		return fmt.Errorf("the sandbox let GpuModel read /etc/passwd")
	}
	sift.Log(sift.Debug, fmt.Sprintf("GpuModel (Go) ready at %s", time.Now().UTC().Format(time.RFC3339)))
	return nil
}

func (g *gpuModel) SyncNodes(upserts []sift.NodeEntry, removals []uint32) {
	for _, slot := range removals {
		if int(slot) < len(g.models) {
			g.models[slot] = ""
		}
	}
	for i := range upserts {
		e := &upserts[i]
		for int(e.Slot) >= len(g.models) {
			g.models = append(g.models, "")
		}
		model, _ := e.Node.Label(nodeModelLabel)
		g.models[e.Slot] = model
	}
}

func (g *gpuModel) Prepare(pod *sift.Pod) sift.PrepareResult {
	g.prepared, g.accepted = false, nil
	wantsGPU := false
	for _, r := range pod.Requests.Scalar {
		if r.Amount > 0 && isGPUResource(r.Name) {
			wantsGPU = true
		}
	}
	if !wantsGPU {
		return sift.Skip()
	}
	if v, ok := pod.Label(podModelsLabel); ok {
		for _, m := range strings.Split(v, ".") {
			if m != "" {
				g.accepted = append(g.accepted, m)
			}
		}
	}
	g.prepared = true
	return sift.Proceed()
}

func isGPUResource(name string) bool {
	for _, r := range gpuResources {
		if r == name {
			return true
		}
	}
	return false
}

func (g *gpuModel) Filter(slots []uint32) sift.Verdicts {
	rejections := g.rejections[:0]
	for i, slot := range slots {
		status := -1
		if !g.prepared {
			status = statusError
		} else if model := g.model(slot); model == "" {
			status = statusNoGPU
		} else if len(g.accepted) > 0 && !g.accepts(model) {
			status = statusModel
		}
		if status >= 0 {
			rejections = append(rejections, sift.Rejection{Index: uint32(i), Status: uint32(status)})
		}
	}
	g.rejections = rejections
	return sift.Verdicts{Statuses: statuses, Rejections: rejections}
}

func (g *gpuModel) model(slot uint32) string {
	if int(slot) < len(g.models) {
		return g.models[slot]
	}
	return ""
}

func (g *gpuModel) accepts(model string) bool {
	for _, m := range g.accepted {
		if m == model {
			return true
		}
	}
	return false
}

func init() { sift.Register(&gpuModel{}) }

// A c-shared (reactor) module needs a main package and function; it is
// never called: the host calls _initialize (package init functions), then
// the exports.
func main() {}

// GpuModel in Go: a pod that asks for GPUs runs only on a node with a GPU
// of a model it accepts. The same predicate as plugins/gpu-model (Rust) and
// the same cases (tests/cases/GpuModel), on sift's latest contract through
// the Go SDK (plugin-sdk/go/sift); build with build.sh.
//
// It also shows that Go's standard library works in the sandbox: fmt,
// strings and time format the load time (the frozen clock reads 1970), and
// reading a file fails, which Init checks, refusing to load if it could.
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
)

var gpuResources = [...]string{"alibabacloud.com/gpu-milli", "alibabacloud.com/gpu-count", "nvidia.com/gpu"}

// Built once: the SDK then sends each once per batch.
var (
	noGPU    = sift.Unresolvable("node(s) had no GPU")
	badModel = sift.Unresolvable("node(s) didn't have an accepted GPU model")
)

type gpuModel struct {
	sift.Base
	// The models the prepared pod accepts (empty: any), kept by Prepare
	// for Filter: an instance serves one pod at a time.
	accepted []string
}

// Info: of the nodes' labels, only the model is kept.
func (*gpuModel) Info() sift.Info {
	return sift.Info{Name: "GpuModel", NodeFields: sift.FieldLabels, NodeLabels: []string{nodeModelLabel}}
}

func (*gpuModel) Init(args string) error {
	if _, err := os.ReadFile("/etc/passwd"); err == nil {
		return fmt.Errorf("the sandbox let GpuModel read /etc/passwd")
	} else {
		sift.Log(sift.LogInfo, fmt.Sprintf("GpuModel (Go) loaded at %s; files are closed to it: %v",
			time.Now().UTC().Format("2006-01-02 15:04:05"), err))
	}
	return nil
}

func (g *gpuModel) Prepare(pod *sift.Pod) sift.Prepared {
	wantsGPU := false
	for _, r := range gpuResources {
		wantsGPU = wantsGPU || pod.Requests.Scalar[r] > 0
	}
	if !wantsGPU {
		return sift.Skip()
	}
	// Dots, not commas: label values cannot hold those. Empty segments
	// are typos, not a model named "".
	g.accepted = g.accepted[:0]
	for _, m := range strings.Split(pod.Labels[podModelsLabel], ".") {
		if m != "" {
			g.accepted = append(g.accepted, m)
		}
	}
	return sift.Proceed()
}

func (g *gpuModel) Filter(pod *sift.Pod, node *sift.Node) *sift.Status {
	model := node.Labels[nodeModelLabel]
	if model == "" {
		return noGPU
	}
	if len(g.accepted) > 0 && !contains(g.accepted, model) {
		return badModel
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
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

// SdkProbe in Go: exercises what the Go SDK (plugin-sdk/go) promises,
// against the cases beside it (tests/tests/examples.rs builds it and runs
// them; the Python and JavaScript probes are the same plugin). A filter
// answer that is not a status (case 008) does not compile in Go.
package main

import (
	"fmt"
	"strconv"

	"sift.io/sdk/sift"
)

var denied = sift.Unresolvable("node(s) were denied by the probe")

const reserved = "probe/reserved"

// ValueError panics with the text Python's ValueError has, so the cases'
// messages are the same in every language.
type ValueError string

func (e ValueError) Error() string { return "ValueError: " + string(e) }

type probe struct {
	sift.Base
	maxPods uint32
}

func (*probe) Info() sift.Info {
	return sift.Info{
		Name:              "SdkProbe",
		ExtensionPoints:   sift.Filter | sift.Reserve,
		NodeFields:        sift.FieldLabels | sift.FieldResources,
		PodAnnotationKeys: []string{reserved},
	}
}

func (p *probe) Prepare(pod *sift.Pod) sift.Prepared {
	switch pod.Labels["probe"] {
	case "reject":
		return sift.Reject(sift.Unschedulable("the probe rejects this pod"))
	case "narrow":
		return sift.Narrow("node-b")
	case "raise":
		panic(ValueError("prepare exploded"))
	}
	n, _ := strconv.Atoi(pod.Labels["probe-max-pods"])
	p.maxPods = uint32(n)
	return sift.Proceed()
}

func (p *probe) Filter(pod *sift.Pod, node *sift.Node) *sift.Status {
	switch node.Labels["probe"] {
	case "deny":
		return denied
	case "explode":
		panic(ValueError("boom"))
	}
	if p.maxPods > 0 && node.PodCount >= p.maxPods {
		return sift.Unschedulable(fmt.Sprintf("node(s) had %d pods", node.PodCount))
	}
	if pod.Labels["probe"] == "once" {
		for _, bound := range node.PodAnnotations {
			if _, ok := bound.Annotations[reserved]; ok {
				return sift.Unschedulable("node(s) had a reserved pod")
			}
		}
	}
	return nil
}

func (*probe) Reserve(pod *sift.Pod, node *sift.Node) (map[string]string, *sift.Status) {
	return map[string]string{reserved: node.Name}, nil
}

func init() { sift.Register(&probe{}) }

func main() {}

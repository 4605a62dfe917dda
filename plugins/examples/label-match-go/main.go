// LabelMatch in Go: prefer the nodes that carry the labels a pod lists in
// its annotation `sift.io/preferred-labels` (`key=value` or `key`,
// separated by commas). The same scorer as plugins/label-match (Rust), the
// same cases (tests/cases/Simulate/LabelMatch), through the Go SDK.
package main

import (
	"strings"

	"sift.io/sdk/sift"
)

type term struct {
	key, value string
	anyValue   bool
}

type labelMatch struct {
	sift.Base
	// The prepared pod's terms, kept by PreScore for Score.
	terms []term
}

func (*labelMatch) Info() sift.Info {
	return sift.Info{Name: "LabelMatch", ExtensionPoints: sift.Score, NodeFields: sift.FieldLabels}
}

func (m *labelMatch) PreScore(pod *sift.Pod, nodes []*sift.Node) sift.Prepared {
	m.terms = m.terms[:0]
	for _, t := range strings.Split(pod.Annotations["sift.io/preferred-labels"], ",") {
		// Spaces and tabs only, as the Rust reference trims.
		if t = strings.Trim(t, " \t"); t == "" {
			continue
		}
		key, value, hasValue := strings.Cut(t, "=")
		m.terms = append(m.terms, term{strings.Trim(key, " \t"), strings.Trim(value, " \t"), !hasValue})
	}
	if len(m.terms) == 0 {
		return sift.Skip()
	}
	return sift.Proceed()
}

func (m *labelMatch) Score(pod *sift.Pod, node *sift.Node) (int64, *sift.Status) {
	var matched int64
	for _, t := range m.terms {
		if have, ok := node.Labels[t.key]; ok && (t.anyValue || have == t.value) {
			matched++
		}
	}
	return matched, nil
}

func (*labelMatch) NormalizeScores(pod *sift.Pod, scores []int64) *sift.Status {
	sift.DefaultNormalize(scores, false)
	return nil
}

func init() { sift.Register(&labelMatch{}) }

// Required by -buildmode=c-shared; never called.
func main() {}

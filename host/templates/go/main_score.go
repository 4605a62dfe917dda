// {{Plugin}}: prefers nodes labelled `sift.io/{{name}}: prefer`.
package main

import "sift.io/sdk/sift"

const label = "sift.io/{{name}}"

type plugin struct{ sift.Base }

// Info: the host syncs only the node fields a plugin reads.
func (plugin) Info() sift.Info {
	return sift.Info{Name: "{{Plugin}}", ExtensionPoints: sift.Score, NodeFields: sift.FieldLabels}
}

// Score: already in 0..100, so NormalizeScores keeps Base's default.
func (plugin) Score(pod *sift.Pod, node *sift.Node) (int64, *sift.Status) {
	if node.Labels[label] == "prefer" {
		return sift.MaxNodeScore, nil
	}
	return 0, nil
}

func init() { sift.Register(plugin{}) }

// Required by -buildmode=c-shared; never called.
func main() {}

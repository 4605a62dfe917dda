// {{Plugin}}: rejects nodes labelled `sift.io/{{name}}: deny`.
package main

import "sift.io/sdk/sift"

const label = "sift.io/{{name}}"

// Built once: the SDK then sends it once per batch of nodes.
var denied = sift.Unresolvable("node(s) were denied by {{Plugin}}")

type plugin struct{ sift.Base }

// Info: the host syncs only the node fields a plugin reads.
func (plugin) Info() sift.Info { return sift.Info{Name: "{{Plugin}}", NodeFields: sift.FieldLabels} }

func (plugin) Filter(pod *sift.Pod, node *sift.Node) *sift.Status {
	if node.Labels[label] == "deny" {
		return denied
	}
	return nil
}

func init() { sift.Register(plugin{}) }

// Required by -buildmode=c-shared; never called.
func main() {}

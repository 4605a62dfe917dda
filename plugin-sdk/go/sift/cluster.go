package sift

// ClusterView is what the host synced into the instance: the nodes (the
// fields of Info.NodeFields), and, for a plugin whose Info sets Cluster,
// the pods placed on them by group and the namespaces; the objects of
// Info.ObjectKinds. The SDK keeps it up to date between calls; a plugin
// reads it, never writes it.
type ClusterView struct {
	nodes      []*Node // by slot; nil where no node is
	slots      map[string]uint32
	groups     map[uint64]*PodGroup
	placements map[uint32][]GroupCount
	namespaces map[string]map[string]string
	objects    map[string]map[string]string
}

var cluster = ClusterView{
	slots:      map[string]uint32{},
	groups:     map[uint64]*PodGroup{},
	placements: map[uint32][]GroupCount{},
	namespaces: map[string]map[string]string{},
	objects:    map[string]map[string]string{},
}

// Cluster is the instance's view of the cluster.
func Cluster() *ClusterView { return &cluster }

// Node is the node named name, or nil.
func (c *ClusterView) Node(name string) *Node {
	if slot, ok := c.slots[name]; ok {
		return c.nodes[slot]
	}
	return nil
}

// Nodes calls f for every node, in slot order (the host's node order).
func (c *ClusterView) Nodes(f func(*Node)) {
	for _, n := range c.nodes {
		if n != nil {
			f(n)
		}
	}
}

// PodsOn says how many pods of each group the node named name holds.
func (c *ClusterView) PodsOn(name string) []GroupCount {
	if slot, ok := c.slots[name]; ok {
		return c.placements[slot]
	}
	return nil
}

// Group is the pod group id, or nil.
func (c *ClusterView) Group(id uint64) *PodGroup { return c.groups[id] }

// NamespaceLabels are the labels of namespace name; ok is false when the
// host knows no such namespace.
func (c *ClusterView) NamespaceLabels(name string) (labels map[string]string, ok bool) {
	labels, ok = c.namespaces[name]
	return
}

// Object is the object of kind at key (namespace/name, or name for a
// cluster-scoped kind) as JSON; ok is false when absent.
func (c *ClusterView) Object(kind, key string) (json string, ok bool) {
	json, ok = c.objects[kind][key]
	return
}

func (c *ClusterView) setNode(slot uint32, n *Node) {
	for int(slot) >= len(c.nodes) {
		c.nodes = append(c.nodes, nil)
	}
	if old := c.nodes[slot]; old != nil && c.slots[old.Name] == slot {
		delete(c.slots, old.Name)
	}
	c.nodes[slot] = n
	c.slots[n.Name] = slot
}

func (c *ClusterView) removeNode(slot uint32) {
	if int(slot) < len(c.nodes) {
		if old := c.nodes[slot]; old != nil && c.slots[old.Name] == slot {
			delete(c.slots, old.Name)
		}
		c.nodes[slot] = nil
	}
	delete(c.placements, slot)
}

// node is the node at slot, or nil.
func (c *ClusterView) node(slot uint32) *Node {
	if int(slot) < len(c.nodes) {
		return c.nodes[slot]
	}
	return nil
}

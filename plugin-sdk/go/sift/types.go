package sift

// The contract's types (interface sift:predicate/types@0.7.0) as Go values.
// Every value handed to a plugin owns its memory: strings are copied out of
// the call's argument memory, so a plugin may keep anything it is given.
// Labels, annotations and node selectors are maps.

// Code is kube-scheduler's status code (enum code).
type Code uint8

const (
	// CodeSuccess: the node passes.
	CodeSuccess Code = iota
	// CodeError: something went wrong inside the plugin (not a verdict on
	// the node); the host aborts the cycle, as kube-scheduler does.
	CodeError
	// CodeUnschedulable: the node does not fit now, but could after
	// preemption.
	CodeUnschedulable
	// CodeUnresolvable (UnschedulableAndUnresolvable): the node does not
	// fit and preemption would not help.
	CodeUnresolvable
	// CodeSkip: only the host uses it; return Skip() from Prepare.
	CodeSkip
)

// Status is a verdict with its human-readable reasons. A nil *Status is
// success. Build a status once (a package variable) when its text does not
// depend on the node: the SDK then sends it once per batch. Do not change
// a status after returning it: the SDK reads it when the batch ends.
type Status struct {
	Code    Code
	Reasons []string
}

// NodeFields says which node fields a plugin reads (flags node-fields):
// the host sends no others, so asking for less makes syncing cheaper.
type NodeFields uint16

const (
	FieldLabels NodeFields = 1 << iota
	FieldTaints
	FieldUnschedulable
	FieldResources
	FieldPorts
	FieldAnnotations
	FieldConditions
	// FieldObject: the whole Node as JSON (Node.Object); costly.
	FieldObject
	// FieldImages: the images the node holds; costly.
	FieldImages
	// FieldVolumes: the volumes of the pods bound to the node; costly.
	FieldVolumes
	// FieldDeclaredFeatures: status.declaredFeatures.
	FieldDeclaredFeatures
)

// AllNodeFields is every field but the costly ones (object, images,
// volumes, declared features): what Info.NodeFields zero means, as the
// Rust SDK's default.
const AllNodeFields = FieldLabels | FieldTaints | FieldUnschedulable | FieldResources |
	FieldPorts | FieldAnnotations | FieldConditions

// ExtensionPoints says what a plugin implements (flags extension-points).
type ExtensionPoints uint8

const (
	Filter ExtensionPoints = 1 << iota
	Score
	Reserve
)

// Info says who a plugin is and what the host should send it.
type Info struct {
	// Name is the name in configuration, statuses and messages; required.
	Name string
	// ExtensionPoints: zero means Filter.
	ExtensionPoints ExtensionPoints
	// NodeFields: zero means AllNodeFields.
	NodeFields NodeFields
	// NodeLabels: when set, the SDK keeps only these labels of each node
	// (others read as absent), so the node table stays small and a label
	// lookup cheap; as the Rust SDK's NODE_LABELS.
	NodeLabels []string
	// Cluster: the host syncs pod groups, placements and namespaces
	// (Cluster()), for plugins that look at the pods already placed.
	Cluster bool
	// PodObject: the host sends the whole Pod as JSON in Pod.Object.
	PodObject bool
	// PodAnnotationKeys: the annotations of bound pods the plugin reads
	// (Node.PodAnnotations).
	PodAnnotationKeys []string
	// ObjectKinds: the kinds of cluster objects the plugin reads
	// (Cluster().Object), e.g. "PersistentVolumeClaim".
	ObjectKinds []string
}

// ResourceAmount is one extended resource of a Resources.
type ResourceAmount struct {
	Name   string
	Amount int64
}

// Resources are quantities in kube-scheduler's units: milli-CPU, bytes,
// pods; Scalar holds the extended resources (e.g. nvidia.com/gpu).
type Resources struct {
	MilliCPU         int64
	Memory           int64
	EphemeralStorage int64
	AllowedPodNumber int64
	Scalar           map[string]int64
}

// NonZero is kube-scheduler's non-zero request (defaults for pods that
// request nothing).
type NonZero struct {
	MilliCPU int64
	Memory   int64
}

type Taint struct {
	Key    string
	Value  string
	Effect string
}

type Toleration struct {
	Key      string
	Operator string
	Value    string
	Effect   string
	// TolerationSeconds is nil when unset.
	TolerationSeconds *int64
}

type HostPort struct {
	Port     int32
	Protocol string
	HostIP   string
}

type SelectorRequirement struct {
	Key      string
	Operator string
	Values   []string
}

// SelectorTerm is a node selector term.
type SelectorTerm struct {
	MatchExpressions []SelectorRequirement
	MatchFields      []SelectorRequirement
}

type LabelSelector struct {
	MatchLabels      map[string]string
	MatchExpressions []SelectorRequirement
}

type OwnerReference struct {
	Kind       string
	Name       string
	Controller bool
	APIVersion string
}

type TopologySpreadConstraint struct {
	MaxSkew            int32
	TopologyKey        string
	WhenUnsatisfiable  string
	LabelSelector      *LabelSelector
	MinDomains         *int32
	NodeAffinityPolicy *string
	NodeTaintsPolicy   *string
	MatchLabelKeys     []string
}

type PodAffinityTerm struct {
	LabelSelector     *LabelSelector
	Namespaces        []string
	NamespaceSelector *LabelSelector
	TopologyKey       string
	MatchLabelKeys    []string
	MismatchLabelKeys []string
}

type WeightedSelectorTerm struct {
	Weight     int32
	Preference SelectorTerm
}

type WeightedPodAffinityTerm struct {
	Weight int32
	Term   PodAffinityTerm
}

type ContainerImage struct {
	Names     []string
	SizeBytes int64
}

type Volume struct {
	Name      string
	ClaimName string
	Ephemeral bool
	// Object is the volume source as JSON.
	Object string
}

type PodVolumes struct {
	Pod     string
	Volumes []Volume
}

// ObjectWrite is an object PreBind writes (kind and the whole object as
// JSON), as the WIT's object-write says.
type ObjectWrite struct {
	Kind   string
	Object string
}

// Pod is the pod being scheduled.
type Pod struct {
	Name         string
	Namespace    string
	UID          string
	Labels       map[string]string
	NodeName     string
	NodeSelector map[string]string
	// RequiredNodeAffinity is nil when the pod has none, and a non-nil
	// (possibly empty) slice when it has one.
	RequiredNodeAffinity      []SelectorTerm
	Tolerations               []Toleration
	HostPorts                 []HostPort
	Requests                  Resources
	NonZeroRequests           NonZero
	Annotations               map[string]string
	OwnerReferences           []OwnerReference
	Priority                  int32
	PriorityClassName         string
	SchedulerName             string
	NominatedNodeName         string
	Terminating               bool
	TopologySpreadConstraints []TopologySpreadConstraint
	PodAffinity               []PodAffinityTerm
	PodAntiAffinity           []PodAffinityTerm
	PreferredNodeAffinity     []WeightedSelectorTerm
	PreferredPodAffinity      []WeightedPodAffinityTerm
	PreferredPodAntiAffinity  []WeightedPodAffinityTerm
	Images                    []string
	WorkloadSelector          *LabelSelector
	Volumes                   []Volume
	// Object is the whole Pod as JSON when Info.PodObject is set.
	Object string
}

type NodeCondition struct {
	Type   string
	Status string
}

// PodAnnotations are the annotations (of Info.PodAnnotationKeys) of one
// pod bound to a node.
type PodAnnotations struct {
	Pod         string
	Annotations map[string]string
}

// Node is a node as the host synced it: only the fields of
// Info.NodeFields are filled in.
type Node struct {
	Name             string
	Labels           map[string]string
	Taints           []Taint
	Unschedulable    bool
	Allocatable      Resources
	Requested        Resources
	NonZeroRequested NonZero
	PodCount         uint32
	UsedPorts        []HostPort
	Annotations      map[string]string
	Conditions       []NodeCondition
	// Object is the whole Node as JSON with FieldObject.
	Object           string
	PodAnnotations   []PodAnnotations
	Images           []ContainerImage
	Volumes          []PodVolumes
	DeclaredFeatures []string
}

// PodGroup is a set of identical pods (same namespace, labels and
// affinity terms) of the cluster view.
type PodGroup struct {
	ID                    uint64
	Namespace             string
	Labels                map[string]string
	AntiAffinity          []PodAffinityTerm
	Terminating           bool
	Affinity              []PodAffinityTerm
	PreferredAffinity     []WeightedPodAffinityTerm
	PreferredAntiAffinity []WeightedPodAffinityTerm
}

// GroupCount says how many pods of a group a node holds.
type GroupCount struct {
	Group uint64
	Count uint32
}

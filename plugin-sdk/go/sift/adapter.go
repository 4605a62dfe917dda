//go:build wasip1 && wasm

package sift

import "unsafe"

// adapterArenaSize is the memory set aside for the WASI preview-1 adapter:
// it takes 128 KiB (a 64 KiB stack and a 64 KiB page for its state);
// patch_core.py keeps the last 1028 bytes as the line buffer of Go's
// prints.
const adapterArenaSize = 256 << 10

// adapterArena is the memory the WASI preview-1 adapter allocates from,
// through the cabi_realloc_adapter function patch_core.py adds to the
// module (a Go function cannot serve it: see the package documentation).
// It starts with a marker for patch_core.py to find it by, followed by its
// size; the allocator then keeps its next free address in the first word.
// A Go global, so Go's heap never overlaps it; Go never writes to it.
var adapterArena = [adapterArenaSize]byte{
	's', 'i', 'f', 't', ':', 'w', 'a', 's', 'i', '-', 'a', 'r', 'e', 'n', 'a', '!',
	adapterArenaSize & 0xff, adapterArenaSize >> 8 & 0xff, adapterArenaSize >> 16 & 0xff, adapterArenaSize >> 24 & 0xff,
}

// AdapterMemoryUsed reports how many bytes of its arena the WASI adapter
// has taken (0 when it has not allocated, or the module was not patched).
func AdapterMemoryUsed() (used, size int) {
	b := &adapterArena
	next := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
	if b[0] == 's' && b[1] == 'i' && b[2] == 'f' && b[3] == 't' {
		return 0, adapterArenaSize
	}
	return int(next) - int(uintptr(unsafe.Pointer(b))), adapterArenaSize
}

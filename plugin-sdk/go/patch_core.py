#!/usr/bin/env python3
"""Fixes to the core module Go's wasip1 port builds, before it becomes a
sift plugin component (component.sh runs this between `go build` and
`sift component new`). Python's standard library only.

1. Memory for the WASI preview-1 adapter that Go's heap does not own.
   wit-component gives the adapter (the wasi_snapshot_preview1 -> WASI 0.2
   shim that `sift component new` links in) memory either from the main
   module's `cabi_realloc_adapter`/`cabi_realloc` export or, without one,
   with `memory.grow`. Go's runtime cannot provide either: a Go
   //go:wasmexport function may not run while Go is inside an import (the
   adapter allocates during Go's first WASI call, in _initialize, and Go
   aborts with "wasmexport function called before runtime initialization"),
   and Go's sbrk assumes it owns every page past its own break, so a page
   grown by someone else ends up inside Go's heap. The function added here
   is exported as `cabi_realloc_adapter`: a bump allocator, without Go, over
   the array sift.adapterArena (a Go global, so Go never allocates there),
   found by the 16-byte marker the array starts with.

2. Go's own prints (panics, fatal errors, println) become lines of sift's
   log at level error, whole, with no stdio granted: runtime.fd_write calls
   a function added here instead of the import. What a plugin prints
   through os.Stdout or fmt goes to WASI's stdout, which is discarded
   unless the sandbox grants stdio.

3. Go's sleeps (runtime.poll_oneoff) return at once: a plugin call has
   nothing to wait for, and sift's clocks are frozen by default.

The module keeps its name section; the added functions are named
`sift.cabi_realloc_adapter`, `sift.fd_write_to_log` and
`sift.poll_oneoff_returns_at_once`.
"""

import sys

# The first 16 bytes of sift.adapterArena (sift/adapter.go); the arena's
# size follows them as a little-endian u32.
MARKER = b"sift:wasi-arena!"
# Bytes of a line of Go's stdout/stderr output logged at once.
LINE_BUF = 1024


def uleb(data, pos):
    result = shift = 0
    while True:
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return result, pos


def sleb(data, pos):
    result = shift = 0
    while True:
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            if b & 0x40:
                result -= 1 << shift
            return result, pos


def enc_uleb(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def enc_sleb(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if (n == 0 and not b & 0x40) or (n == -1 and b & 0x40):
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


def enc_name(s):
    b = s.encode()
    return enc_uleb(len(b)) + b


def name(data, pos):
    n, pos = uleb(data, pos)
    return data[pos:pos + n].decode(), pos + n


def sections(module):
    assert module[:8] == b"\0asm\x01\0\0\0", "not a core WebAssembly module"
    pos, out = 8, []
    while pos < len(module):
        sid = module[pos]
        size, body = uleb(module, pos + 1)
        out.append([sid, module[body:body + size]])
        pos = body + size
    return out


def find(secs, sid, custom=None):
    for s in secs:
        if s[0] == sid and (custom is None or name(s[1], 0)[0] == custom):
            return s
    raise SystemExit(f"patch_core: section {custom or sid} not found")


def func_imports(secs):
    """(module, name, type index) of each imported function, in index order."""
    data = find(secs, 2)[1]
    count, pos = uleb(data, 0)
    out = []
    for _ in range(count):
        mod, pos = name(data, pos)
        nm, pos = name(data, pos)
        kind = data[pos]
        pos += 1
        if kind == 0:
            ty, pos = uleb(data, pos)
            out.append((mod, nm, ty))
        elif kind == 1:  # table: reftype, limits
            pos += 1
            flags = data[pos]
            pos += 1
            _, pos = uleb(data, pos)
            if flags & 1:
                _, pos = uleb(data, pos)
        elif kind == 2:  # memory: limits
            flags = data[pos]
            pos += 1
            _, pos = uleb(data, pos)
            if flags & 1:
                _, pos = uleb(data, pos)
        elif kind == 3:  # global: valtype, mut
            pos += 2
        else:
            raise SystemExit(f"patch_core: unexpected import kind {kind}")
    return out


def function_names(secs):
    data = find(secs, 0, "name")[1]
    _, pos = name(data, 0)
    names = {}
    while pos < len(data):
        sub = data[pos]
        size, body = uleb(data, pos + 1)
        if sub == 1:
            count, p = uleb(data, body)
            for _ in range(count):
                idx, p = uleb(data, p)
                nm, p = name(data, p)
                names[nm] = idx
        pos = body + size
    return names


def add_function_name(secs, index, fname):
    sec = find(secs, 0, "name")
    data = sec[1]
    head_name, pos = name(data, 0)
    out = bytearray(enc_name(head_name))
    while pos < len(data):
        sub = data[pos]
        size, body = uleb(data, pos + 1)
        payload = data[body:body + size]
        if sub == 1:
            count, p = uleb(payload, 0)
            payload = enc_uleb(count + 1) + payload[p:] + enc_uleb(index) + enc_name(fname)
        out += bytes([sub]) + enc_uleb(len(payload)) + payload
        pos = body + size
    sec[1] = bytes(out)


def vec_items(data):
    count, pos = uleb(data, 0)
    return count, pos


def find_type(secs, params, results):
    """The index of the function type (params) -> (results), given as valtype bytes."""
    data = find(secs, 1)[1]
    count, pos = uleb(data, 0)
    for i in range(count):
        assert data[pos] == 0x60
        n, pos = uleb(data, pos + 1)
        p = data[pos:pos + n]
        pos += n
        n, pos = uleb(data, pos)
        r = data[pos:pos + n]
        pos += n
        if (p, r) == (params, results):
            return i
    raise SystemExit("patch_core: function type not found")


def import_index(imports, module, field):
    found = [i for i, (m, n, _) in enumerate(imports) if (m, n) == (module, field)]
    if len(found) != 1:
        raise SystemExit(f"patch_core: no import {module} {field}")
    return found[0]


def data_address(secs, marker):
    """The linear-memory address of marker in an active data segment, and
    the u32 that follows it."""
    data = find(secs, 11)[1]
    count, pos = uleb(data, 0)
    found = []
    for _ in range(count):
        flags, pos = uleb(data, pos)
        if flags != 0:
            raise SystemExit(f"patch_core: unexpected data segment flags {flags}")
        assert data[pos] == 0x41, "data segment offset is not i32.const"
        offset, pos = sleb(data, pos + 1)
        assert data[pos] == 0x0B
        pos += 1
        size, pos = uleb(data, pos)
        seg = data[pos:pos + size]
        at = seg.find(marker)
        while at >= 0:
            found.append((offset + at, int.from_bytes(seg[at + 16:at + 20], "little")))
            at = seg.find(marker, at + 1)
        pos += size
    if len(found) != 1:
        raise SystemExit(f"patch_core: adapter arena marker found {len(found)} times (want 1)")
    return found[0]


def main():
    src, dst = sys.argv[1], sys.argv[2]
    module = open(src, "rb").read()
    secs = sections(module)
    imports = func_imports(secs)
    nimports = len(imports)
    # Go's runtime imports fd_write for its own prints; package syscall
    # (os, fmt, log, time...) imports it again for files and stdio.
    fd_writes = [i for i, (m, n, _) in enumerate(imports)
                 if (m, n) == ("wasi_snapshot_preview1", "fd_write")]
    if not fd_writes:
        raise SystemExit("patch_core: no import wasi_snapshot_preview1 fd_write")
    # The log import of whichever contract the SDK is written for.
    logs = [i for i, (m, n, _) in enumerate(imports)
            if m.startswith("sift:predicate/log@") and n == "log"]
    if len(logs) != 1:
        raise SystemExit("patch_core: no import sift:predicate/log@<version> log")
    log_idx = logs[0]
    fd_write_type = imports[fd_writes[0]][2]
    poll_idx = import_index(imports, "wasi_snapshot_preview1", "poll_oneoff")
    poll_type = imports[poll_idx][2]

    # Function and code sections: the indices of the functions added.
    funcsec = find(secs, 3)
    nfuncs, fpos = vec_items(funcsec[1])
    codesec = find(secs, 10)
    ncode, cpos = vec_items(codesec[1])
    assert nfuncs == ncode
    bodies = []
    for _ in range(ncode):
        size, cpos = uleb(codesec[1], cpos)
        bodies.append(codesec[1][cpos:cpos + size])
        cpos += size
    realloc_idx = nimports + nfuncs
    fd_write_shim_idx = realloc_idx + 1
    poll_shim_idx = realloc_idx + 2

    names = function_names(secs)

    def redirect(wrapper_name, import_idx, new_idx):
        """Make Go's wrapper of an import call new_idx instead."""
        wrapper = names.get(wrapper_name)
        if wrapper is None or wrapper < nimports:
            raise SystemExit(f"patch_core: Go's {wrapper_name} wrapper not found")
        body = bodies[wrapper - nimports]
        call = b"\x10" + enc_uleb(import_idx)
        if body.count(call) != 1:
            raise SystemExit(f"patch_core: {body.count(call)} candidate calls in {wrapper_name} (want 1)")
        bodies[wrapper - nimports] = body.replace(call, b"\x10" + enc_uleb(new_idx))

    runtime_fd_write = names.get("runtime.fd_write")
    if runtime_fd_write is None or runtime_fd_write < nimports:
        raise SystemExit("patch_core: Go's runtime.fd_write wrapper not found")
    called = [i for i in fd_writes
              if b"\x10" + enc_uleb(i) in bodies[runtime_fd_write - nimports]]
    if len(called) != 1:
        raise SystemExit(f"patch_core: runtime.fd_write calls {len(called)} fd_write imports (want 1)")
    redirect("runtime.fd_write", called[0], fd_write_shim_idx)
    redirect("runtime.poll_oneoff", poll_idx, poll_shim_idx)

    # (func (param $old i32) (param $old_size i32) (param $align i32) (param $size i32) (result i32)
    #   (local $p i32)
    #   ;; the arena's first word holds the next free address; the marker there means none used yet
    #   (local.set $p (i32.load (BASE)))
    #   (if (i32.eq (local.get $p) (MARKER0)) (then (local.set $p (BASE + 16))))
    #   (if (local.get $old) (then unreachable))                 ;; the adapter never reallocates
    #   (local.set $p (i32.and (i32.add (local.get $p) (i32.sub (local.get $align) (1))) (i32.sub (0) (local.get $align))))
    #   (if (i32.gt_u (i32.add (local.get $p) (local.get $size)) (END)) (then unreachable))
    #   (i32.store (BASE) (i32.add (local.get $p) (local.get $size)))
    #   (local.get $p))
    base, arena_size = data_address(secs, MARKER)
    # The arena's last LINE_BUF + 4 bytes: fd_write's line buffer and its length.
    end = base + arena_size - LINE_BUF - 4
    nptr, buf = end, end + 4
    marker0 = int.from_bytes(MARKER[:4], "little")
    if marker0 >= 1 << 31:
        marker0 -= 1 << 32
    const = lambda n: b"\x41" + enc_sleb(n if n < 1 << 31 else n - (1 << 32))
    realloc = (b"\x01\x01\x7f"
               + const(base) + b"\x28\x02\x00\x21\x04"
               + b"\x20\x04" + const(marker0) + b"\x46\x04\x40" + const(base + 16) + b"\x21\x04\x0b"
               + b"\x20\x00\x04\x40\x00\x0b"
               + b"\x20\x04\x20\x02\x6a\x41\x01\x6b\x41\x00\x20\x02\x6b\x71\x21\x04"
               + b"\x20\x04\x20\x03\x6a" + const(end) + b"\x4b\x04\x40\x00\x0b"
               + const(base) + b"\x20\x04\x20\x03\x6a\x36\x02\x00"
               + b"\x20\x04\x0b")

    # The realloc's type: (i32 i32 i32 i32) -> i32, added to the type section.
    typesec = find(secs, 1)
    ntypes, tpos = vec_items(typesec[1])
    realloc_type = ntypes
    typesec[1] = enc_uleb(ntypes + 1) + typesec[1][tpos:] + b"\x60\x04\x7f\x7f\x7f\x7f\x01\x7f"

    # fd_write(fd, iovs, iovs_len, nwritten) -> errno: Go's runtime prints
    # (panics, fatal errors, println) become lines of the host's log at
    # level error. Without this, fd_write reaches the adapter, whose
    # descriptor table needs wasi:filesystem, which sift never links, and
    # the message is lost in a trap. Bytes are gathered in a line buffer and
    # logged at each newline or when the buffer is full.
    # (func (param $fd i32) (param $iovs i32) (param $n i32) (param $out i32) (result i32)
    #   (local $i i32) (local $p i32) (local $len i32) (local $j i32) (local $total i32) (local $b i32) (local $k i32)
    #   (loop over i < n: p = iovs[i].buf, len = iovs[i].len, total += len,
    #     (loop over j < len: b = p[j]; k = *NPTR;
    #       (if (b == '\n' || k == LINE_BUF) (log ERROR BUF k) (*NPTR = 0) (k = 0))
    #       (if (b != '\n') (BUF[k] = b) (*NPTR = k + 1))))
    #   (*out = total) 0)
    L = lambda i: enc_uleb(i)
    get = lambda i: b"\x20" + L(i)
    set_ = lambda i: b"\x21" + L(i)
    fd_write = (b"\x01\x07\x7f"
                # i = 0 (locals start zero); block $done; loop $next
                + b"\x02\x40\x03\x40"
                + get(6) + get(2) + b"\x4f\x0d\x01"                      # br_if $done (i >= n)
                + get(1) + get(6) + b"\x41\x08\x6c\x6a" + b"\x28\x02\x00" + set_(5)   # p = load(iovs + 8i)
                + get(1) + get(6) + b"\x41\x08\x6c\x6a" + b"\x28\x02\x04" + set_(7)   # len = load offset=4
                + get(8) + get(7) + b"\x6a" + set_(8)                      # total += len
                + b"\x41\x00" + set_(4)                                   # j = 0
                + b"\x02\x40\x03\x40"                                     # block $jdone; loop $jnext
                + get(4) + get(7) + b"\x4f\x0d\x01"                      # br_if $jdone (j >= len)
                + get(5) + get(4) + b"\x6a\x2d\x00\x00" + set_(9)         # b = load8_u(p + j)
                + const(nptr) + b"\x28\x02\x00" + set_(10)               # k = *NPTR
                + get(9) + b"\x41\x0a\x46" + get(10) + const(LINE_BUF) + b"\x4f\x72"  # b == '\n' | k >= LINE_BUF
                + b"\x04\x40"
                + b"\x41\x04" + const(buf) + get(10) + b"\x10" + L(log_idx)  # log(error, BUF, k)
                + const(nptr) + b"\x41\x00\x36\x02\x00"                 # *NPTR = 0
                + b"\x41\x00" + set_(10)
                + b"\x0b"
                + get(9) + b"\x41\x0a\x47" + b"\x04\x40"                 # if b != '\n'
                + const(buf) + get(10) + b"\x6a" + get(9) + b"\x3a\x00\x00"  # BUF[k] = b
                + const(nptr) + get(10) + b"\x41\x01\x6a\x36\x02\x00"    # *NPTR = k + 1
                + b"\x0b"
                + get(4) + b"\x41\x01\x6a" + set_(4) + b"\x0c\x00"      # j++; br $jnext
                + b"\x0b\x0b"
                + get(6) + b"\x41\x01\x6a" + set_(6) + b"\x0c\x00"      # i++; br $next
                + b"\x0b\x0b"
                + get(3) + get(8) + b"\x36\x02\x00"                        # *out = total
                + b"\x41\x00\x0b")                                        # errno 0

    # poll_oneoff is how Go's runtime sleeps: usleep (e.g. while printing
    # a fatal panic) and the scheduler's wait for timers (time.Sleep,
    # time.After). A plugin call has nothing to wait for, and sift's clocks
    # are frozen by default, so a sleep would never end: it returns at once
    # with no events (a Go program that waits for a timer spins until the
    # host's call deadline stops it).
    # (func (param $in i32) (param $out i32) (param $n i32) (param $nevents i32) (result i32)
    #   (i32.store (local.get $nevents) (i32.const 0)) (i32.const 0))
    poll = b"\x00\x20\x03\x41\x00\x36\x02\x00\x41\x00\x0b"

    funcsec[1] = (enc_uleb(nfuncs + 3) + funcsec[1][fpos:]
                  + enc_uleb(realloc_type) + enc_uleb(fd_write_type) + enc_uleb(poll_type))
    bodies += [realloc, fd_write, poll]
    codesec[1] = enc_uleb(len(bodies)) + b"".join(enc_uleb(len(b)) + b for b in bodies)

    exportsec = find(secs, 7)
    nexports, epos = vec_items(exportsec[1])
    exportsec[1] = (enc_uleb(nexports + 1) + exportsec[1][epos:]
                    + enc_name("cabi_realloc_adapter") + b"\x00" + enc_uleb(realloc_idx))

    # When nothing calls the fd_write import any more (no syscall), it
    # becomes an import of clock_res_get (never called), keeping every
    # function index: while the module imports fd_write the adapter keeps
    # its descriptor table, and the component imports wasi:filesystem,
    # which costs instantiation time for nothing. A module that imports
    # syscall keeps its own fd_write, and the filesystem (no directory is
    # ever preopened, so no file opens).
    importsec = find(secs, 2)
    random_type = imports[import_index(imports, "wasi_snapshot_preview1", "random_get")][2]
    old = enc_name("wasi_snapshot_preview1") + enc_name("fd_write") + b"\x00" + enc_uleb(fd_write_type)
    new = enc_name("wasi_snapshot_preview1") + enc_name("clock_res_get") + b"\x00" + enc_uleb(random_type)
    if len(fd_writes) == 1:
        if importsec[1].count(old) != 1:
            raise SystemExit("patch_core: fd_write import not found")
        importsec[1] = importsec[1].replace(old, new)
    # The same for poll_oneoff (its fd subscriptions need the descriptor
    # table too): it becomes an import of proc_raise, never called.
    proc_raise_type = find_type(secs, b"\x7f", b"\x7f")
    old = enc_name("wasi_snapshot_preview1") + enc_name("poll_oneoff") + b"\x00" + enc_uleb(poll_type)
    new = enc_name("wasi_snapshot_preview1") + enc_name("proc_raise") + b"\x00" + enc_uleb(proc_raise_type)
    if importsec[1].count(old) != 1:
        raise SystemExit("patch_core: poll_oneoff import not found")
    importsec[1] = importsec[1].replace(old, new)

    add_function_name(secs, realloc_idx, "sift.cabi_realloc_adapter")
    add_function_name(secs, fd_write_shim_idx, "sift.fd_write_to_log")
    add_function_name(secs, poll_shim_idx, "sift.poll_oneoff_returns_at_once")

    out = bytearray(module[:8])
    for sid, data in secs:
        out += bytes([sid]) + enc_uleb(len(data)) + data
    open(dst, "wb").write(out)


if __name__ == "__main__":
    main()

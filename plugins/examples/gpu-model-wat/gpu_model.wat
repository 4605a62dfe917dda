;; GpuModel, by hand in WebAssembly text: a pod that asks for GPUs runs
;; only on a node with a GPU of a model it accepts. The same predicate as
;; plugins/gpu-model (Rust) and the same cases (tests/cases/GpuModel).
;;
;; A core module speaking the component model's canonical ABI for
;; sift:predicate@0.1.0 (wit/0.1.0/predicate.wit); build.sh wraps it into a
;; component. Layouts (32-bit canonical ABI): string = (ptr, len);
;; list = (ptr, len); label = 16 bytes; resource-amount = 16 (amount at 8);
;; resources = 40 (scalar list at 32); node = 128 (labels at 8); node-entry
;; = 136 (node at 8); pod = 120 (labels at 24, requests at 80).
;;
;; Memory: static data below 1 KiB; the interned GPU model names at 1 KiB
;; (table) and 2 KiB (text); one u32 model id per node slot from 64 KiB;
;; a bump heap from 320 KiB for the arguments the host passes in. The heap
;; is reset when each call ends (results stay readable until the next
;; call), so memory does not grow with the number of calls.
(module
  (memory (export "memory") 6)

  (global $heap (mut i32) (i32.const 327680))
  (global $prepared (mut i32) (i32.const 0))
  ;; 1: the pod accepts any model; else $mask holds the accepted model ids.
  (global $any (mut i32) (i32.const 1))
  (global $mask (mut i64) (i64.const 0))
  (global $nmodels (mut i32) (i32.const 0))
  (global $text_top (mut i32) (i32.const 2048))

  (data (i32.const 16) "GpuModel")
  (data (i32.const 32) "alibabacloud.com/gpu-card-model")
  (data (i32.const 64) "sift.io/gpu-models")
  (data (i32.const 96) "alibabacloud.com/gpu-milli")
  (data (i32.const 128) "alibabacloud.com/gpu-count")
  (data (i32.const 160) "nvidia.com/gpu")
  (data (i32.const 192) "node(s) had no GPU")
  (data (i32.const 224) "node(s) didn't have an accepted GPU model")
  (data (i32.const 272) "filter called without a prepared pod")
  ;; The three statuses filter returns (code u8 at 0, reasons list at 4):
  ;; 0 = unresolvable "no GPU", 1 = unresolvable "model", 2 = error.
  (data (i32.const 320) "\03\00\00\00\90\01\00\00\01\00\00\00")
  (data (i32.const 332) "\03\00\00\00\98\01\00\00\01\00\00\00")
  (data (i32.const 344) "\01\00\00\00\a0\01\00\00\01\00\00\00")
  ;; Their reason lists: one string each.
  (data (i32.const 400) "\c0\00\00\00\12\00\00\00")
  (data (i32.const 408) "\e0\00\00\00\29\00\00\00")
  (data (i32.const 416) "\10\01\00\00\24\00\00\00")

  ;; Slots the table can hold (64 KiB .. 320 KiB).
  (global $max_slots i32 (i32.const 65536))
  (global $ret i32 (i32.const 448))

  ;; The allocator the host calls to pass strings and lists in.
  (func (export "cabi_realloc") (param $old i32) (param $old_size i32) (param $align i32) (param $size i32) (result i32)
    (local $ptr i32)
    (local.set $ptr (i32.and (i32.add (global.get $heap) (i32.sub (local.get $align) (i32.const 1)))
                             (i32.sub (i32.const 0) (local.get $align))))
    (global.set $heap (i32.add (local.get $ptr) (local.get $size)))
    (block $ok
      (br_if $ok (i32.le_u (global.get $heap) (i32.mul (memory.size) (i32.const 65536))))
      (br_if $ok (i32.ne (memory.grow (i32.add (i32.const 1)
        (i32.div_u (i32.sub (global.get $heap) (i32.mul (memory.size) (i32.const 65536))) (i32.const 65536))))
        (i32.const -1)))
      unreachable)
    (if (local.get $old)
      (then (memory.copy (local.get $ptr) (local.get $old)
        (select (local.get $old_size) (local.get $size) (i32.lt_u (local.get $old_size) (local.get $size))))))
    (local.get $ptr))

  (func $reset_heap (global.set $heap (i32.const 327680)))

  ;; Byte equality of two strings.
  (func $eq (param $a i32) (param $al i32) (param $b i32) (param $bl i32) (result i32)
    (local $i i32)
    (if (i32.ne (local.get $al) (local.get $bl)) (then (return (i32.const 0))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $al)))
        (if (i32.ne (i32.load8_u (i32.add (local.get $a) (local.get $i)))
                    (i32.load8_u (i32.add (local.get $b) (local.get $i))))
          (then (return (i32.const 0))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.const 1))

  ;; The id (1..63) of an interned model name, 0 if unknown.
  (func $model_id (param $p i32) (param $l i32) (result i32)
    (local $i i32) (local $e i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (global.get $nmodels)))
        (local.set $e (i32.add (i32.const 1024) (i32.mul (local.get $i) (i32.const 8))))
        (if (call $eq (local.get $p) (local.get $l) (i32.load (local.get $e)) (i32.load offset=4 (local.get $e)))
          (then (return (i32.add (local.get $i) (i32.const 1)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.const 0))

  ;; The id of a model name, interning it (copied out of the heap) if new.
  (func $intern (param $p i32) (param $l i32) (result i32)
    (local $id i32) (local $e i32)
    (local.set $id (call $model_id (local.get $p) (local.get $l)))
    (if (local.get $id) (then (return (local.get $id))))
    ;; 63 models and 2 KiB of names are enough for an example; beyond, trap.
    (if (i32.ge_u (global.get $nmodels) (i32.const 63)) (then unreachable))
    (if (i32.gt_u (i32.add (global.get $text_top) (local.get $l)) (i32.const 4096)) (then unreachable))
    (memory.copy (global.get $text_top) (local.get $p) (local.get $l))
    (local.set $e (i32.add (i32.const 1024) (i32.mul (global.get $nmodels) (i32.const 8))))
    (i32.store (local.get $e) (global.get $text_top))
    (i32.store offset=4 (local.get $e) (local.get $l))
    (global.set $text_top (i32.add (global.get $text_top) (local.get $l)))
    (global.set $nmodels (i32.add (global.get $nmodels) (i32.const 1)))
    (global.get $nmodels))

  (func $slot_addr (param $slot i32) (result i32)
    (if (i32.ge_u (local.get $slot) (global.get $max_slots)) (then unreachable))
    (i32.add (i32.const 65536) (i32.mul (local.get $slot) (i32.const 4))))

  ;; describe() -> plugin-info { name, node-fields = labels }
  (func (export "sift:predicate/predicate@0.1.0#describe") (result i32)
    (i32.store (global.get $ret) (i32.const 16))
    (i32.store offset=4 (global.get $ret) (i32.const 8))
    (i32.store8 offset=8 (global.get $ret) (i32.const 1))
    (global.get $ret))

  ;; init(args) -> result<_, string>: no arguments to read.
  (func (export "sift:predicate/predicate@0.1.0#init") (param i32 i32) (result i32)
    (call $reset_heap)
    (i32.store8 (global.get $ret) (i32.const 0))
    (global.get $ret))

  ;; sync-nodes(upserts, removals): keep each node's GPU model id.
  (func (export "sift:predicate/predicate@0.1.0#sync-nodes") (param $up i32) (param $nup i32) (param $rm i32) (param $nrm i32)
    (local $i i32) (local $e i32) (local $labels i32) (local $n i32) (local $j i32) (local $l i32) (local $model i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $nrm)))
        (i32.store (call $slot_addr (i32.load (i32.add (local.get $rm) (i32.mul (local.get $i) (i32.const 4))))) (i32.const 0))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.set $i (i32.const 0))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $nup)))
        (local.set $e (i32.add (local.get $up) (i32.mul (local.get $i) (i32.const 136))))
        ;; node at +8, its labels list at node+8
        (local.set $labels (i32.load offset=16 (local.get $e)))
        (local.set $n (i32.load offset=20 (local.get $e)))
        (local.set $model (i32.const 0))
        (local.set $j (i32.const 0))
        (block $ldone
          (loop $lnext
            (br_if $ldone (i32.ge_u (local.get $j) (local.get $n)))
            (local.set $l (i32.add (local.get $labels) (i32.mul (local.get $j) (i32.const 16))))
            (if (i32.and
                  (call $eq (i32.load (local.get $l)) (i32.load offset=4 (local.get $l)) (i32.const 32) (i32.const 31))
                  (i32.ne (i32.load offset=12 (local.get $l)) (i32.const 0)))
              (then (local.set $model (call $intern (i32.load offset=8 (local.get $l)) (i32.load offset=12 (local.get $l))))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $lnext)))
        (i32.store (call $slot_addr (i32.load (local.get $e))) (local.get $model))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (call $reset_heap))

  ;; Whether the scalar request at $a names a GPU resource with amount > 0.
  (func $is_gpu_request (param $a i32) (result i32)
    (local $p i32) (local $l i32)
    (if (i64.le_s (i64.load offset=8 (local.get $a)) (i64.const 0)) (then (return (i32.const 0))))
    (local.set $p (i32.load (local.get $a)))
    (local.set $l (i32.load offset=4 (local.get $a)))
    (i32.or (i32.or
      (call $eq (local.get $p) (local.get $l) (i32.const 96) (i32.const 26))
      (call $eq (local.get $p) (local.get $l) (i32.const 128) (i32.const 26)))
      (call $eq (local.get $p) (local.get $l) (i32.const 160) (i32.const 14))))

  ;; Accept one model name (a segment of the pod's list).
  (func $accept (param $p i32) (param $l i32)
    (local $id i32)
    (if (i32.eqz (local.get $l)) (then (return)))
    (global.set $any (i32.const 0))
    (local.set $id (call $model_id (local.get $p) (local.get $l)))
    (if (local.get $id)
      (then (global.set $mask (i64.or (global.get $mask) (i64.shl (i64.const 1) (i64.extend_i32_u (local.get $id))))))))

  ;; prepare(pod) -> prepare-result: skip pods without a GPU request, else
  ;; remember the accepted models ("." separated label value).
  (func (export "sift:predicate/predicate@0.1.0#prepare") (param $pod i32) (result i32)
    (local $scalar i32) (local $n i32) (local $i i32) (local $wants i32)
    (local $labels i32) (local $l i32) (local $v i32) (local $vl i32) (local $start i32) (local $k i32)
    (global.set $prepared (i32.const 0))
    (global.set $any (i32.const 1))
    (global.set $mask (i64.const 0))
    ;; requests at pod+80, their scalar list at +32
    (local.set $scalar (i32.load offset=112 (local.get $pod)))
    (local.set $n (i32.load offset=116 (local.get $pod)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (if (call $is_gpu_request (i32.add (local.get $scalar) (i32.mul (local.get $i) (i32.const 16))))
          (then (local.set $wants (i32.const 1))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (if (i32.eqz (local.get $wants))
      (then
        (call $reset_heap)
        (i32.store8 (global.get $ret) (i32.const 1))
        (return (global.get $ret))))
    (local.set $labels (i32.load offset=24 (local.get $pod)))
    (local.set $n (i32.load offset=28 (local.get $pod)))
    (local.set $i (i32.const 0))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $l (i32.add (local.get $labels) (i32.mul (local.get $i) (i32.const 16))))
        (if (call $eq (i32.load (local.get $l)) (i32.load offset=4 (local.get $l)) (i32.const 64) (i32.const 18))
          (then
            (local.set $v (i32.load offset=8 (local.get $l)))
            (local.set $vl (i32.load offset=12 (local.get $l)))
            (local.set $start (i32.const 0))
            (local.set $k (i32.const 0))
            (block $sdone
              (loop $snext
                (br_if $sdone (i32.gt_u (local.get $k) (local.get $vl)))
                (if (i32.or (i32.eq (local.get $k) (local.get $vl))
                            (i32.eq (i32.load8_u (i32.add (local.get $v) (local.get $k))) (i32.const 46)))
                  (then
                    (call $accept (i32.add (local.get $v) (local.get $start)) (i32.sub (local.get $k) (local.get $start)))
                    (local.set $start (i32.add (local.get $k) (i32.const 1)))))
                (local.set $k (i32.add (local.get $k) (i32.const 1)))
                (br $snext)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (global.set $prepared (i32.const 1))
    (call $reset_heap)
    (i32.store8 (global.get $ret) (i32.const 0))
    (global.get $ret))

  ;; filter(slots) -> verdicts { statuses, rejections: (index, status) }
  (func (export "sift:predicate/predicate@0.1.0#filter") (param $slots i32) (param $len i32) (result i32)
    (local $out i32) (local $count i32) (local $i i32) (local $slot i32) (local $id i32) (local $status i32)
    (local.set $out (global.get $heap))
    (global.set $heap (i32.add (global.get $heap) (i32.mul (local.get $len) (i32.const 8))))
    (if (i32.gt_u (global.get $heap) (i32.mul (memory.size) (i32.const 65536)))
      (then (drop (memory.grow (i32.add (i32.const 1)
        (i32.div_u (i32.sub (global.get $heap) (i32.mul (memory.size) (i32.const 65536))) (i32.const 65536)))))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
        (local.set $status (i32.const -1))
        (if (i32.eqz (global.get $prepared))
          (then (local.set $status (i32.const 2)))
          (else
            (local.set $slot (i32.load (i32.add (local.get $slots) (i32.mul (local.get $i) (i32.const 4)))))
            (local.set $id (if (result i32) (i32.lt_u (local.get $slot) (global.get $max_slots))
              (then (i32.load (call $slot_addr (local.get $slot))))
              (else (i32.const 0))))
            (if (i32.eqz (local.get $id))
              (then (local.set $status (i32.const 0)))
              (else
                (if (i32.and (i32.eqz (global.get $any))
                             (i64.eqz (i64.and (global.get $mask) (i64.shl (i64.const 1) (i64.extend_i32_u (local.get $id))))))
                  (then (local.set $status (i32.const 1))))))))
        (if (i32.ge_s (local.get $status) (i32.const 0))
          (then
            (i32.store (i32.add (local.get $out) (i32.mul (local.get $count) (i32.const 8))) (local.get $i))
            (i32.store offset=4 (i32.add (local.get $out) (i32.mul (local.get $count) (i32.const 8))) (local.get $status))
            (local.set $count (i32.add (local.get $count) (i32.const 1)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.store (global.get $ret) (i32.const 320))
    (i32.store offset=4 (global.get $ret) (i32.const 3))
    (i32.store offset=8 (global.get $ret) (local.get $out))
    (i32.store offset=12 (global.get $ret) (local.get $count))
    (call $reset_heap)
    (global.get $ret))
)

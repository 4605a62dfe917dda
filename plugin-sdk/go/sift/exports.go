//go:build wasip1 && wasm

package sift

import (
	"sort"
	"strconv"
	"strings"
	"unsafe"
)

// The exports of world sift:predicate/plugin@0.7.0: the SDK keeps what the
// host syncs (ClusterView) and turns the batched calls into one call of
// the plugin per node. A panic in a plugin method becomes an Error status
// naming it, as kube-scheduler reports a plugin's error, instead of a trap
// that would cost the instance.

// The instance's state between calls.
var (
	info Info
	// The pod Prepare proceeded with, nil when none (Filter answers an
	// error then).
	filtering *Pod
	// The pod PreScore proceeded with.
	scoring *Pod
)

// maxSlot bounds the node table: the host numbers nodes densely from 0, so
// a larger slot is a host defect, not a reason to grow the table past the
// instance's memory.
const maxSlot = 1 << 22

// begin starts an export call: the previous call's results are released.
func begin() {
	if registered == nil {
		panic("sift: no plugin registered: call sift.Register in an init function")
	}
	results = results[:0:0]
}

// end rewinds the argument arena once the call has read its arguments.
func end() { args.reset() }

// recovered turns a panic into an Error status (nil when none).
func recovered(where string, v any) *Status {
	if v == nil {
		return nil
	}
	return Error(panicMessage(where, v))
}

//go:wasmexport sift:predicate/predicate@0.7.0#describe
func exportDescribe() unsafe.Pointer {
	begin()
	defer end()
	info = registered.Info()
	if info.ExtensionPoints == 0 {
		info.ExtensionPoints = Filter
	}
	if info.NodeFields == 0 {
		info.NodeFields = AllNodeFields
	}
	if used, size := AdapterMemoryUsed(); used > 0 {
		Log(LogDebug, "the WASI adapter uses "+strconv.Itoa(used)+" of the "+strconv.Itoa(size)+" bytes set aside for it")
	}
	r := retPtr()
	putString(r, 0, info.Name)
	put16(r, 8, uint16(info.NodeFields))
	putBool(r, 10, info.Cluster)
	putBool(r, 11, info.PodObject)
	put8(r, 12, uint8(info.ExtensionPoints))
	putStringList(r, 16, info.PodAnnotationKeys)
	putStringList(r, 24, info.ObjectKinds)
	return r
}

//go:wasmexport sift:predicate/predicate@0.7.0#init
func exportInit(p unsafe.Pointer, n uint32) unsafe.Pointer {
	begin()
	defer end()
	config := string(unsafe.Slice((*byte)(p), n))
	err := callInit(config)
	r := retPtr()
	if err == "" {
		put8(r, 0, 0)
	} else {
		put8(r, 0, 1)
		putString(r, 4, err)
	}
	return r
}

func callInit(config string) (msg string) {
	defer func() {
		if v := recover(); v != nil {
			msg = panicMessage("init", v)
		}
	}()
	if err := registered.Init(config); err != nil {
		if msg = err.Error(); msg == "" {
			msg = "Init failed (with an empty error)"
		}
	}
	return msg
}

//go:wasmexport sift:predicate/predicate@0.7.0#sync-nodes
func exportSyncNodes(up unsafe.Pointer, nup uint32, rm unsafe.Pointer, nrm uint32) {
	begin()
	defer end()
	for _, slot := range u32s(rm, nrm) {
		cluster.removeNode(slot)
	}
	for i := uint32(0); i < nup; i++ {
		e := addr(up) + i*208
		if slot := ld32(e); slot < maxSlot {
			cluster.setNode(slot, node(e+8, info.NodeLabels))
		} else {
			Log(LogError, "sync-nodes: slot "+strconv.FormatUint(uint64(slot), 10)+" ignored: slots are dense indexes below "+strconv.Itoa(maxSlot))
		}
	}
}

//go:wasmexport sift:predicate/predicate@0.7.0#sync-pod-groups
func exportSyncPodGroups(up unsafe.Pointer, nup uint32, rm unsafe.Pointer, nrm uint32) {
	begin()
	defer end()
	for i := uint32(0); i < nrm; i++ {
		delete(cluster.groups, uint64(ld64(addr(rm)+i*8)))
	}
	for i := uint32(0); i < nup; i++ {
		g := podGroup(addr(up) + i*64)
		cluster.groups[g.ID] = g
	}
}

//go:wasmexport sift:predicate/predicate@0.7.0#sync-placements
func exportSyncPlacements(up unsafe.Pointer, nup uint32) {
	begin()
	defer end()
	for i := uint32(0); i < nup; i++ {
		e := addr(up) + i*12
		cluster.placements[ld32(e)] = list(e+4, 16, groupCount)
	}
}

//go:wasmexport sift:predicate/predicate@0.7.0#sync-namespaces
func exportSyncNamespaces(up unsafe.Pointer, nup uint32, rm unsafe.Pointer, nrm uint32) {
	begin()
	defer end()
	for i := uint32(0); i < nrm; i++ {
		delete(cluster.namespaces, str(addr(rm)+i*8))
	}
	for i := uint32(0); i < nup; i++ {
		e := addr(up) + i*16
		ls := labels(e + 8)
		if ls == nil {
			ls = map[string]string{}
		}
		cluster.namespaces[str(e)] = ls
	}
}

//go:wasmexport sift:predicate/predicate@0.7.0#sync-objects
func exportSyncObjects(kp unsafe.Pointer, kn uint32, up unsafe.Pointer, nup uint32, rm unsafe.Pointer, nrm uint32) {
	begin()
	defer end()
	kind := string(unsafe.Slice((*byte)(kp), kn))
	table := cluster.objects[kind]
	if table == nil {
		table = map[string]string{}
		cluster.objects[kind] = table
	}
	for i := uint32(0); i < nrm; i++ {
		delete(table, str(addr(rm)+i*8))
	}
	for i := uint32(0); i < nup; i++ {
		e := addr(up) + i*16
		table[str(e)] = str(e + 8)
	}
}

// prepare: func(pod: pod) -> prepare-result. The pod is passed by pointer;
// the result is a variant: case u8 at 0, payload at 4.
//
//go:wasmexport sift:predicate/predicate@0.7.0#prepare
func exportPrepare(p unsafe.Pointer) unsafe.Pointer {
	begin()
	defer end()
	// Forget the previous pod first: a stray filter must not see it.
	filtering = nil
	pd := pod(addr(p))
	res := callPrepare(pd)
	r := retPtr()
	put8(r, 0, uint8(res.kind))
	switch res.kind {
	case kindProceed:
		filtering = pd
	case kindReject:
		putStatus(r, 4, res.status)
	case kindNarrow:
		filtering = pd
		putStringList(r, 4, res.names)
	}
	return r
}

func callPrepare(pd *Pod) (res Prepared) {
	defer func() {
		if s := recovered("prepare", recover()); s != nil {
			res = Reject(s)
		}
	}()
	res = registered.Prepare(pd)
	return settle(res, Filter, "Prepare")
}

// settle resolves Base's default (proceed when the plugin implements the
// extension point, skip otherwise) and refuses what cannot be sent.
func settle(res Prepared, point ExtensionPoints, where string) Prepared {
	switch {
	case res.kind == kindDefault && info.ExtensionPoints&point != 0:
		return Proceed()
	case res.kind == kindDefault:
		return Skip()
	case res.kind == kindReject && res.status == nil:
		return Reject(Error(where + " rejected the pod with a nil status"))
	}
	return res
}

// verdicts collects one filter call's answer: each distinct status is sent
// once (by pointer, then by text) and rejections point at it. Most filters
// return a few statuses built once, so pointers are looked up in a short
// list first; maps are made only for filters that build many.
type verdicts struct {
	statuses   []*Status
	seen       []*Status // pointers met so far, while few
	seenAt     []uint32
	byPtr      map[*Status]uint32
	byText     map[string]uint32
	rejections []uint32 // (index, status) pairs
	last       *Status
	lastAt     uint32
}

const fewStatuses = 8

func (v *verdicts) reject(i uint32, s *Status) {
	if s.Code > CodeUnresolvable {
		s = badCode("filter", s)
	}
	if s != v.last {
		v.last, v.lastAt = s, v.index(s)
	}
	v.rejections = append(v.rejections, i, v.lastAt)
}

func (v *verdicts) index(s *Status) uint32 {
	for j, t := range v.seen {
		if t == s {
			return v.seenAt[j]
		}
	}
	if at, ok := v.byPtr[s]; ok {
		return at
	}
	key := statusKey(s)
	at, ok := v.byText[key]
	if !ok {
		at = uint32(len(v.statuses))
		v.statuses = append(v.statuses, s)
		if v.byText == nil {
			v.byText = map[string]uint32{}
		}
		v.byText[key] = at
	}
	if len(v.seen) < fewStatuses {
		v.seen, v.seenAt = append(v.seen, s), append(v.seenAt, at)
	} else {
		if v.byPtr == nil {
			v.byPtr = map[*Status]uint32{}
		}
		v.byPtr[s] = at
	}
	return at
}

// badCode is the Error status for a status whose code a plugin may not
// return (Skip, or no code at all).
func badCode(where string, s *Status) *Status {
	return Error(where + " returned a status with code " + strconv.Itoa(int(s.Code)) + ", which only the host uses")
}

// failure is st as an error of where: nil when st is nil or a success.
func failure(where string, st *Status) *Status {
	switch {
	case st == nil || st.Code == CodeSuccess:
		return nil
	case st.Code > CodeUnresolvable:
		return badCode(where, st)
	}
	return st
}

func statusKey(s *Status) string {
	return string(rune('0'+s.Code)) + "\x00" + strings.Join(s.Reasons, "\x00")
}

// filter: func(slots: list<u32>) -> verdicts { statuses: list<status>,
// rejections: list<tuple<u32, u32>> }
//
//go:wasmexport sift:predicate/predicate@0.7.0#filter
func exportFilter(p unsafe.Pointer, n uint32) unsafe.Pointer {
	begin()
	defer end()
	slots := u32s(p, n)
	var v verdicts
	if filtering == nil {
		s := Error("filter called without a prepared pod")
		for i := range slots {
			v.reject(uint32(i), s)
		}
	} else {
		// One deferred recover per run of nodes, not per node: a panic
		// marks its node and the run goes on after it.
		for i := 0; i < len(slots); {
			i = filterFrom(&v, slots, i)
		}
	}
	r := retPtr()
	if len(v.statuses) == 0 {
		put32(r, 0, 4)
		put32(r, 4, 0)
	} else {
		words := make([]uint32, 3*len(v.statuses))
		results = append(results, words)
		base := unsafe.Pointer(&words[0])
		for i, s := range v.statuses {
			putStatus(base, uintptr(i)*12, s)
		}
		put32(r, 0, addr(base))
		put32(r, 4, uint32(len(v.statuses)))
	}
	if len(v.rejections) == 0 {
		put32(r, 8, 4)
		put32(r, 12, 0)
	} else {
		results = append(results, v.rejections)
		put32(r, 8, addr(unsafe.Pointer(&v.rejections[0])))
		put32(r, 12, uint32(len(v.rejections)/2))
	}
	return r
}

// filterFrom filters slots[i:] until the end or a panic; it returns where
// to go on.
func filterFrom(v *verdicts, slots []uint32, i int) (next int) {
	defer func() {
		if s := recovered("filter", recover()); s != nil {
			v.reject(uint32(i), s)
			next = i + 1
		}
	}()
	pd := filtering
	for ; i < len(slots); i++ {
		nd := cluster.node(slots[i])
		if nd == nil {
			v.reject(uint32(i), slotError("filter", slots[i]))
			continue
		}
		if s := registered.Filter(pd, nd); s != nil && s.Code != CodeSuccess {
			v.reject(uint32(i), s)
		}
	}
	return i
}

// filter-nominated: func(slot: u32, added: list<nominated-pod>) -> status:
// Filter on the node with the pods nominated to it placed on it (their
// requests, ports and count; the plugin is not told which pods).
//
//go:wasmexport sift:predicate/predicate@0.7.0#filter-nominated
func exportFilterNominated(slot uint32, p unsafe.Pointer, n uint32) unsafe.Pointer {
	begin()
	defer end()
	s := filterNominated(slot, addr(p), n)
	if s == nil {
		s = &Status{}
	}
	r := retPtr()
	putStatus(r, 0, s)
	return r
}

func filterNominated(slot uint32, added, n uint32) (s *Status) {
	if filtering == nil {
		return Error("filter called without a prepared pod")
	}
	nd := cluster.node(slot)
	if nd == nil {
		return slotError("filter", slot)
	}
	with := *nd
	with.Requested.Scalar = make(map[string]int64, len(nd.Requested.Scalar))
	for k, v := range nd.Requested.Scalar {
		with.Requested.Scalar[k] = v
	}
	with.UsedPorts = append([]HostPort(nil), nd.UsedPorts...)
	for i := uint32(0); i < n; i++ {
		e := added + i*112
		q := resources(e)
		with.Requested.MilliCPU += q.MilliCPU
		with.Requested.Memory += q.Memory
		with.Requested.EphemeralStorage += q.EphemeralStorage
		for k, v := range q.Scalar {
			with.Requested.Scalar[k] += v
		}
		with.PodCount++
		with.UsedPorts = append(with.UsedPorts, list(e+40, 20, hostPort)...)
	}
	defer func() {
		if r := recovered("filter", recover()); r != nil {
			s = r
		}
	}()
	if s = registered.Filter(filtering, &with); s != nil && s.Code > CodeUnresolvable {
		s = badCode("filter", s)
	}
	return s
}

// pre-score: func(pod: pod, feasible: list<u32>) -> pre-score-result. Its
// parameters do not fit in 16 flat values, so the host passes a pointer to
// the tuple (the list at 280).
//
//go:wasmexport sift:predicate/scorer@0.7.0#pre-score
func exportPreScore(p unsafe.Pointer) unsafe.Pointer {
	begin()
	defer end()
	scoring = nil
	pd := pod(addr(p))
	feasible := u32s(at(ld32(addr(p)+280)), ld32(addr(p)+284))
	res := preScore(pd, feasible)
	r := retPtr()
	switch res.kind {
	case kindProceed:
		scoring = pd
		put8(r, 0, 0)
	case kindSkip:
		put8(r, 0, 1)
	default:
		put8(r, 0, 2)
		putStatus(r, 4, res.status)
	}
	return r
}

func preScore(pd *Pod, feasible []uint32) (res Prepared) {
	nodes := make([]*Node, len(feasible))
	for i, slot := range feasible {
		if nodes[i] = cluster.node(slot); nodes[i] == nil {
			return Reject(slotError("pre-score", slot))
		}
	}
	defer func() {
		if s := recovered("preScore", recover()); s != nil {
			res = Reject(s)
		}
	}()
	res = settle(registered.PreScore(pd, nodes), Score, "PreScore")
	if res.kind == kindNarrow {
		return Reject(Error("PreScore cannot narrow"))
	}
	return res
}

// putScores stores result<list<s64>, status> at the return area.
func putScores(scores []int64, s *Status) unsafe.Pointer {
	r := retPtr()
	if s != nil {
		put8(r, 0, 1)
		putStatus(r, 4, s)
		return r
	}
	put8(r, 0, 0)
	if len(scores) == 0 {
		put32(r, 4, 8)
		put32(r, 8, 0)
	} else {
		results = append(results, scores)
		put32(r, 4, addr(unsafe.Pointer(&scores[0])))
		put32(r, 8, uint32(len(scores)))
	}
	return r
}

//go:wasmexport sift:predicate/scorer@0.7.0#score
func exportScore(p unsafe.Pointer, n uint32) unsafe.Pointer {
	begin()
	defer end()
	return putScores(score(u32s(p, n)))
}

func score(slots []uint32) (scores []int64, s *Status) {
	if scoring == nil {
		return nil, Error("score called without a pre-scored pod")
	}
	defer func() {
		if r := recovered("score", recover()); r != nil {
			scores, s = nil, r
		}
	}()
	scores = make([]int64, len(slots))
	for i, slot := range slots {
		nd := cluster.node(slot)
		if nd == nil {
			return nil, slotError("score", slot)
		}
		v, st := registered.Score(scoring, nd)
		if st = failure("score", st); st != nil {
			return nil, st
		}
		scores[i] = v
	}
	return scores, nil
}

//go:wasmexport sift:predicate/scorer@0.7.0#normalize-scores
func exportNormalizeScores(p unsafe.Pointer, n uint32) unsafe.Pointer {
	begin()
	defer end()
	scores := make([]int64, n)
	if n > 0 {
		copy(scores, unsafe.Slice((*int64)(p), n))
	}
	return putScores(scores, normalize(scores))
}

func normalize(scores []int64) (s *Status) {
	if scoring == nil {
		return Error("normalize-scores called without a pre-scored pod")
	}
	defer func() {
		if r := recovered("normalizeScores", recover()); r != nil {
			s = r
		}
	}()
	return failure("normalizeScores", registered.NormalizeScores(scoring, scores))
}

// reserve: func(pod: pod, slot: u32) -> result<reservation, status>; the
// parameters come as a pointer to the tuple (the slot at 280).
//
//go:wasmexport sift:predicate/reserver@0.7.0#reserve
func exportReserve(p unsafe.Pointer) unsafe.Pointer {
	begin()
	defer end()
	pd := pod(addr(p))
	annotations, writes, s := reserve(pd, ld32(addr(p)+280))
	r := retPtr()
	if s != nil {
		put8(r, 0, 1)
		putStatus(r, 4, s)
		return r
	}
	put8(r, 0, 0)
	putPairs(r, 4, annotations)
	putPairs(r, 12, writes)
	return r
}

func reserve(pd *Pod, slot uint32) (annotations, writes [][2]string, s *Status) {
	nd := cluster.node(slot)
	if nd == nil {
		return nil, nil, slotError("reserve", slot)
	}
	defer func() {
		if r := recovered("reserve", recover()); r != nil {
			annotations, writes, s = nil, nil, r
		}
	}()
	m, st := registered.Reserve(pd, nd)
	if st = failure("reserve", st); st != nil {
		return nil, nil, st
	}
	ws, st := registered.PreBind(pd, nd)
	if st = failure("preBind", st); st != nil {
		return nil, nil, st
	}
	// Annotations in key order, so the host's answer does not depend on
	// Go's map order.
	for k, v := range m {
		annotations = append(annotations, [2]string{k, v})
	}
	sort.Slice(annotations, func(i, j int) bool { return annotations[i][0] < annotations[j][0] })
	for _, w := range ws {
		writes = append(writes, [2]string{w.Kind, w.Object})
	}
	return annotations, writes, nil
}

//go:wasmimport sift:predicate/log@0.7.0 log
func logImport(level uint32, message string)

// Log writes a line into the host's log, tagged with the plugin's name.
func Log(level Level, message string) { logImport(uint32(level), message) }

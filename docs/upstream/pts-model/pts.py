# Minimal re-implementation of the spec for self-check (not upstream code).
MAXI=2**31-1
def sel_match(sel, labels):
    # sel: None (nil -> Nothing), or dict {"ml":{}, "exists":[...]} ; {} -> everything
    if sel is None: return False
    for k,v in sel.get("ml",{}).items():
        if labels.get(k)!=v: return False
    for k in sel.get("exists",[]):
        if k not in labels: return False
    return True
def sel_empty_requirements(sel):
    return sel is None  # Nothing -> count 0 (post-#141340 semantics)
def na_match(pod,node):
    nl=node.get("labels",{})
    for k,v in pod.get("nodeSelector",{}).items():
        if nl.get(k)!=v: return False
    aff=pod.get("affinity")
    if aff:
        op,k,vals=aff
        if op=="In" and not (k in nl and nl[k] in vals): return False
        if op=="NotIn" and (k in nl and nl[k] in vals): return False
    return True
def taint_ok(pod,node):
    for t in node.get("taints",[]):
        if t["effect"] not in ("NoSchedule","NoExecute"): continue
        if not any(tol==t["key"] for tol in pod.get("tolerations",[])): return False
    return True
def constraints(pod):
    cs=[]
    for c in pod["tsc"]:
        if c.get("when","DoNotSchedule")!="DoNotSchedule": continue
        sel=c.get("sel")
        if c.get("mlk") and sel is not None:
            sel={"ml":dict(sel.get("ml",{})),"exists":list(sel.get("exists",[]))}
            for k in c["mlk"]:
                if k in pod.get("labels",{}): sel["ml"][k]=pod["labels"][k]
        cs.append(dict(maxSkew=c["maxSkew"],key=c["key"],sel=sel,minDomains=c.get("minDomains",1),
                       aff=c.get("aff","Honor"),taint=c.get("taint","Ignore")))
    return cs
def incl(c,pod,node):
    if c["aff"]=="Honor" and not na_match(pod,node): return False
    if c["taint"]=="Honor" and not taint_ok(pod,node): return False
    return True
def prefilter(pod,nodes,pods):
    cs=constraints(pod)
    if not cs: return None
    ns=pod.get("ns","")
    m=[{} for _ in cs]
    for n in nodes:
        nl=n.get("labels",{})
        if not all(c["key"] in nl for c in cs): continue
        for i,c in enumerate(cs):
            if not incl(c,pod,n): continue
            cnt=0
            if not sel_empty_requirements(c["sel"]):
                for p in pods:
                    if p["node"]!=n["name"] or p.get("terminating") or p.get("ns","")!=ns: continue
                    if sel_match(c["sel"],p.get("labels",{})): cnt+=1
            m[i][nl[c["key"]]]=m[i].get(nl[c["key"]],0)+cnt
    return cs,m
def filt(pod,state,node):
    if state is None: return "Success(skip)"
    cs,m=state
    nl=node.get("labels",{})
    for i,c in enumerate(cs):
        if c["key"] not in nl: return "UnschedulableAndUnresolvable"
        mn = 0 if len(m[i])<c["minDomains"] else min(m[i].values(),default=MAXI)
        self1=1 if sel_match(c["sel"],pod.get("labels",{})) else 0
        if m[i].get(nl[c["key"]],0)+self1-mn > c["maxSkew"]: return "Unschedulable"
    return "Success"

import sys; sys.path.insert(0, __import__('os').path.dirname(__file__))
from pts import *; from cases import *
R={"Success":"S","Unschedulable":"U","UnschedulableAndUnresolvable":"UU"}
def lbl(d): return "{"+", ".join(f"{k}={v}" if v!="" else f"{k}=\"\"" for k,v in d.items())+"}" if d else "{}"
def sel(s):
    if s is None: return "nil (matches nothing)"
    parts=[f"{k} Exists" for k in s.get("exists",[])]+[f"{k}={v}" for k,v in s.get("ml",{}).items()]
    return "{"+", ".join(parts)+"}"
def con(c):
    s=f"maxSkew={c['maxSkew']}, key={c['key']}, DoNotSchedule, selector={sel(c['sel'])}"
    if "minDomains" in c: s+=f", minDomains={c['minDomains']}"
    if "aff" in c: s+=f", nodeAffinityPolicy={c['aff']}"
    if "taint" in c: s+=f", nodeTaintsPolicy={c['taint']}"
    if "mlk" in c: s+=f", matchLabelKeys={c['mlk']}"
    return s
out=[]
for i,(suite,name,pod,nodes,pods,want) in enumerate(CASES,1):
    out.append(f"#### F{i:02d}. {suite} — \"{name}\"")
    extra=[]
    if pod.get("nodeSelector"): extra.append("nodeSelector "+lbl(pod["nodeSelector"]))
    if pod.get("affinity"):
        op,k,v=pod["affinity"]; extra.append(f"required nodeAffinity: {k} {op} {v}")
    out.append(f"- pod `p` labels {lbl(pod['labels'])}" + ("; "+"; ".join(extra) if extra else ""))
    for j,c in enumerate(pod["tsc"]): out.append(f"  - c{j}: {con(c)}")
    out.append("- nodes: "+"; ".join(f"`{n['name']}` {lbl(n['labels'])}"+(" taint node.kubernetes.io/unschedulable:NoSchedule" if n.get('taints') else "") for n in nodes))
    if pods:
        out.append("- pods: "+"; ".join(f"`{p['name']}`@{p['node']} {lbl(p['labels'])}"+(f" ns={p['ns']}" if p.get('ns') else "")+(" TERMINATING" if p.get('terminating') else "") for p in pods))
    else: out.append("- pods: none")
    st=prefilter(pod,nodes,pods)
    out.append("- derived counts: "+"; ".join(f"c{j} "+(", ".join(f"{k}:{v}" for k,v in m.items()) or "(no domains)") for j,m in enumerate(st[1])))
    out.append("- expect: "+", ".join(f"{n}={R[w]}" for n,w in want.items()))
    out.append("")
open(__import__('os').path.join(__import__('os').path.dirname(__file__), 'catalog.md'), 'w').write("\n".join(out))
print(len(out))

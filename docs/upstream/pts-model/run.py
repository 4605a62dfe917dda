import sys; sys.path.insert(0, __import__('os').path.dirname(__file__))
from pts import *; from cases import *
bad=0
for suite,name,pod,nodes,pods,want in CASES:
    st=prefilter(pod,nodes,pods)
    got={n["name"]:filt(pod,st,n) for n in nodes}
    m = st[1] if st else None
    ok = got==want
    if not ok: bad+=1
    print(("OK  " if ok else "BAD ")+suite+": "+name, m, "" if ok else (got,want))
print("cases",len(CASES),"bad",bad)

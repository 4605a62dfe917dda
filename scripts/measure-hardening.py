#!/usr/bin/env python3
"""Measures the serve defects of issue 12 on one sift binary (loopback only,
bounded): idle CPU and NodeNames latency after a cluster file change, RSS
after many distinct Nodes-mode node names, and shutdown time with stalled
clients.

    python3 scripts/measure-hardening.py target/release/sift [NODES] [NAMES]

Prints one JSON object. Run it on two builds to compare them."""
import json, os, signal, socket, subprocess, sys, tempfile, time, urllib.request

sift = os.path.abspath(sys.argv[1])
nodes = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
names = int(sys.argv[3]) if len(sys.argv) > 3 else 200_000
work = tempfile.mkdtemp(prefix="sift-measure-")
cluster = os.path.join(work, "cluster.json")
subprocess.run([sift, "bench", "--nodes", str(nodes), "--write-cluster", cluster],
               check=True, stdout=subprocess.DEVNULL)
CLK = os.sysconf("SC_CLK_TCK")

def start(extra=()):
    p = subprocess.Popen([sift, "serve", "--listen", "127.0.0.1:0", "--cluster", cluster, *extra],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    addr = p.stdout.readline().strip().removeprefix("listening on ")
    return p, addr

def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK

def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024

def post(addr, path, body, timeout=60):
    req = urllib.request.Request(f"http://{addr}{path}", data=body,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.read()

pod = {"metadata": {"name": "web", "namespace": "shop"},
       "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]}}
items = json.load(open(cluster))["items"]
node_objects = [o for o in items if o["kind"] == "Node"]
all_names = [o["metadata"]["name"] for o in node_objects]
out = {"binary": sift, "nodes": nodes}

# 1. After one touch of the cluster file: CPU used by an idle server in 5 s,
# and NodeNames latency over every node meanwhile.
p, addr = start()
time.sleep(1)
os.utime(cluster)
time.sleep(1)
before = cpu_seconds(p.pid)
lat = []
body = json.dumps({"Pod": pod, "NodeNames": all_names}).encode()
t0 = time.time()
while time.time() < t0 + 5:
    t = time.time()
    try:
        post(addr, "/filter", body, timeout=30)
        lat.append((time.time() - t) * 1000)
    except OSError:
        lat.append(float("inf"))
    time.sleep(0.05)
used = cpu_seconds(p.pid) - before
lat.sort()
out["after_touch"] = {"seconds": round(time.time() - t0, 1),
                      "cpu_s_incl_requests": round(used, 2), "requests": len(lat),
                      "p50_ms": round(lat[len(lat) // 2], 1), "max_ms": round(lat[-1], 1)}

# 2. RSS after NAMES distinct node names in Nodes-mode requests of 1,000.
template = node_objects[0]
rss0 = rss_mib(p.pid)
t0 = time.time()
sent = 0
for start_at in range(0, names, 1000):
    if time.time() - t0 > 240:
        break
    batch = []
    for i in range(start_at, start_at + 1000):
        n = json.loads(json.dumps(template))
        n["metadata"]["name"] = f"distinct-{i}"
        batch.append(n)
    try:
        post(addr, "/filter", json.dumps({"Pod": pod, "Nodes": {"items": batch}}).encode())
    except OSError:
        pass
    sent += 1000
out["distinct_names"] = {"names": sent, "rss_mib_before": round(rss0, 1),
                         "rss_mib_after": round(rss_mib(p.pid), 1),
                         "seconds": round(time.time() - t0, 1)}
p.send_signal(signal.SIGKILL)
p.wait()

# 3. Shutdown with three stalled clients (default timeouts).
p, addr = start()
host, port = addr.rsplit(":", 1)
stalled = []
for req in (b"POST /filter HTTP/1.1\r\nHost: x\r\n",
            b"POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{",
            b""):
    s = socket.create_connection((host, int(port)))
    s.sendall(req)
    stalled.append(s)
time.sleep(0.5)
t0 = time.time()
p.send_signal(signal.SIGTERM)
try:
    p.wait(timeout=90)
    out["shutdown_s_with_stalled_clients"] = round(time.time() - t0, 1)
except subprocess.TimeoutExpired:
    p.kill()
    out["shutdown_s_with_stalled_clients"] = "over 90"
print(json.dumps(out))

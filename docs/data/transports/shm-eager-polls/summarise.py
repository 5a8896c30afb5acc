"""A/B of run.sh: per point, the median over rounds of eager ÷ base (mean round trip, p50, stream throughput) and each side's figures.

    summarise.py DIR > DIR/summary.txt
"""
import json, glob, sys, statistics, collections
d=sys.argv[1]
if d == "--by-mode":
    d = sys.argv[2]
rows=collections.defaultdict(lambda: collections.defaultdict(list))
n=len(glob.glob(f"{d}/pp-base-*.json"))
for i in range(1,n+1):
  for v in ("base","eager"):
    for kind in ("pp","st"):
      try: doc=json.load(open(f"{d}/{kind}-{v}-{i}.json"))
      except Exception: continue
      for p in doc["points"]:
        s=p["summary"]; key=(kind,p["params"]["size"],p["params"].get("zero_copy","false"))
        if kind=="pp":
          rows[key][v].append((i,s["latency_p50_ns"]["median"],s["latency_mean_ns"]["median"],p["limit"]["limit_value"]))
        else:
          rows[key][v].append((i,s["throughput_bytes_per_s"]["median"],0,p["limit"]["limit_value"]))
for key in sorted(rows):
  b=dict((r[0],r) for r in rows[key]["base"]); e=dict((r[0],r) for r in rows[key]["eager"])
  common=sorted(set(b)&set(e))
  if key[0]=="pp":
    rat=[e[i][2]/b[i][2] for i in common]; rp=[e[i][1]/b[i][1] for i in common]
    print(key, "mean eager/base median %.3f range %.3f-%.3f | p50 ratio median %.3f | base p50 %s eager p50 %s | base mean %.1f eager mean %.1f | floor %.1f" % (statistics.median(rat),min(rat),max(rat),statistics.median(rp), sorted(b[i][1] for i in common), sorted(e[i][1] for i in common), statistics.median(b[i][2] for i in common), statistics.median(e[i][2] for i in common), statistics.median(b[i][3] for i in common)))
  else:
    rat=[e[i][1]/b[i][1] for i in common]
    print(key, "throughput eager/base median %.3f range %.3f-%.3f | base %.2f GB/s eager %.2f GB/s" % (statistics.median(rat),min(rat),max(rat), statistics.median(b[i][1] for i in common)/1e9, statistics.median(e[i][1] for i in common)/1e9))


def by_mode(dirs):
    """The ping-pong rounds where both builds ran in one mode, read from the cache-line
    floor each run paired with its 64 B points: fast when both read under 100 ns,
    slow when both read over 300 ns; per point, eager ÷ base of the mean round trip."""
    out = collections.defaultdict(lambda: collections.defaultdict(list))
    for d in dirs:
        n = len(glob.glob(f"{d}/pp-base-*.json"))
        for i in range(1, n + 1):
            pts = {}
            for v in ("base", "eager"):
                for p in json.load(open(f"{d}/pp-{v}-{i}.json"))["points"]:
                    k = (p["params"]["size"], p["params"].get("zero_copy", "false"))
                    pts[(v, k)] = p
            fb = pts[("base", ("64", "false"))]["limit"]["limit_value"]
            fe = pts[("eager", ("64", "false"))]["limit"]["limit_value"]
            mode = "fast" if fb < 100 and fe < 100 else "slow" if fb > 300 and fe > 300 else None
            if mode is None:
                continue
            for (v, k), p in pts.items():
                if v == "base":
                    e = pts[("eager", k)]["summary"]
                    b = p["summary"]
                    out[mode][k].append((f"{d}:{i}", b["latency_p50_ns"]["median"], e["latency_p50_ns"]["median"],
                                         e["latency_mean_ns"]["median"] / b["latency_mean_ns"]["median"]))
    for mode in ("fast", "slow"):
        for k in sorted(out[mode]):
            rows = out[mode][k]
            r = [x[3] for x in rows]
            print(f"{mode} size {k[0]:>5} zero_copy={k[1]:5s} rounds {len(rows)} ({', '.join(x[0] for x in rows)}): "
                  f"mean eager/base median {statistics.median(r):.2f} range {min(r):.2f}-{max(r):.2f}; "
                  f"p50 base {[int(x[1]) for x in rows]} eager {[int(x[2]) for x in rows]}")


if __name__ == "__main__" and len(sys.argv) > 2 and sys.argv[1] == "--by-mode":
    by_mode(sys.argv[2:])

#!/usr/bin/env bash
# The differential run: replays every scenario on the simulator and
# on a real control plane, and compares, step by step, what gpuops' analyses
# saw after the step: audit lines and exit code, order-check of every node,
# the matrix, every DaemonSet's status fields, and what the GPU Operator
# writes: the nvidia.com/* labels of every node, each DaemonSet's
# nodeSelector, tolerations, update strategy and init container names, the
# pods on every node, the ClusterPolicies' status.state (the `observed` object
# that `gpuops run --report-json` records). Writes the table between the markers
# of docs/FIDELITY.md (the text around them is kept), prints a one-line
# summary last, and exits 1 when a compared step disagrees. Scenarios are
# matched by their report names: each entry of a scenario's `matrix:` is a
# row of its own ("operator-deleted-key[version=v25.3,simulatorOnly=false]").
#
#   scripts/fidelity.sh [WORKDIR]
#
# Environment: GPUOPS (default build/gpuops); E2E_KUBECONFIG (a running
# cluster; default: scripts/cluster-up.sh --gpu-operator WORKDIR/cluster,
# brought down at the end; E2E_GPU_OPERATOR=0: without the operator); E2E_REAL_JSON (reuse the real backend's report of this run instead
# of replaying the scenarios again); FIDELITY_OUT (default docs/FIDELITY.md);
# E2E_TIMEOUT (default 60s). Needs python3 (standard library only).
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
gpuops=${GPUOPS:-$repo/build/gpuops}
work=${1:-$(mktemp -d /tmp/gpuops-fidelity.XXXXXX)}
out=${FIDELITY_OUT:-$repo/docs/FIDELITY.md}
mkdir -p "$work"
[ -x "$gpuops" ] || { echo "fidelity: $gpuops not found (set GPUOPS)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "fidelity: python3 not found" >&2; exit 2; }

"$gpuops" run --report-json "$work/sim.json" "$repo/scenarios" >"$work/sim.out" 2>&1
echo "fidelity: simulator: $(tail -n1 "$work/sim.out")" >&2

real_json=${E2E_REAL_JSON:-}
if [ -z "$real_json" ]; then
  kc=${E2E_KUBECONFIG:-}
  if [ -z "$kc" ]; then
    trap '"$repo/scripts/cluster-down.sh" "$work/cluster" >&2 || true' EXIT
    up_args=()
    [ "${E2E_GPU_OPERATOR:-1}" = 0 ] || up_args=(--gpu-operator)
    "$repo/scripts/cluster-up.sh" "${up_args[@]}" "$work/cluster" >"$work/cluster-up.out" 2>&1 ||
      { cat "$work/cluster-up.out" >&2; exit 1; }
    kc=$work/cluster/kubeconfig
  fi
  real_json=$work/real.json
  "$gpuops" run --backend real --kubeconfig "$kc" --timeout "${E2E_TIMEOUT:-60s}" \
    --report-json "$real_json" "$repo/scenarios" >"$work/real.out" 2>&1
  echo "fidelity: real: $(tail -n1 "$work/real.out")" >&2
fi

python3 - "$work/sim.json" "$real_json" "$out" <<'EOF'
import json, os, sys

sim_path, real_path, out_path = sys.argv[1:4]
sim = {s["name"]: s for s in json.load(open(sim_path))["scenarios"]}
real = {s["name"]: s for s in json.load(open(real_path))["scenarios"]}

def cell(text):
    return text.replace("|", "\\|").replace("\n", "<br>")

def lines(v):
    return "`" + "` / `".join(v) + "`" if v else "(none)"

def diff(a, b):
    """Differences between two `observed` objects, as short sentences."""
    out = []
    if a["audit"] != b["audit"] or a["auditExit"] != b["auditExit"]:
        out.append("audit: sim %s (exit %d), real %s (exit %d)" % (lines(a["audit"]), a["auditExit"], lines(b["audit"]), b["auditExit"]))
    if a["order"] != b["order"]:
        out.append("order-check: sim %s, real %s" % (lines(a["order"]), lines(b["order"])))
    if a["matrix"] != b["matrix"]:
        out.append("matrix: sim %s, real %s" % (lines(a["matrix"]), lines(b["matrix"])))
    for ds in sorted(set(a["daemonsets"]) | set(b["daemonsets"])):
        fa, fb = a["daemonsets"].get(ds), b["daemonsets"].get(ds)
        if fa is None or fb is None:
            out.append("%s: only on %s" % (ds, "real" if fa is None else "sim"))
            continue
        # observedGeneration counts writes of the spec; both start at 1 and
        # no scenario updates a DaemonSet twice differently, so it is compared too.
        fields = ["%s sim %d, real %d" % (k, fa[k], fb.get(k, -1)) for k in sorted(fa) if fa[k] != fb.get(k)]
        if fields:
            out.append("%s: %s" % (ds, ", ".join(fields)))
    # What the GPU Operator writes: nvidia.com/* node labels, the
    # DaemonSets' placement and rollout spec, pods per node, ClusterPolicy
    # status.state. Absent in a report of an older gpuops: not compared.
    def kv(m):
        return ", ".join("%s=%s" % (k, v) for k, v in sorted(m.items())) or "(none)"
    la, lb = a.get("nodeLabels"), b.get("nodeLabels")
    if la is not None and lb is not None:
        for node in sorted(set(la) | set(lb)):
            xa, xb = la.get(node), lb.get(node)
            if xa is None or xb is None:
                out.append("node %s: only on %s" % (node, "real" if xa is None else "sim"))
                continue
            if xa != xb:
                keys = sorted(k for k in set(xa) | set(xb) if xa.get(k) != xb.get(k))
                out.append("node %s labels: %s" % (node, "; ".join(
                    "%s sim %s, real %s" % (k, json.dumps(xa.get(k)), json.dumps(xb.get(k))) for k in keys)))
    sa, sb = a.get("daemonsetSpecs"), b.get("daemonsetSpecs")
    if sa is not None and sb is not None:
        for ds in sorted(set(sa) & set(sb)):
            xa, xb = sa[ds], sb[ds]
            for field in ("nodeSelector", "tolerations", "updateStrategy", "initContainers"):
                if xa.get(field) != xb.get(field):
                    show = kv if field == "nodeSelector" else (lambda v: lines(v) if isinstance(v, list) else str(v))
                    out.append("%s %s: sim %s, real %s" % (ds, field, show(xa.get(field)), show(xb.get(field))))
    pa, pb = a.get("pods"), b.get("pods")
    if pa is not None and pb is not None:
        for node in sorted(set(pa) & set(pb)):
            if pa[node] != pb[node]:
                out.append("pods on %s: sim %s, real %s" % (node, lines(pa[node]), lines(pb[node])))
    ca, cb = a.get("clusterPolicies"), b.get("clusterPolicies")
    if ca is not None and cb is not None and ca != cb:
        out.append("ClusterPolicy status.state: sim %s, real %s" % (kv(ca), kv(cb)))
    return out

rows = []
counts = {"agree": 0, "differ": 0, "simulator only": 0, "not compared": 0}
for name in sim:
    s = sim[name]
    r = real.get(name)
    if r is None:
        rows.append((name, "", "not run on the real cluster"))
        counts["not compared"] += 1
        continue
    if len(r["steps"]) == 1 and r["steps"][0]["title"] == "(whole scenario)":
        reason = r["steps"][0].get("skipReason", "")
        if reason.startswith("simulator only"):
            rows.append((name, "(all %d steps)" % len(s["steps"]), reason))
            counts["simulator only"] += len(s["steps"])
        else:
            rows.append((name, "(all %d steps)" % len(s["steps"]), "not compared: " + reason))
            counts["not compared"] += len(s["steps"])
        continue
    if r.get("error"):
        rows.append((name, "", "real: set-up failed: " + r["error"]))
    for i, (ss, rs) in enumerate(zip(s["steps"], r["steps"])):
        step = "%d. %s (line %d)" % (i + 1, ss["title"], ss["line"])
        if rs["status"] == "skipped":
            reason = rs.get("skipReason", "")
            if reason.startswith("simulator only"):
                rows.append((name, step, reason))
                counts["simulator only"] += 1
            else:
                rows.append((name, step, "not compared: " + reason))
                counts["not compared"] += 1
            continue
        a, b = ss.get("observed"), rs.get("observed")
        if a is None or b is None:
            rows.append((name, step, "not compared: no observation on %s" % ("sim" if a is None else "real")))
            counts["not compared"] += 1
            continue
        d = diff(a, b)
        note = ""
        if rs["status"] == "failed":
            note = " (the step's expectations fail on real)"
        if ss["status"] == "failed":
            note += " (the step's expectations fail on the simulator)"
        if d:
            rows.append((name, step, "**differs**: " + "; ".join(d) + note))
            counts["differ"] += 1
        else:
            rows.append((name, step, "agree" + note))
            counts["agree"] += 1

summary = "%d steps agree, %d differ, %d simulator only, %d not compared (%d scenarios)" % (
    counts["agree"], counts["differ"], counts["simulator only"], counts["not compared"], len(sim))
table = ["<!-- fidelity:begin (written by scripts/fidelity.sh; edit outside the markers) -->", "",
         "Summary: " + summary + ".", "",
         "| scenario | step | result |", "|---|---|---|"]
for n, st, res in rows:
    table.append("| %s | %s | %s |" % (cell(n), cell(st), cell(res)))
table += ["", "<!-- fidelity:end -->"]
block = "\n".join(table)

if os.path.exists(out_path):
    text = open(out_path).read()
    b, e = text.find("<!-- fidelity:begin"), text.find("<!-- fidelity:end -->")
    if b >= 0 and e > b:
        text = text[:b] + block + text[e + len("<!-- fidelity:end -->"):]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
else:
    text = "# Fidelity: the simulator against upstream\n\n" + block + "\n"
open(out_path, "w").write(text)
print(summary)
sys.exit(1 if counts["differ"] else 0)
EOF

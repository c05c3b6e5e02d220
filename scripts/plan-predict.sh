#!/usr/bin/env bash
# Does `gpuops plan` predict what a real cluster does? (docs/PLAN.md). Against a
# running cluster (the e2e control plane: upstream kube-apiserver,
# controller-manager and scheduler, KWOK as every node's kubelet), it sets
# up a lab-like state once (namespace gpu-operator, four KWOK nodes with the
# lab's deploy labels, the lab's five operand DaemonSets of manifests/), waits
# until it is settled, then N times:
#   - draws a change at random from SEED over the current state: a deploy
#     label set "true"/"false" or removed, cordon/uncordon, a NoExecute taint
#     added or removed, a NoSchedule taint (tolerated by the operands or not)
#     added or removed, kubernetes.io/arch changed (which the node lifecycle
#     controller copies to beta.kubernetes.io/arch), an operand DaemonSet
#     re-applied with another image or
#     with a toleration more (`apply -f`, a rolling update), and once a node
#     deleted and, a few changes later, re-added (`apply -f` of its Node);
#   - runs `gpuops plan --kubeconfig KC -o json <change>` (only reads);
#   - makes the same change with kubectl (same words);
#   - waits until the cluster is settled (the rules of real/api_cluster.cpp's
#     settle_pending, stricter: every node Ready and its cordon taint in
#     place, every pod Running and Ready on an existing node, on every node
#     that should run a DaemonSet's pod one pod of its current template, none
#     where it should not continue running, every status.observedGeneration
#     current, and nothing changing for PLAN_PREDICT_QUIET seconds);
#   - compares what the cluster shows with what plan predicted: the pods by
#     (DaemonSet, node) (kept ones with the same name, created and replaced
#     ones new), every label of every node, the node set, the matrix after
#     (`gpuops matrix --kubeconfig`), plan's exit code (1 iff something
#     changed), and that plan's view before the change (its matrix before,
#     the labels' old values) is the cluster's.
# Prints `PASS i <change>` or `FAIL i <change>: <differences>` per change and
# last `N predictions, K exact`; exits 1 when a prediction differs, 2 on bad
# usage or a cluster that is not empty, 3 when the cluster fails (set-up,
# settling, clean-up). Deletes what it created (namespace, nodes) at the end.
#
#   scripts/plan-predict.sh KUBECONFIG [SEED] [N]      (SEED default 21, N default 30)
#
# The cluster must have no nodes and no namespace gpu-operator (it creates and
# deletes its own; as the scenario runner, it refuses to touch others').
# Environment: GPUOPS (default build/gpuops), KUBECTL (default
# $GPUOPS_CLUSTER_BIN/kubectl, else kubectl on PATH), PLAN_PREDICT_DIR (work
# directory: plans, states, kubectl output; default a new one under /tmp,
# deleted when every prediction was exact), PLAN_PREDICT_QUIET (seconds
# without change that count as settled, default 2), PLAN_PREDICT_TIMEOUT
# (seconds to settle, default 150: pods on a deleted node wait for pod GC's
# 40 s quarantine). Needs python3 (standard library only).
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
case ${1:-} in
  -h|--help) sed -n '2,47p' "$0"; exit 0 ;;
  "") echo "usage: $0 KUBECONFIG [SEED] [N]" >&2; exit 2 ;;
esac
kc=$1 seed=${2:-21} n=${3:-30}
[ -r "$kc" ] || { echo "plan-predict: cannot read kubeconfig $kc" >&2; exit 2; }
[[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] || { echo "plan-predict: N must be a positive integer, not $n" >&2; exit 2; }
gpuops=${GPUOPS:-$repo/build/gpuops}
[ -x "$gpuops" ] || { echo "plan-predict: $gpuops not found (build it or set GPUOPS)" >&2; exit 2; }
kubectl=${KUBECTL:-}
if [ -z "$kubectl" ]; then
  if [ -n "${GPUOPS_CLUSTER_BIN:-}" ] && [ -x "$GPUOPS_CLUSTER_BIN/kubectl" ]; then kubectl=$GPUOPS_CLUSTER_BIN/kubectl
  else kubectl=$(command -v kubectl) || { echo "plan-predict: no kubectl (set KUBECTL)" >&2; exit 2; }
  fi
fi
command -v python3 >/dev/null || { echo "plan-predict: python3 not found" >&2; exit 2; }
ns=gpu-operator
work=${PLAN_PREDICT_DIR:-$(mktemp -d /tmp/gpuops-plan-predict.XXXXXX)}
mkdir -p "$work"
helper=$work/predict.py
export PP_KC=$kc PP_KUBECTL=$kubectl PP_GPUOPS=$gpuops PP_NS=$ns PP_REPO=$repo PP_WORK=$work
export PP_QUIET=${PLAN_PREDICT_QUIET:-2} PP_TIMEOUT=${PLAN_PREDICT_TIMEOUT:-150}

cat >"$helper" <<'EOF'
# The helper of scripts/plan-predict.sh: set-up files, settling, reading the
# cluster, drawing a change, comparing. Standard library only.
import json, os, random, subprocess, sys, time

KC, KUBECTL, GPUOPS, NS = os.environ["PP_KC"], os.environ["PP_KUBECTL"], os.environ["PP_GPUOPS"], os.environ["PP_NS"]
REPO, WORK = os.environ["PP_REPO"], os.environ["PP_WORK"]

DEPLOY = ["nvidia.com/gpu.deploy." + o for o in
          ["driver", "container-toolkit", "device-plugin", "gpu-feature-discovery", "dcgm-exporter"]]
MANIFESTS = ["driver-ds.yaml", "toolkit-ds.yaml", "device-plugin-ds.yaml", "gfd-ds.yaml", "dcgm-ds.yaml"]
MAINTENANCE = "gpuops.test/maintenance"  # NoExecute, tolerated by no operand (until an apply adds it)
NOSCHEDULE = {"gpuops.test/dedicated": "ml",  # NoSchedule, untolerated
              "nvidia.com/gpu": "present"}    # NoSchedule, tolerated by every operand manifest


def kubectl(*args):
    r = subprocess.run([KUBECTL, "--kubeconfig", KC, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("kubectl " + " ".join(args) + ": " + r.stderr.strip())
    return r.stdout


def node_manifest(name, gpu, deploy):
    labels = {"type": "kwok", "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
              "kubernetes.io/arch": "amd64"}
    if gpu:
        labels.update({"feature.node.kubernetes.io/pci-10de.present": "true", "nvidia.com/gpu.present": "true"})
    for key, value in deploy.items():
        labels["nvidia.com/gpu.deploy." + key] = value
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "annotations": {"kwok.x-k8s.io/node": "fake"}, "labels": labels}}


def setup():
    """The lab-like state: nodes (LAB.md step 1 and one more GPU node) and the five DaemonSets, as JSON."""
    every = {k: "true" for k in ["driver", "container-toolkit", "device-plugin", "gpu-feature-discovery",
                                 "dcgm-exporter"]}
    nodes = [node_manifest("lab-node-0", True, every),
             node_manifest("lab-node-1", True, dict(every, driver="false")),
             node_manifest("lab-node-2", False, {}),
             node_manifest("lab-node-3", True, {"driver": "true", "container-toolkit": "true",
                                                "device-plugin": "true", "gpu-feature-discovery": "false"})]
    os.makedirs(WORK + "/nodes", exist_ok=True)
    for node in nodes:
        json.dump(node, open(WORK + "/nodes/" + node["metadata"]["name"] + ".json", "w"), indent=1)
    json.dump({"apiVersion": "v1", "kind": "List", "items": nodes}, open(WORK + "/nodes.json", "w"), indent=1)
    os.makedirs(WORK + "/ds", exist_ok=True)
    base = {}
    for m in MANIFESTS:
        ds = json.loads(kubectl("create", "--dry-run=client", "-o", "json", "-f", REPO + "/manifests/" + m))
        ds = {"apiVersion": ds["apiVersion"], "kind": ds["kind"],
              "metadata": {k: ds["metadata"][k] for k in ("name", "namespace", "labels") if k in ds["metadata"]},
              "spec": ds["spec"]}
        base[ds["metadata"]["name"]] = ds
        json.dump(ds, open(WORK + "/ds/" + ds["metadata"]["name"] + ".json", "w"), indent=1)
    json.dump(base, open(WORK + "/ds-base.json", "w"))
    print(" ".join(n["metadata"]["name"] for n in nodes))


def read_cluster():
    """Nodes, and the namespace's DaemonSets and pods: one kubectl call (-n does not restrict nodes)."""
    items = json.loads(kubectl("get", "nodes,daemonsets,pods", "-n", NS, "-o", "json"))["items"]
    return [[o for o in items if o["kind"] == kind] for kind in ("Node", "DaemonSet", "Pod")]


def controller(pod):
    for ref in pod["metadata"].get("ownerReferences", []):
        if ref.get("controller"):
            return ref["kind"], ref["name"]
    return "", ""


def condition(obj, kind):
    for c in obj.get("status", {}).get("conditions", []) or []:
        if c.get("type") == kind:
            return c.get("status")
    return None


def taints(node):
    return sorted((t["key"], t.get("value", ""), t["effect"]) for t in node.get("spec", {}).get("taints", []) or [])


# The tolerations the DaemonSet controller adds to every daemon pod
# (AddOrUpdateDaemonPodTolerations, pkg/controller/daemon/util); the
# network-unavailable one only with hostNetwork.
DAEMON_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]


def tolerates(tolerations, taint):
    key, value, effect = taint
    for t in tolerations:
        if t.get("effect") and t["effect"] != effect:
            continue
        if t.get("key") and t["key"] != key:
            continue
        if t.get("operator", "Equal") == "Exists" or t.get("value", "") == value:
            return True
    return False


def should_run(ds, node):
    """NodeShouldRunDaemonPod (pkg/controller/daemon) for what the lab's DaemonSets use: a nodeSelector
    and tolerations. (should_run, should_continue_running), or None for a template it does not model."""
    spec = ds["spec"]["template"]["spec"]
    if spec.get("affinity") or spec.get("nodeName"):
        return None
    labels = node["metadata"].get("labels", {})
    if any(labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return False, False
    tolerations = (spec.get("tolerations") or []) + DAEMON_TOLERATIONS
    if spec.get("hostNetwork"):
        tolerations.append({"key": "node.kubernetes.io/network-unavailable", "operator": "Exists", "effect": "NoSchedule"})
    untolerated = [t for t in taints(node) if t[2] in ("NoSchedule", "NoExecute") and not tolerates(tolerations, t)]
    if untolerated:
        return False, not any(t[2] == "NoExecute" for t in untolerated)
    return True, True


def pending(nodes, dss, pods):
    """What is still about to happen: real/api_cluster.cpp's settle_pending, stricter (every node Ready,
    every pod Running and Ready, a rollout complete). Not the DaemonSet status counts: v1.37's controller
    leaves them stale when a node stops fitting without losing its pod (syncNodeUpdate enqueues nothing
    for a NoSchedule taint), so they are no sign of work left."""
    out = []
    by_name = {n["metadata"]["name"]: n for n in nodes}
    for n in nodes:
        name, ready = n["metadata"]["name"], condition(n, "Ready")
        if ready != "True":
            out.append(f"node {name}: Ready is {ready}")  # KWOK has not initialized it yet
        keys = {t[0] for t in taints(n)}
        if ready == "True" and keys & {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}:
            out.append(f"node {name}: not-ready/unreachable taint while Ready is True")
        if bool(n["spec"].get("unschedulable")) != ("node.kubernetes.io/unschedulable" in keys):
            out.append(f"node {name}: the unschedulable taint does not follow spec.unschedulable yet")
    for p in pods:
        name, node = p["metadata"]["name"], p["spec"].get("nodeName", "")
        if p["metadata"].get("deletionTimestamp"):
            out.append(f"pod {name}: terminating")
        elif not node:
            out.append(f"pod {name}: not bound")
        elif node not in by_name:
            out.append(f"pod {name}: on deleted node {node} (pod GC)")
        elif p.get("status", {}).get("phase") != "Running" or condition(p, "Ready") != "True":
            out.append(f"pod {name}: {p.get('status', {}).get('phase', 'Pending')}, Ready {condition(p, 'Ready')}")
    for d in dss:
        name = d["metadata"]["name"]
        if d.get("status", {}).get("observedGeneration", 0) < d["metadata"].get("generation", 0):
            out.append(f"DaemonSet {name}: status.observedGeneration behind")
        generation = d["metadata"].get("annotations", {}).get("deprecated.daemonset.template.generation")
        mine = {}
        for p in pods:
            if controller(p) == ("DaemonSet", name) and not p["metadata"].get("deletionTimestamp"):
                mine.setdefault(p["spec"].get("nodeName", ""), []).append(p)
        for node_name, node in by_name.items():
            fit = should_run(d, node)
            if fit is None:
                break
            here = mine.get(node_name, [])
            if len(here) > 1:
                out.append(f"DaemonSet {name}: {len(here)} pods on node {node_name}")
            if fit[0] and not here:
                out.append(f"DaemonSet {name}: no pod on node {node_name}")
            if not fit[1] and here:
                out.append(f"DaemonSet {name}: pod {here[0]['metadata']['name']} remains on node {node_name}")
            # A rolling update (the default strategy) replaces every pod that fits.
            if fit[0] and generation and d["spec"].get("updateStrategy", {}).get("type", "RollingUpdate") == "RollingUpdate":
                for p in here:
                    if p["metadata"].get("labels", {}).get("pod-template-generation") != generation:
                        out.append(f"DaemonSet {name}: pod {p['metadata']['name']} not updated yet")
    return out


def fingerprint(nodes, dss, pods):
    return json.dumps([
        sorted((n["metadata"]["name"], sorted(n["metadata"].get("labels", {}).items()), taints(n),
                bool(n["spec"].get("unschedulable")), condition(n, "Ready")) for n in nodes),
        sorted((d["metadata"]["name"], d["metadata"].get("generation"),
                sorted((k, v) for k, v in d.get("status", {}).items() if k != "conditions")) for d in dss),
        sorted((p["metadata"]["uid"], p["spec"].get("nodeName", ""), p.get("status", {}).get("phase", ""),
                condition(p, "Ready"), bool(p["metadata"].get("deletionTimestamp"))) for p in pods)])


def settle():
    quiet, timeout = float(os.environ["PP_QUIET"]), float(os.environ["PP_TIMEOUT"])
    start = time.monotonic()
    last, since, left = None, start, []
    while True:
        try:
            nodes, dss, pods = read_cluster()
        except RuntimeError as e:
            print(str(e))
            return 3
        now = time.monotonic()
        fp = fingerprint(nodes, dss, pods)
        if fp != last:
            last, since = fp, now
        left = pending(nodes, dss, pods)
        if not left and now - since >= quiet:
            print(f"{now - start:.1f}")
            return 0
        if now - start > timeout:
            print("did not settle within %ds: %s" % (timeout, "; ".join(left[:5]) or "still changing"))
            return 3
        time.sleep(0.25)


def capture(out):
    """The cluster as compared: nodes, pods by (DaemonSet, node), gpuops matrix."""
    nodes, dss, pods = read_cluster()
    state = {"nodes": {}, "pods": [], "matrix": {}}
    for n in nodes:
        state["nodes"][n["metadata"]["name"]] = {"labels": n["metadata"].get("labels", {}), "taints": taints(n),
                                                 "unschedulable": bool(n["spec"].get("unschedulable"))}
    for p in pods:
        kind, owner = controller(p)
        state["pods"].append({"name": p["metadata"]["name"], "uid": p["metadata"]["uid"],
                              "node": p["spec"].get("nodeName", ""), "daemonset": owner if kind == "DaemonSet" else ""})
    r = subprocess.run([GPUOPS, "matrix", "--kubeconfig", KC], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("gpuops matrix: exit %d: %s" % (r.returncode, r.stderr.strip()))
    for line in r.stdout.splitlines():
        words = line.split()
        if words and not words[0].startswith("TOTAL_PODS="):
            state["matrix"][words[0]] = dict(w.split("=", 1) for w in words[1:])
    json.dump(state, open(out, "w"), indent=1, sort_keys=True)


def draw(i, n, seed, state_path, out):
    """Change i (1..n), from the seed and the cluster's state; writes its words (one a line) to out."""
    state = json.load(open(state_path))
    book_path = WORK + "/draw.json"
    if os.path.exists(book_path):
        book = json.load(open(book_path))
    else:
        plan_rng = random.Random(f"{seed}/schedule")
        book = {"deleted": None, "delete_at": plan_rng.randint(max(1, n // 4), max(1, n // 2)) if n >= 6 else 0,
                "gap": plan_rng.randint(2, 4), "ds": {}}
    rng = random.Random(f"{seed}/{i}")
    nodes = sorted(state["nodes"])
    if book["deleted"] and (i >= book["deleted"]["readd_at"] or i == n):
        name = book["deleted"]["node"]
        words = ["apply", "-f", WORK + "/nodes/" + name + ".json"]
        book["deleted"] = None
    elif i == book["delete_at"] and not book["deleted"] and len(nodes) > 1:
        name = rng.choice(nodes)
        words = ["delete", "node", name]
        book["deleted"] = {"node": name, "readd_at": i + book["gap"]}
    else:
        kind = rng.choices(["label", "cordon", "noexecute", "noschedule", "apply", "arch"], [50, 12, 14, 10, 8, 3])[0]
        node = rng.choice(nodes)
        labels = state["nodes"][node]["labels"]
        keys = {t[0] for t in state["nodes"][node]["taints"]}
        if kind == "label":
            key, r = rng.choice(DEPLOY), rng.random()
            if r < 0.2 and key in labels:
                words = ["label", "node", node, key + "-"]
            else:
                words = ["label", "node", node, key + "=" + ("true" if r < 0.6 else "false"), "--overwrite"]
        elif kind == "arch":  # no DaemonSet selects it; the node lifecycle controller copies it to the beta label
            words = ["label", "node", node, "kubernetes.io/arch=" + ("amd64" if labels.get("kubernetes.io/arch") == "arm64" else "arm64"),
                     "--overwrite"]
        elif kind == "cordon":
            words = ["uncordon" if state["nodes"][node]["unschedulable"] else "cordon", node]
        elif kind == "noexecute":
            words = (["taint", "node", node, MAINTENANCE + "-"] if MAINTENANCE in keys
                     else ["taint", "node", node, MAINTENANCE + "=true:NoExecute"])
        elif kind == "noschedule":
            key = rng.choice(sorted(NOSCHEDULE))
            words = (["taint", "node", node, key + ":NoSchedule-"] if key in keys
                     else ["taint", "node", node, key + "=" + NOSCHEDULE[key] + ":NoSchedule"])
        else:  # re-apply one operand's DaemonSet: another image, or one toleration more or less
            base = json.load(open(WORK + "/ds-base.json"))
            name = rng.choice(sorted(base))
            v = book["ds"].get(name, {"image": 0, "tolerate": False})
            if rng.random() < 0.5:
                v["image"] += 1
            else:
                v["tolerate"] = not v["tolerate"]
            book["ds"][name] = v
            ds = json.loads(json.dumps(base[name]))
            pod = ds["spec"]["template"]["spec"]
            if v["image"]:
                pod["containers"][0]["image"] += "-r%d" % v["image"]
            if v["tolerate"]:
                pod.setdefault("tolerations", []).append({"key": MAINTENANCE, "operator": "Exists", "effect": "NoExecute"})
            path = WORK + "/change-%d-%s.json" % (i, name)
            json.dump(ds, open(path, "w"), indent=1)
            words = ["apply", "-f", path]
    json.dump(book, open(book_path, "w"))
    with open(out, "w") as f:
        f.write("\n".join(words) + "\n")


def pods_by_key(state):
    out = {}
    for p in state["pods"]:
        out.setdefault((p["daemonset"], p["node"]), []).append(p["name"])
    return out


def compare(before_path, plan_path, plan_rc, after_path, roster_path):
    """The differences between what plan predicted and what the cluster shows; none: exact."""
    before, after = json.load(open(before_path)), json.load(open(after_path))
    column = {o["operand"]: o["column"] for o in json.load(open(roster_path))["operands"]}
    diffs = []
    if plan_rc not in (0, 1):
        return ["plan exit %d" % plan_rc]
    plan = json.load(open(plan_path))

    def matrix_of(m):
        return {node: {column.get(op, op): cell for op, cell in cells.items()} for node, cells in m.items()}

    # plan's view before the change is the cluster's (the import, settled, is a fixed point).
    p, c = matrix_of(plan["matrix"]["before"]), before["matrix"]
    for node in sorted(set(p) | set(c)):
        if p.get(node) != c.get(node):
            diffs.append("matrix before %s: plan %s, cluster %s" % (node, p.get(node), c.get(node)))
    # Nodes.
    want_nodes = (set(before["nodes"]) - set(plan["nodesRemoved"])) | set(plan["nodesAdded"])
    if want_nodes != set(after["nodes"]):
        diffs.append("nodes: predicted %s, cluster %s" % (sorted(want_nodes), sorted(after["nodes"])))
    # Labels: the cluster's before, with plan's changes (an added node's: all its labels, from absent).
    want_labels = {n: dict(v["labels"]) for n, v in before["nodes"].items() if n in want_nodes}
    for name in plan["nodesAdded"]:
        want_labels[name] = {}
    for l in plan["labels"]:
        old = before["nodes"].get(l["node"], {}).get("labels", {}).get(l["key"])
        if old != l["before"]:
            diffs.append("label %s on %s before: plan %s, cluster %s" % (l["key"], l["node"], l["before"], old))
        if l["node"] not in want_labels:
            diffs.append("label %s changed on %s, a node predicted gone" % (l["key"], l["node"]))
            continue
        if l["after"] is None:
            want_labels[l["node"]].pop(l["key"], None)
        else:
            want_labels[l["node"]][l["key"]] = l["after"]
    for node in sorted(set(want_labels) & set(after["nodes"])):
        got = after["nodes"][node]["labels"]
        for key in sorted(set(got) | set(want_labels[node])):
            if got.get(key) != want_labels[node].get(key):
                diffs.append("label %s on %s: predicted %s, cluster %s" % (key, node, want_labels[node].get(key), got.get(key)))
    # Pods by (DaemonSet, node): kept ones keep their name, created or replaced ones are new.
    was, now = pods_by_key(before), pods_by_key(after)
    want = {k: ("kept", v) for k, v in was.items()}
    new = {}
    for p in plan["pods"]:
        k = (p["daemonset"], p["node"])
        if p["kind"] == "deleted":
            if k not in want:
                diffs.append("plan deletes a pod of %s on %s, the cluster had none" % k)
            want.pop(k, None)
        else:
            if p["kind"] == "replaced" and k not in was:
                diffs.append("plan replaces a pod of %s on %s, the cluster had none" % k)
            if p["kind"] == "created" and k in was and k not in new:
                diffs.append("plan creates a pod of %s on %s, the cluster had one" % k)
            new[k] = new.get(k, 0) + 1
    for k, count in new.items():
        want[k] = ("new", count)
    everyone_before = {name for names in was.values() for name in names}
    for k in sorted(set(want) | set(now)):
        ds, node = k
        ds = ds or "(no DaemonSet)"
        if k not in now:
            diffs.append("pod of %s on %s: predicted, the cluster has none" % (ds, node))
        elif k not in want:
            diffs.append("pod of %s on %s: the cluster has %s, plan predicted none" % (ds, node, ",".join(now[k])))
        elif want[k][0] == "kept" and sorted(now[k]) != sorted(want[k][1]):
            diffs.append("pod of %s on %s: predicted kept (%s), the cluster has %s" % (ds, node, ",".join(want[k][1]), ",".join(now[k])))
        elif want[k][0] == "new" and (len(now[k]) != want[k][1] or set(now[k]) & everyone_before):
            diffs.append("pod of %s on %s: predicted %d new, the cluster has %s" % (ds, node, want[k][1], ",".join(now[k])))
    # The matrix after.
    if matrix_of(plan["matrix"]["after"]) != after["matrix"]:
        p, c = matrix_of(plan["matrix"]["after"]), after["matrix"]
        for node in sorted(set(p) | set(c)):
            if p.get(node) != c.get(node):
                diffs.append("matrix %s: predicted %s, cluster %s" % (node, p.get(node), c.get(node)))
    # The exit code: 1 when something changes (pods, labels, nodes).
    changed = (set(before["nodes"]) != set(after["nodes"]) or
               any(before["nodes"][x]["labels"] != after["nodes"][x]["labels"]
                   for x in set(before["nodes"]) & set(after["nodes"])) or
               {k: sorted(v) for k, v in was.items()} != {k: sorted(v) for k, v in now.items()})
    if plan_rc != (1 if changed else 0):
        diffs.append("plan exit %d, but the cluster %s" % (plan_rc, "changed" if changed else "did not change"))
    return diffs


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    try:
        if cmd == "setup":
            setup()
        elif cmd == "settle":
            sys.exit(settle())
        elif cmd == "capture":
            capture(args[0])
        elif cmd == "draw":
            draw(int(args[0]), int(args[1]), args[2], args[3], args[4])
        elif cmd == "compare":
            d = compare(args[0], args[1], int(args[2]), args[3], args[4])
            print("; ".join(d))
            sys.exit(1 if d else 0)
    except RuntimeError as e:
        print(str(e), file=sys.stderr)
        sys.exit(3)
EOF

k() { "$kubectl" --kubeconfig "$kc" "$@"; }
py() { python3 "$helper" "$@"; }
say() { echo "plan-predict: $*" >&2; }
t_all=$(date +%s.%N)
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# An empty cluster only: the state is this script's, and so is the clean-up.
if ! existing=$(k get nodes -o name 2>"$work/refuse.err"); then
  say "cannot read the cluster: $(cat "$work/refuse.err")"; exit 3
fi
if [ -n "$existing" ]; then
  say "the cluster already has nodes ($(echo $existing | tr '\n' ' ')): run it on an empty cluster (it creates and deletes its own)"; exit 2
fi
if k get namespace "$ns" >/dev/null 2>&1; then
  say "namespace $ns exists already: run it on an empty cluster (it creates and deletes its own)"; exit 2
fi

created_nodes=""
clean_up() {
  local rc=$? ok=1
  k delete namespace "$ns" --ignore-not-found --wait=true --timeout=120s >"$work/cleanup.out" 2>&1 || ok=0
  if [ -n "$created_nodes" ]; then
    # shellcheck disable=SC2086
    k delete node $created_nodes --ignore-not-found --wait=true --timeout=60s >>"$work/cleanup.out" 2>&1 || ok=0
  fi
  if [ "$ok" = 1 ] && [ -z "$(k get nodes -o name 2>/dev/null)" ] && ! k get namespace "$ns" >/dev/null 2>&1; then
    say "cleaned up (namespace $ns and nodes $created_nodes deleted)"
  else
    say "clean-up failed: $(cat "$work/cleanup.out")"
    [ "$rc" -ne 0 ] || rc=3
  fi
  if [ "$rc" -eq 0 ] && [ -z "${PLAN_PREDICT_DIR:-}" ]; then rm -rf "$work"; else say "work directory kept: $work"; fi
  exit "$rc"
}
trap clean_up EXIT
trap 'exit 130' INT TERM

# --- the state, once -------------------------------------------------------
"$gpuops" roster -o json >"$work/roster.json" || { say "gpuops roster failed"; exit 3; }
if ! created_nodes=$(py setup); then say "set-up files: failed"; exit 3; fi
if ! k create namespace "$ns" >"$work/setup.out" 2>&1 || ! k apply -f "$work/nodes.json" >>"$work/setup.out" 2>&1 ||
   ! k apply -f "$work/ds" >>"$work/setup.out" 2>&1; then
  say "set-up failed: $(cat "$work/setup.out")"; exit 3
fi
if ! s=$(py settle); then say "the set-up $s"; exit 3; fi
py capture "$work/state-0.json" || exit 3
say "set up: namespace $ns, nodes $created_nodes, 5 DaemonSets, settled in ${s}s; seed $seed, $n changes"

# --- the changes -------------------------------------------------------------
exact=0 done_=0
for i in $(seq 1 "$n"); do
  py draw "$i" "$n" "$seed" "$work/state-$((i - 1)).json" "$work/change-$i.words" || exit 3
  mapfile -t change <"$work/change-$i.words"
  shown="${change[*]}"
  shown=${shown//$work\//}   # apply -f WORK/x.json shown as apply -f x.json
  "$gpuops" plan --kubeconfig "$kc" -o json "${change[@]}" >"$work/plan-$i.json" 2>"$work/plan-$i.err"
  prc=$?
  if ! k "${change[@]}" >"$work/kubectl-$i.out" 2>&1; then
    echo "FAIL $i $shown: kubectl refused the change: $(tr '\n' ' ' <"$work/kubectl-$i.out")"
    done_=$((done_ + 1)); break
  fi
  if ! s=$(py settle); then
    echo "FAIL $i $shown: the cluster $s"
    done_=$((done_ + 1)); break
  fi
  echo "$i $s" >>"$work/settle-times"
  py capture "$work/state-$i.json" || exit 3
  done_=$((done_ + 1))
  if d=$(py compare "$work/state-$((i - 1)).json" "$work/plan-$i.json" "$prc" "$work/state-$i.json" \
        "$work/roster.json"); then
    exact=$((exact + 1))
    echo "PASS $i $shown"
  else
    [ "$prc" -le 1 ] || d="$d: $(head -c 300 "$work/plan-$i.err")"
    echo "FAIL $i $shown: $d"
  fi
done
slowest=$(sort -k2 -n -r "$work/settle-times" 2>/dev/null | head -n1 | awk '{ printf "%ss after change %s", $2, $1 }')
say "seed $seed: $done_ of $n changes made, $exact predictions exact, $(since "$t_all")s wall (longest settling: ${slowest:-none})"
echo "$done_ predictions, $exact exact"
if [ "$done_" -ne "$n" ]; then exit 3; fi
[ "$exact" -eq "$n" ] || exit 1
exit 0

#!/usr/bin/env python3
# The helper of scripts/plan-predict.sh: set-up files, settling, reading the
# cluster, drawing a change, planning it, making it, comparing. Standard
# library only. Two modes (PP_MODE): "lab", the lab's five DaemonSets of
# manifests/ on lab-like nodes; "operator", the real GPU Operator running
# beside the cluster (scripts/cluster-up.sh --gpu-operator) with a
# ClusterPolicy at its defaults on NFD-labelled nodes, its DaemonSets and
# node labels its own.
import json, os, random, subprocess, sys, time

KC, KUBECTL, GPUOPS, NS = os.environ["PP_KC"], os.environ["PP_KUBECTL"], os.environ["PP_GPUOPS"], os.environ["PP_NS"]
REPO, WORK = os.environ["PP_REPO"], os.environ["PP_WORK"]
MODE = os.environ.get("PP_MODE", "lab")
POLICY = "cluster-policy"

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
    if MODE == "operator":
        return setup_operator()
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
    """Nodes, the namespace's DaemonSets and pods, and (operator mode) the ClusterPolicies: one kubectl call
    (-n restricts neither nodes nor cluster policies)."""
    kinds = "nodes,daemonsets,pods" + (",clusterpolicies" if MODE == "operator" else "")
    items = json.loads(kubectl("get", kinds, "-n", NS, "-o", "json"))["items"]
    return [[o for o in items if o["kind"] == kind] for kind in ("Node", "DaemonSet", "Pod", "ClusterPolicy")]


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


def fingerprint(nodes, dss, pods, cps):
    return json.dumps([
        sorted((c["metadata"]["name"], c["metadata"].get("generation"), json.dumps(c.get("status", {}), sort_keys=True))
               for c in cps),
        sorted((n["metadata"]["name"], sorted(n["metadata"].get("labels", {}).items()), taints(n),
                bool(n["spec"].get("unschedulable")), condition(n, "Ready")) for n in nodes),
        sorted((d["metadata"]["name"], d["metadata"].get("generation"),
                sorted((k, v) for k, v in d.get("status", {}).items() if k != "conditions")) for d in dss),
        sorted((p["metadata"]["uid"], p["spec"].get("nodeName", ""), p.get("status", {}).get("phase", ""),
                condition(p, "Ready"), bool(p["metadata"].get("deletionTimestamp"))) for p in pods)])


def operator_pending(nodes, cps):
    """What the GPU Operator has still to do: every node with NFD's GPU label labelled by labelGPUNodes
    (nvidia.com/gpu.present), its ClusterPolicy reconciled once (a status), and, softly (policy_waiting),
    the policy ready."""
    out = []
    if not cps:
        out.append("no ClusterPolicy")
    for c in cps:
        if not c.get("status", {}).get("state"):
            out.append("ClusterPolicy %s: no status yet" % c["metadata"]["name"])
    for n in nodes:
        labels = n["metadata"].get("labels", {})
        if labels.get("feature.node.kubernetes.io/pci-10de.present") == "true" and "nvidia.com/gpu.present" not in labels:
            out.append("node %s: not labelled by the operator yet" % n["metadata"]["name"])
    return out


def policy_waiting(cps):
    """A ClusterPolicy not ready: the operator requeues while a state is not ready and says ready within
    seconds once its pods are (docs/reference/gpu-operator-live.md step 6), but a state can stay not ready
    for good (an OnDelete driver DaemonSet whose template changed: isDaemonSetReady wants its pods of the
    current revision), so this waits PP_POLICY_QUIET seconds of quiet, not for ready."""
    return ["ClusterPolicy %s: state %s" % (c["metadata"]["name"], c.get("status", {}).get("state"))
            for c in cps if c.get("status", {}).get("state") not in (None, "ready")]


def settle():
    """Waits until nothing is pending and nothing changed for PP_QUIET seconds: (0, the seconds it took), or
    (3, what was still pending)."""
    quiet, timeout = float(os.environ["PP_QUIET"]), float(os.environ["PP_TIMEOUT"])
    start = time.monotonic()
    last, since, left = None, start, []
    while True:
        try:
            nodes, dss, pods, cps = read_cluster()
        except RuntimeError as e:
            return 3, str(e)
        now = time.monotonic()
        fp = fingerprint(nodes, dss, pods, cps)
        if fp != last:
            last, since = fp, now
        left = pending(nodes, dss, pods) + (operator_pending(nodes, cps) if MODE == "operator" else [])
        waiting = policy_waiting(cps) if MODE == "operator" else []
        if not left and now - since >= (float(os.environ.get("PP_POLICY_QUIET", "8")) if waiting else quiet):
            return 0, f"{now - start:.1f}"
        if now - start > timeout:
            return 3, "did not settle within %ds: %s" % (timeout, "; ".join((left + waiting)[:5]) or "still changing")
        time.sleep(0.25)


def capture(out):
    """The cluster as compared: nodes, pods by (DaemonSet, node), gpuops matrix."""
    nodes, dss, pods, cps = read_cluster()
    state = {"nodes": {}, "pods": [], "matrix": {}, "daemonsets": {},
             "policies": {c["metadata"]["name"]: c.get("status", {}).get("state") or "(unset)" for c in cps}}
    # A DaemonSet by its spec's generation (the API server bumps it on every spec change).
    for d in dss:
        state["daemonsets"][d["metadata"]["name"]] = d["metadata"].get("generation")
    for n in nodes:
        state["nodes"][n["metadata"]["name"]] = {"labels": n["metadata"].get("labels", {}), "taints": taints(n),
                                                 "unschedulable": bool(n["spec"].get("unschedulable"))}
    for p in pods:
        kind, owner = controller(p)
        state["pods"].append({"name": p["metadata"]["name"], "uid": p["metadata"]["uid"],
                              "node": p["spec"].get("nodeName", ""), "daemonset": owner if kind == "DaemonSet" else ""})
    r = subprocess.run([GPUOPS, "matrix", "--kubeconfig", KC, "-n", NS], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("gpuops matrix: exit %d: %s" % (r.returncode, r.stderr.strip()))
    for line in r.stdout.splitlines():
        words = line.split()
        if words and not words[0].startswith("TOTAL_PODS="):
            state["matrix"][words[0]] = dict(w.split("=", 1) for w in words[1:])
    json.dump(state, open(out, "w"), indent=1, sort_keys=True)


def draw(i, n, seed, state_path, out):
    """Change i (1..n), from the seed and the cluster's state; writes it to out as a change file:
    {"shown", "plan": plan's words, "kubectl": [kubectl's words, one list a command]}."""
    if MODE == "operator":
        return draw_operator(i, n, seed, state_path, out)
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
    write_change(out, words, [words], " ".join(words))


def write_change(out, plan_words, kubectl_commands, shown, source="kubeconfig"):
    shown = shown.replace(WORK + "/", "") + (" (planned from a dump without the ClusterPolicy)" if source == "dump"
                                             else "")
    json.dump({"plan": plan_words, "kubectl": kubectl_commands, "shown": shown, "source": source},
              open(out, "w"), indent=1)


def plan(change_path, out, err):
    """Runs gpuops plan for the change, on the live cluster or (source "dump") on a dump of it without its
    ClusterPolicy, as README tells users to take one; exits with plan's exit code."""
    change = json.load(open(change_path))
    if change["source"] == "dump":
        dump = change_path + ".dump.json"
        with open(dump, "w") as f:
            f.write(kubectl("get", "nodes,daemonsets,pods", "-A", "-o", "json"))
        where = ["--snapshot", dump]
    else:
        where = ["--kubeconfig", KC]
    with open(out, "w") as o, open(err, "w") as e:
        return subprocess.run([GPUOPS, "plan", *where, "-n", NS, "-o", "json", *change["plan"]],
                              stdout=o, stderr=e).returncode


def act(change_path, out):
    """Makes the change with kubectl, the cluster settling between two commands (a --steps plan), as the
    plan lets the controllers and the operator settle between two steps."""
    change = json.load(open(change_path))
    with open(out, "w") as o:
        for k, words in enumerate(change["kubectl"]):
            if k:
                if settle()[0] != 0:
                    return 3
            r = subprocess.run([KUBECTL, "--kubeconfig", KC, *words], stdout=o, stderr=subprocess.STDOUT)
            if r.returncode != 0:
                return 1
    return 0


# --- operator mode ------------------------------------------------------------

# The deploy labels labelGPUNodes writes on a GPU node for the container workload (gpuStateLabels,
# controllers/state_manager.go; docs/reference/gpu-operator-live.md step 1).
OP_DEPLOY = ["nvidia.com/gpu.deploy." + o for o in
             ["driver", "container-toolkit", "device-plugin", "gpu-feature-discovery", "dcgm", "dcgm-exporter",
              "node-status-exporter", "operator-validator"]]
OPERANDS = "nvidia.com/gpu.deploy.operands"
NFD_GPU = {"feature.node.kubernetes.io/pci-10de.present": "true",
           "feature.node.kubernetes.io/kernel-version.full": "6.8.0-101-generic",
           "feature.node.kubernetes.io/system-os_release.ID": "ubuntu",
           "feature.node.kubernetes.io/system-os_release.VERSION_ID": "22.04"}


def operator_node(name, gpu):
    labels = {"type": "kwok", "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
              "kubernetes.io/arch": "amd64"}
    labels.update(NFD_GPU if gpu else {"feature.node.kubernetes.io/kernel-version.full": "6.8.0-101-generic"})
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "annotations": {"kwok.x-k8s.io/node": "fake"}, "labels": labels}}


def setup_operator():
    """Three GPU nodes and a CPU node with NFD's labels (a fourth GPU node's file for later), and a ClusterPolicy
    at its defaults: the fields the CRD requires as {} (what the scenarios' installOperator writes)."""
    crd = json.loads(kubectl("get", "crd", "clusterpolicies.nvidia.com", "-o", "json"))
    required = []
    for v in crd["spec"]["versions"]:
        if v.get("storage"):
            required = v["schema"]["openAPIV3Schema"]["properties"]["spec"].get("required", [])
    nodes = [operator_node("gpu-node-1", True), operator_node("gpu-node-2", True), operator_node("gpu-node-3", True),
             operator_node("cpu-node-1", False)]
    os.makedirs(WORK + "/nodes", exist_ok=True)
    for node in nodes + [operator_node("gpu-node-4", True)]:
        json.dump(node, open(WORK + "/nodes/" + node["metadata"]["name"] + ".json", "w"), indent=1)
    json.dump({"apiVersion": "v1", "kind": "List", "items": nodes}, open(WORK + "/nodes.json", "w"), indent=1)
    policy = {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "metadata": {"name": POLICY},
              "spec": {f: {} for f in required}}
    json.dump(policy, open(WORK + "/policy.json", "w"), indent=1)
    # Every node it may create, the fourth too (the clean-up deletes them --ignore-not-found).
    print(" ".join(n["metadata"]["name"] for n in nodes + [operator_node("gpu-node-4", True)]))


def patch_words(spec):
    return ["patch", "clusterpolicy", POLICY, "--type", "merge", "-p", json.dumps({"spec": spec})]


def draw_patch(rng, book):
    """A ClusterPolicy change: a component disabled or enabled (isStateEnabled), the toolkit's env
    (TransformToolkit's setContainerEnv), spec.daemonsets.tolerations (applyCommonDaemonsetConfig), or the
    device plugin's image, whole or by version alone (gpuv1.ImagePath), or a host path (transformForHostRoot,
    transformForDriverInstallDir, TransformToolkit's installDir), set or back to its default."""
    cp = book.setdefault("cp", {"dcgmExporter": True, "gfd": True, "env": 0, "tolerations": False, "plugin": 0,
                                "paths": {}})
    kind = rng.choice(["dcgmExporter", "gfd", "env", "tolerations", "plugin", "version", "hostpath"])
    if kind == "hostpath":
        where, key, value = rng.choice([("hostPaths", "rootFS", "/host"),
                                        ("hostPaths", "driverInstallDir", "/opt/nvidia/driver"),
                                        ("toolkit", "installDir", "/opt/nvidia/toolkit")])
        now = cp["paths"].get(key)
        cp["paths"][key] = None if now else value
        return patch_words({where: {key: cp["paths"][key]}})
    if kind in ("dcgmExporter", "gfd"):
        cp[kind] = not cp[kind]
        return patch_words({kind: {"enabled": cp[kind]}})
    if kind == "env":
        cp["env"] += 1
        return patch_words({"toolkit": {"env": [{"name": "CONTAINERD_SOCKET",
                                                 "value": "/run/containerd/containerd-%d.sock" % cp["env"]}]}})
    if kind == "tolerations":
        cp["tolerations"] = not cp["tolerations"]
        return patch_words({"daemonsets": {"tolerations": [
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "gpuops.test/dedicated", "operator": "Exists", "effect": "NoSchedule"}] if cp["tolerations"]
            else None}})
    cp["plugin"] += 1
    if kind == "version":  # no repository, no image: "/:<version>" up to v26.6
        return patch_words({"devicePlugin": {"repository": None, "image": None, "version": "v0.17.%d" % cp["plugin"]}})
    return patch_words({"devicePlugin": {"repository": "nvidia", "image": "k8s-device-plugin",
                                         "version": "v0.17.%d" % cp["plugin"]}})


def label_step(node, key, value):
    return ({"label": {"node": node, "remove": [key]}} if value is None
            else {"label": {"node": node, "set": {key: value}}})


def label_words(node, key, value):
    return ["label", "node", node, key + "-"] if value is None else ["label", "node", node, key + "=" + value,
                                                                      "--overwrite"]


def draw_operator(i, n, seed, state_path, out):
    """An operator-mode change: deploy labels set, lowered or removed (on GPU and CPU nodes), operands=false
    and back, gpu.present by hand on the CPU node, cordon, uncordon and drain, NoSchedule taints, a
    ClusterPolicy patch, a new GPU node, and two- and three-label --steps plans (the operator acts in between); a
    quarter planned from a dump without the ClusterPolicy."""
    state = json.load(open(state_path))
    book_path = WORK + "/draw.json"
    book = json.load(open(book_path)) if os.path.exists(book_path) else {
        "new_node_at": random.Random(f"{seed}/schedule").randint(max(1, n // 3), max(1, 2 * n // 3))}
    rng = random.Random(f"{seed}/{i}")
    nodes = sorted(state["nodes"])
    gpu = [x for x in nodes if state["nodes"][x]["labels"].get("feature.node.kubernetes.io/pci-10de.present") == "true"]
    cpu = [x for x in nodes if x not in gpu]
    source = "dump" if rng.random() < 0.25 else "kubeconfig"
    if i == book["new_node_at"] and "gpu-node-4" not in nodes:
        words = ["apply", "-f", WORK + "/nodes/gpu-node-4.json"]
        plan_words, commands = words, [words]
    else:
        kind = rng.choices(["label", "operands", "cpuhand", "cordon", "drain", "noschedule", "patch", "steps"],
                           [28, 10, 6, 8, 4, 6, 26, 12])[0]
        node = rng.choice(gpu if kind in ("operands", "steps") else cpu if kind == "cpuhand" else nodes)
        labels = state["nodes"][node]["labels"]
        keys = {t[0] for t in state["nodes"][node]["taints"]}
        if kind == "label":
            key, r = rng.choice(OP_DEPLOY), rng.random()
            words = label_words(node, key, None if r < 0.3 and key in labels else "true" if r < 0.55 else "false")
        elif kind == "operands":
            words = label_words(node, OPERANDS, None if labels.get(OPERANDS) == "false" else "false")
        elif kind == "cpuhand":
            key = rng.choice(["nvidia.com/gpu.present", "nvidia.com/gpu.deploy.device-plugin"])
            words = label_words(node, key, None if key in labels and rng.random() < 0.5 else "true")
        elif kind == "cordon":
            words = ["uncordon" if state["nodes"][node]["unschedulable"] else "cordon", node]
        elif kind == "drain":
            words = (["uncordon", node] if state["nodes"][node]["unschedulable"]
                     else ["drain", node, "--ignore-daemonsets"])
        elif kind == "noschedule":
            key = rng.choice(sorted(NOSCHEDULE))
            words = (["taint", "node", node, key + ":NoSchedule-"] if key in keys
                     else ["taint", "node", node, key + "=" + NOSCHEDULE[key] + ":NoSchedule"])
        elif kind == "patch":
            words = draw_patch(rng, book)
        if kind != "steps":
            plan_words, commands = words, [words]
        else:
            # Two or three label changes on one node, each once the one before has settled: an opt-out then
            # operands=false (the opt-out lost when it goes), operands=false then back, and the three of them.
            first = (OPERANDS, None if labels.get(OPERANDS) == "false" else "false")
            if rng.random() < 0.5:
                first = (rng.choice(OP_DEPLOY), "false")
            second = (OPERANDS, "false") if first[0] != OPERANDS else (rng.choice(OP_DEPLOY), "false")
            if rng.random() < 0.5 and first[0] == OPERANDS and first[1] == "false":
                second = (OPERANDS, None)
            changes = [first, second]
            if rng.random() < 0.4:
                # Three: an opt-out, operands=false, operands back (the opt-out lost on the way,
                # docs/reference/gpu-operator-live.md step 3), or its order reversed.
                optout = (rng.choice(OP_DEPLOY), "false")
                changes = ([optout, (OPERANDS, "false"), (OPERANDS, None)] if labels.get(OPERANDS) != "false"
                           else [(OPERANDS, None), optout, (OPERANDS, "false")])
            steps = [label_step(node, *c) for c in changes]
            path = WORK + "/steps-%d.json" % i
            json.dump(steps, open(path, "w"), indent=1)
            plan_words = ["--steps", path]
            commands = [label_words(node, *c) for c in changes]
            words = ["steps:"] + [" ".join(c) for c in commands]
    json.dump(book, open(book_path, "w"))
    write_change(out, plan_words, commands, " ".join(words), source)


def pods_by_key(state):
    out = {}
    for p in state["pods"]:
        out.setdefault((p["daemonset"], p["node"]), []).append(p["name"])
    return out


def compare(before_path, plan_path, plan_rc, after_path, roster_path, change_path=None):
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
    # DaemonSets: created, deleted, and changed (a new spec generation), by name.
    ds_before, ds_after = before.get("daemonsets", {}), after.get("daemonsets", {})
    want_ds = {d["name"]: d["kind"] for d in plan.get("daemonsets", [])}
    got_ds = {name: "created" for name in set(ds_after) - set(ds_before)}
    got_ds.update({name: "deleted" for name in set(ds_before) - set(ds_after)})
    got_ds.update({name: "changed" for name in set(ds_before) & set(ds_after) if ds_before[name] != ds_after[name]})
    for name in sorted(set(want_ds) | set(got_ds)):
        if want_ds.get(name) != got_ds.get(name):
            diffs.append("daemonset %s: predicted %s, cluster %s" % (name, want_ds.get(name, "unchanged"),
                                                                      got_ds.get(name, "unchanged")))
    # The ClusterPolicy's status.state, where plan says it changes.
    # (Not from a dump: plan infers the policy there, without a status, and claims no change of it.)
    from_dump = change_path and json.load(open(change_path)).get("source") == "dump"
    want_state = {c["name"]: (c["stateBefore"], c["stateAfter"]) for c in plan.get("clusterPolicies", [])}
    for name in sorted(set(before.get("policies", {})) | set(after.get("policies", {})) if not from_dump else []):
        b, a = before.get("policies", {}).get(name), after.get("policies", {}).get(name)
        if b is None or a is None:
            continue
        pb, pa = want_state.get(name, (b, b))
        # The operator's status can move after the settle without any change: a DaemonSet status the
        # controller refreshes late (a node that stopped fitting) makes it reconcile and say notReady. When
        # plan read another state than the capture, its prediction starts elsewhere: not compared.
        if name in want_state and pb != b:
            continue
        if (pb, pa) != (b, a):
            diffs.append("clusterpolicy %s status.state: predicted %s -> %s, cluster %s -> %s" % (name, pb, pa, b, a))
    # A settled live cluster has no drift: any is a difference of the simulation's.
    drift = plan.get("drift") or {}
    if drift.get("changes"):
        diffs.append("plan saw drift in a settled cluster: %s" % json.dumps(
            {k: drift.get(k) for k in ("pods", "labels", "daemonsets")})[:400])
    # The exit code: 1 when something changes (pods, labels, nodes, DaemonSets).
    changed = (set(before["nodes"]) != set(after["nodes"]) or
               any(before["nodes"][x]["labels"] != after["nodes"][x]["labels"]
                   for x in set(before["nodes"]) & set(after["nodes"])) or
               {k: sorted(v) for k, v in was.items()} != {k: sorted(v) for k, v in now.items()} or
               bool(got_ds) or before.get("policies") != after.get("policies"))
    if plan_rc != (1 if changed else 0):
        diffs.append("plan exit %d, but the cluster %s" % (plan_rc, "changed" if changed else "did not change"))
    return diffs


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    try:
        if cmd == "setup":
            setup()
        elif cmd == "settle":
            rc, text = settle()
            print(text)
            sys.exit(rc)
        elif cmd == "capture":
            capture(args[0])
        elif cmd == "draw":
            draw(int(args[0]), int(args[1]), args[2], args[3], args[4])
        elif cmd == "plan":
            sys.exit(plan(args[0], args[1], args[2]))
        elif cmd == "act":
            sys.exit(act(args[0], args[1]))
        elif cmd == "shown":
            print(json.load(open(args[0]))["shown"])
        elif cmd == "compare":
            d = compare(args[0], args[1], int(args[2]), args[3], args[4], *args[5:6])
            print("; ".join(d))
            sys.exit(1 if d else 0)
    except RuntimeError as e:
        print(str(e), file=sys.stderr)
        sys.exit(3)

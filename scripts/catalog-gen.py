#!/usr/bin/env python3
"""Generates a GPU Operator release's operand catalog from the release itself.

    scripts/catalog-gen.py --git GITDIR --tag v24.9.2 > data/operands/gpu-operator-v24.9.yaml
    scripts/catalog-gen.py --tree DIR --tag v24.9.2            # DIR holds the same paths
    scripts/catalog-gen.py --git GITDIR --tag v24.9.2 --extract DIR   # writes those paths to DIR

GITDIR is any clone of the GPU Operator's repository (github.com/NVIDIA/gpu-operator);
the release's files are read at TAG with `git show`, nothing is checked out. What is
read (the "assets" of the release, the same files whatever the source):
  assets/*/*.y[a]ml                     every operand's DaemonSet: name, selector, template
                                        labels, nodeSelector, init containers (the gates),
                                        main container, update strategy, memory request
  deployments/gpu-operator/values.yaml  the Helm chart's default images (repository/image:
                                        version; the validator's and node status
                                        exporter's version is the release tag, as the chart's
                                        appVersion is set to it when the release is cut)
What is code, not an asset, is hand-written per release line in
data/operator-rules/<line>.yaml (which workload configs set each deploy label,
gpuStateLabels; which transforms set runtimeClassName; the state order; the operator
block of the catalog: the labeller's and helpers' rules), each naming the upstream
file and tag it mirrors.

Output: a catalog in the shape core/gpu_operator/operands.h documents, the lab's five
operands first with the lab's names, columns, manifests and memory requests
(data/operands/lab.yaml), then the rest in the operator's state order. The same input
gives the same bytes (tests/scripts/catalog_gen_test.py regenerates one from a pinned
source in tests/data/catalog-source and compares).

Exit codes: 0 written; 2 usage; 3 an input is missing or is not what a release holds.
Needs python3 with PyYAML (python3-yaml).
"""
import argparse
import os
import subprocess
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEPLOY = "nvidia.com/gpu.deploy."
COMPONENT = "app.kubernetes.io/component"

# The asset state directory of each operand, gpuops' operand name, matrix column and
# `needs` (diagnose's order rules). Release independent: gpuops' own vocabulary.
OPERANDS = [
    # state dir, name, column, needs, values.yaml key
    ("state-driver", "driver", "driver", [], "driver"),
    ("state-container-toolkit", "container-toolkit", "toolkit", ["driver"], "toolkit"),
    ("state-device-plugin", "device-plugin", "device-plugin", ["container-toolkit"], "devicePlugin"),
    ("gpu-feature-discovery", "gpu-feature-discovery", "gfd", ["container-toolkit"], "gfd"),
    ("state-dcgm-exporter", "dcgm-exporter", "dcgm", ["container-toolkit"], "dcgmExporter"),
    ("state-operator-validation", "operator-validator", "validator", ["container-toolkit"], "validator"),
    ("state-mps-control-daemon", "mps-control-daemon", "mps", ["container-toolkit"], "devicePlugin"),
    ("state-dcgm", "dcgm", "dcgm-hostengine", ["container-toolkit"], "dcgm"),
    ("state-mig-manager", "mig-manager", "mig-manager", ["container-toolkit"], "migManager"),
    ("state-node-status-exporter", "node-status-exporter", "node-status-exporter", [], "nodeStatusExporter"),
    ("state-vgpu-manager", "vgpu-manager", "vgpu-manager", [], "vgpuManager"),
    ("state-vgpu-device-manager", "vgpu-device-manager", "vgpu-device-manager", [], "vgpuDeviceManager"),
    ("state-sandbox-validation", "sandbox-validator", "sandbox-validator", [], "validator"),
    ("state-vfio-manager", "vfio-manager", "vfio-manager", [], "vfioManager"),
    ("state-sandbox-device-plugin", "sandbox-device-plugin", "sandbox-device-plugin", [], "sandboxDevicePlugin"),
    ("state-kata-device-plugin", "kata-sandbox-device-plugin", "kata-sandbox-device-plugin", [], "kataSandboxDevicePlugin"),
    ("state-kata-manager", "kata-manager", "kata-manager", [], "kataManager"),
    ("state-cc-manager", "cc-manager", "cc-manager", [], "ccManager"),
]
# The hostPath volumes a ClusterPolicy field moves (controllers/object_controls.go:
# transformForHostRoot, transformForDriverInstallDir, TransformToolkit's installDir,
# the MPS root of TransformDevicePlugin and TransformMPSControlDaemon).
MOVED_VOLUMES = ("host-root", "host-dev-char", "driver-install-dir", "toolkit-install-dir", "mps-root", "mps-shm")

# The component label of the DaemonSets an NVIDIADriver renders instead
# (manifests/state-driver/0500_daemonset.yaml: a templated file, so named here, not read).
NVIDIADRIVER_COMPONENT = {"vgpu-manager": "nvidia-vgpu-host-manager"}
LAB_FIVE = ["driver", "container-toolkit", "device-plugin", "gpu-feature-discovery", "dcgm-exporter"]

# Init containers a ClusterPolicy at its Helm defaults never renders: each transform
# removes its container unless a feature is enabled (controllers/object_controls.go).
DEFAULT_OFF_INIT = {
    "nvidia-fs-validation",  # TransformValidatorComponent "nvidia-fs": spec.gds.enabled
    "gdrcopy-validation",    # TransformValidatorComponent "gdrcopy": spec.gdrcopy.enabled
    "mofed-validation",      # TransformDriver: spec.driver.rdma.enabled (GPUDirect RDMA)
}


class Failure(Exception):
    pass


class Source:
    """The release's files, from a git repository at a tag or from a directory."""

    def __init__(self, git, tree, tag):
        self.git, self.tree, self.tag = git, tree, tag

    def read(self, path):
        if self.tree:
            try:
                with open(os.path.join(self.tree, path), encoding="utf-8") as f:
                    return f.read()
            except OSError as e:
                raise Failure(f"{self.tree}: {path}: {e.strerror}")
        r = subprocess.run(["git", "-C", self.git, "show", f"{self.tag}:{path}"], capture_output=True, text=True)
        if r.returncode != 0:
            raise Failure(f"{self.git}: {self.tag}:{path}: {r.stderr.strip()}")
        return r.stdout

    def list_dir(self, path):
        if self.tree:
            d = os.path.join(self.tree, path)
            return sorted(os.listdir(d)) if os.path.isdir(d) else []
        r = subprocess.run(["git", "-C", self.git, "ls-tree", "--name-only", f"{self.tag}:{path}"],
                           capture_output=True, text=True)
        return sorted(r.stdout.split()) if r.returncode == 0 else []


def daemonset_of(src, state):
    """The first DaemonSet of assets/<state>/, with the file it came from."""
    for name in src.list_dir(f"assets/{state}"):
        if not name.endswith((".yaml", ".yml")):
            continue
        path = f"assets/{state}/{name}"
        try:
            docs = list(yaml.safe_load_all(src.read(path)))
        except yaml.YAMLError as e:
            raise Failure(f"{path}: {e}")
        for d in docs:
            if isinstance(d, dict) and d.get("kind") == "DaemonSet":
                return path, d
    return None, None


def image_of(values, key, tag):
    v = values.get(key) or {}
    repo, image, version = v.get("repository") or "", v.get("image") or "", v.get("version") or ""
    if key in ("validator", "nodeStatusExporter") and not version:
        version = tag  # the chart's appVersion at the release
    if not image or not version or not repo:
        return ""
    return f"{repo}/{image}:{version}"


def flow(value):
    """One YAML value on one line (block lists and maps in flow style)."""
    text = yaml.safe_dump([value], default_flow_style=True, width=1 << 16, sort_keys=False).strip()
    return text[1:-1]  # the value inside the one-element list


def catalog_file(rules):
    """The catalog's file name under data/operands/: the rules file's `catalog`
    (the newest line's is gpu-operator.yaml), else gpu-operator-<release>.yaml."""
    return rules.get("catalog") or f"gpu-operator-{rules['release']}.yaml"


def generate(src, tag, rules_path):
    try:
        with open(rules_path, encoding="utf-8") as f:
            rules_text = f.read()
        rules = yaml.safe_load(rules_text)
    except OSError as e:
        raise Failure(f"{rules_path}: {e.strerror}")
    try:
        values = yaml.safe_load(src.read("deployments/gpu-operator/values.yaml"))
    except yaml.YAMLError as e:
        raise Failure(f"deployments/gpu-operator/values.yaml: {e}")
    with open(os.path.join(ROOT, "data/operands/lab.yaml"), encoding="utf-8") as f:
        lab = {o["name"]: o for o in yaml.safe_load(f)["operands"]}
    workload = rules.get("workload_configs") or {}
    runtime_class = set(rules.get("runtime_class") or [])

    found = []
    for state, name, column, needs, values_key in OPERANDS:
        path, ds = daemonset_of(src, state)
        if ds is None:
            continue  # the release has no such state
        try:
            tmpl = ds["spec"]["template"]
            spec = tmpl["spec"]
            labels = dict(tmpl["metadata"].get("labels") or {})
            match = dict(ds["spec"]["selector"]["matchLabels"])
            selector_in = dict(spec.get("nodeSelector") or {})
            main = spec["containers"][0]
        except (KeyError, TypeError, IndexError) as e:
            raise Failure(f"{path}: the DaemonSet lacks {e}")
        deploy = [k for k in selector_in if k.startswith(DEPLOY)]
        if len(deploy) != 1:
            raise Failure(f"{path}: nodeSelector has {len(deploy)} {DEPLOY}* keys, expected 1")
        o = {"name": name, "label": deploy[0], "daemonset": ds["metadata"]["name"]}
        app = labels.get("app") or match.get("app") or ds["metadata"]["name"]
        o["app"] = app
        o["column"] = column
        img = image_of(values, values_key, tag)
        if img:
            o["image"] = img
        requests = ((main.get("resources") or {}).get("requests") or {})
        memory = lab[name].get("memory") if name in lab else requests.get("memory")
        if memory:
            o["memory"] = memory
        if name in lab and lab[name].get("manifest"):
            o["manifest"] = lab[name]["manifest"]
        o["container"] = main["name"]
        o["workload_configs"] = list(workload.get(name, []))
        o["gates"] = [c["name"] for c in spec.get("initContainers") or [] if c["name"] not in DEFAULT_OFF_INIT]
        o["needs"] = list(needs)
        o["state"] = state
        if match != {"app": app}:
            o["selector"] = match
        pod_labels = {k: v for k, v in labels.items() if k not in match and k != COMPONENT}
        if pod_labels:
            o["pod_labels"] = pod_labels
        node_selector = {k: v for k, v in selector_in.items() if k != deploy[0]}
        if node_selector:
            o["node_selector"] = node_selector
        if (ds["spec"].get("updateStrategy") or {}).get("type") == "OnDelete":
            o["update_strategy"] = "OnDelete"
        if name in runtime_class:
            o["runtime_class"] = True
        host_paths = {v["name"]: v["hostPath"]["path"] for v in spec.get("volumes") or []
                      if v.get("name") in MOVED_VOLUMES and isinstance(v.get("hostPath"), dict)}
        if host_paths:
            o["host_paths"] = host_paths
        if labels.get(COMPONENT) or name in NVIDIADRIVER_COMPONENT:
            o["component"] = labels.get(COMPONENT) or NVIDIADRIVER_COMPONENT[name]
        found.append((path, o))

    order = {n: i for i, n in enumerate(LAB_FIVE)}
    found.sort(key=lambda po: order.get(po[1]["name"], len(LAB_FIVE)))  # stable: state order after the five
    missing = [n for n in LAB_FIVE if n not in {o["name"] for _, o in found}]
    if missing:
        raise Failure(f"{tag}: no DaemonSet asset for {', '.join(missing)}")

    line = rules["release"]
    out = [
        f"# GENERATED by scripts/catalog-gen.py from NVIDIA/gpu-operator {tag} (its assets/ and",
        "# deployments/gpu-operator/values.yaml) and data/operator-rules/" + os.path.basename(rules_path) + ".",
        "# Do not edit: change the generator or the rules file and regenerate:",
        f"#   scripts/catalog-gen.py --git GITDIR --tag {tag} > data/operands/" + catalog_file(rules),
        "#",
        "# The lab's five first with the lab's names, columns, manifests and memory",
        "# (data/operands/lab.yaml), then the operator's state order. Images are the",
        f"# Helm chart's defaults at {tag}; gates are the asset's init containers less",
        "# those a default ClusterPolicy never renders (" + ", ".join(sorted(DEFAULT_OFF_INIT)) + ").",
        "audit: deployed",
        f"version: {line}",
    ]
    mgr = ((values.get("driver") or {}).get("manager") or {})
    manager_image = image_of({"m": mgr}, "m", tag)
    out.append(rules_text_operator(rules_text, manager_image))
    configs = mig_configs(src)
    if configs:
        out.append("    # The default mig-parted config (" + MIG_CONFIG + ").")
        out.append("    configs: " + flow(configs))
    out.append("operands:")
    for path, o in found:
        out.append(f"  - name: {o['name']}")
        out.append(f"    # {path}")
        for k, v in o.items():
            if k == "name":
                continue
            out.append(f"    {k}: {flow(v)}")
    return "\n".join(out) + "\n"


def rules_text_operator(rules_text, manager_image):
    """The rules file's `operator:` block, verbatim with its comments, the Helm
    default driver manager image added. The block ends with `mig_manager`, whose
    `configs` the caller appends from the release's assets."""
    lines = rules_text.splitlines()
    try:
        start = lines.index("operator:")
    except ValueError:
        raise Failure("the rules file has no top-level `operator:` block")
    block = []
    for ln in lines[start:]:
        if block and ln and not ln.startswith((" ", "#")):
            break
        block.append(ln)
    while block and (not block[-1].strip() or block[-1].startswith("#")):
        block.pop()
    if manager_image:
        block.insert(1, "  # Helm values.yaml driver.manager at the release.")
        block.insert(2, f"  driver_manager_image: {manager_image}")
    return "\n".join(block)


MIG_CONFIG = "assets/state-mig-manager/0400_configmap.yaml"
EXTRACT = ["deployments/gpu-operator/values.yaml", MIG_CONFIG]


def mig_configs(src):
    """The config names of the default mig-parted ConfigMap, in file order."""
    try:
        cm = yaml.safe_load(src.read(MIG_CONFIG))
        return list(yaml.safe_load(cm["data"]["config.yaml"])["mig-configs"])
    except (yaml.YAMLError, KeyError, TypeError) as e:
        raise Failure(f"{MIG_CONFIG}: no mig-configs ({e})")


def extract(src, dest):
    """Writes the files generate() reads to dest, as a pinned source."""
    paths = list(EXTRACT)
    for state, *_ in OPERANDS:
        path, _ds = daemonset_of(src, state)
        if path:
            paths.append(path)
    for p in paths:
        os.makedirs(os.path.join(dest, os.path.dirname(p)), exist_ok=True)
        with open(os.path.join(dest, p), "w", encoding="utf-8") as f:
            f.write(src.read(p))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--git", help="a clone of NVIDIA/gpu-operator")
    g.add_argument("--tree", help="a directory holding the release's files")
    ap.add_argument("--tag", required=True, help="the release tag, vMAJOR.MINOR.PATCH")
    ap.add_argument("--rules", help="the release line's rules file (default data/operator-rules/<line>.yaml)")
    ap.add_argument("--extract", metavar="DIR", help="write the files read to DIR instead of a catalog")
    a = ap.parse_args()
    parts = a.tag.lstrip("v").split(".")
    if not a.tag.startswith("v") or len(parts) != 3 or not all(p.isdigit() for p in parts):
        ap.error(f"--tag must be vMAJOR.MINOR.PATCH, not {a.tag!r}")
    line = f"v{parts[0]}.{parts[1]}"
    src = Source(a.git, a.tree, a.tag)
    try:
        if a.extract:
            extract(src, a.extract)
            return 0
        rules = a.rules or os.path.join(ROOT, "data/operator-rules", line + ".yaml")
        sys.stdout.write(generate(src, a.tag, rules))
    except Failure as e:
        print(f"catalog-gen: {e}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())

// gpuops lint on what an operator of the GPU Operator has at hand: the
// operator's ClusterPolicy and NVIDIADriver (accepted), a namespace the API
// refuses, and templates (a Helm chart's files, the operator's assets) said
// to be templates, each with its file and line, exit 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../common/cli_run.h"

namespace fs = std::filesystem;

namespace {

using gpuops::testing::run_gpuops;

const std::string kOperator = std::string(GPUOPS_SOURCE_DIR) + "/tests/data/operator/";

// A file in a fresh folder, removed with it.
struct TempFile {
  TempFile(const std::string& name, const std::string& text)
      : dir(fs::temp_directory_path() / ("gpuops-lint-" + name)), path((dir / name).string()) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(path) << text;
  }
  ~TempFile() { fs::remove_all(dir); }
  fs::path dir;
  std::string path;
};

const char* kDaemonSet =
    "apiVersion: apps/v1\n"
    "kind: DaemonSet\n"
    "metadata:\n"
    "  name: nvidia-device-plugin-daemonset\n"
    "  namespace: gpu-operator\n"
    "spec:\n"
    "  selector:\n"
    "    matchLabels:\n"
    "      app: nvidia-device-plugin-daemonset\n"
    "  template:\n"
    "    metadata:\n"
    "      labels:\n"
    "        app: nvidia-device-plugin-daemonset\n"
    "    spec:\n"
    "      containers:\n"
    "      - name: nvidia-device-plugin\n"
    "        image: nvcr.io/nvidia/k8s-device-plugin:v0.20.0\n"
    "        args: [\"--format={{.ID}}\"]\n";

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

}  // namespace

// Every operator case dump and the must-gather folder hold a ClusterPolicy
// (one an NVIDIADriver too) beside Nodes, DaemonSets and Pods: all lint clean.
TEST(Lint, TheOperatorsResourcesAreAccepted) {
  for (const char* c : {"healthy-v26.7/dump.yaml", "driver-nvidiadriver/dump.yaml", "must-gather"}) {
    auto r = run_gpuops({"lint", kOperator + c});
    EXPECT_EQ(r.code, 0) << c << "\n" << r.err;
    EXPECT_EQ(r.err, "") << c;
    EXPECT_EQ(r.out, "") << c;
  }
  TempFile f("nvidiadriver.yaml",
             "apiVersion: nvidia.com/v1alpha1\nkind: NVIDIADriver\nmetadata:\n  name: default\nspec:\n"
             "  driverType: gpu\n  nodeSelector:\n    nvidia.com/gpu.present: \"true\"\n");
  EXPECT_EQ(run_gpuops({"lint", f.path}).code, 0);
}

TEST(Lint, TheOperatorsResourcesAreChecked) {
  TempFile v("cp-version.yaml",
             "apiVersion: nvidia.com/v1beta1\nkind: ClusterPolicy\nmetadata:\n  name: cluster-policy\n");
  auto r = run_gpuops({"lint", v.path});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "gpuops: error: " + v.path +
                       ":1: apiVersion: no matches for kind \"ClusterPolicy\" in version \"nvidia.com/v1beta1\"\n");
  TempFile n("nd-selector.yaml",
             "apiVersion: nvidia.com/v1alpha1\nkind: NVIDIADriver\nmetadata:\n  name: default\nspec:\n"
             "  nodeSelector:\n    nvidia.com/gpu.present: true\n");
  r = run_gpuops({"lint", n.path});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "gpuops: error: " + n.path +
                       ":7: spec.nodeSelector[nvidia.com/gpu.present]: NVIDIADriver in version \"nvidia.com/v1alpha1\" "
                       "cannot be handled as a NVIDIADriver: json: cannot unmarshal bool into Go struct field "
                       "NVIDIADriverSpec.spec.nodeSelector of type string\n");
}

// ValidateObjectMeta: the API refuses a namespaced object whose namespace is
// not a DNS-1123 label (422); a cluster-scoped object's namespace it drops.
TEST(Lint, NamespaceAsTheApiChecksIt) {
  TempFile bad("ds-namespace.yaml", replaced(kDaemonSet, "namespace: gpu-operator", "namespace: GPU_Operator"));
  auto r = run_gpuops({"lint", bad.path});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "gpuops: error: " + bad.path +
                       ":5: metadata.namespace: DaemonSet.apps \"nvidia-device-plugin-daemonset\" is invalid: "
                       "metadata.namespace: Invalid value: \"GPU_Operator\": a lowercase RFC 1123 label must consist "
                       "of lower case alphanumeric characters or '-', and must start and end with an alphanumeric "
                       "character (e.g. 'my-name',  or '123-abc', regex used for validation is "
                       "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')\n");
  TempFile node("node-namespace.yaml", "apiVersion: v1\nkind: Node\nmetadata:\n  name: gpu-a\n  namespace: Whatever\n");
  r = run_gpuops({"lint", node.path});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

// A Helm chart's file: "render it first" at the first action, instead of
// yaml-cpp's "illegal block entry" or a JSON type error.
TEST(Lint, AHelmTemplateIsSaidToBeOne) {
  TempFile chart("daemonset.yaml",
                 "# the device plugin\n"
                 "{{- if .Values.devicePlugin.enabled }}\n" +
                     replaced(kDaemonSet, "namespace: gpu-operator", "namespace: {{ .Release.Namespace }}") +
                     "{{- end }}\n");
  auto r = run_gpuops({"lint", chart.path});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "gpuops: error: " + chart.path +
                       ":2: this is a template (Helm/Go \"{{ }}\"), not a manifest: render it first (helm template "
                       "...)\n");
  // Without the `if`: YAML reads `{{ .Release.Namespace }}` as a map, a type
  // error the template caused.
  TempFile value("value.yaml", replaced(kDaemonSet, "namespace: gpu-operator", "namespace: {{ .Release.Namespace }}"));
  r = run_gpuops({"lint", value.path});
  EXPECT_EQ(r.err, "gpuops: error: " + value.path +
                       ":5: this is a template (Helm/Go \"{{ }}\"), not a manifest: render it first (helm template "
                       "...)\n");
  // Quoted, an action is a string: the API takes it, so does lint
  // (kDaemonSet's own args hold one).
  TempFile fine("quoted.yaml", kDaemonSet);
  EXPECT_EQ(run_gpuops({"lint", fine.path}).code, 0);
  // A kind gpuops does not lint is said to be that, template or not.
  TempFile cm("configmap.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \"{{ .Release.Name }}\"\n");
  r = run_gpuops({"lint", cm.path});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(":2: kind: kind \"ConfigMap\" (v1) is not handled by gpuops"), std::string::npos) << r.err;
}

// The GPU Operator's assets (assets/state-*/*.yaml) parse and would even be
// accepted as they are; their placeholders say what they are.
TEST(Lint, AnOperatorAssetIsSaidToBeOne) {
  TempFile asset("0500_daemonset.yaml",
                 replaced(replaced(kDaemonSet, "namespace: gpu-operator", "namespace: \"FILLED BY THE OPERATOR\""),
                          "image: nvcr.io/nvidia/k8s-device-plugin:v0.20.0", "image: \"FILLED BY THE OPERATOR\""));
  auto r = run_gpuops({"lint", asset.path});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "gpuops: error: " + asset.path +
                       ":5: this is a template (the GPU Operator's \"FILLED BY THE OPERATOR\" placeholders), not a "
                       "manifest: the operator fills them in when it deploys its assets; lint what it made instead "
                       "(kubectl get daemonsets -n gpu-operator -o yaml)\n");
  TempFile rb("0300_rolebinding.yaml",
              "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: nvidia-driver\n"
              "subjects:\n- kind: ServiceAccount\n  name: nvidia-driver\n  namespace: \"FILLED BY THE OPERATOR\"\n");
  r = run_gpuops({"lint", rb.path});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(rb.path + ":8: this is a template (the GPU Operator's"), std::string::npos) << r.err;
}

// A folder of them: one line per invalid file, the valid ones silent.
TEST(Lint, EveryFileOfAFolder) {
  TempFile a("a.yaml", replaced(kDaemonSet, "namespace: gpu-operator", "namespace: {{ .Release.Namespace }}"));
  std::ofstream(a.dir / "b.yaml") << kDaemonSet;
  std::ofstream(a.dir / "c.yaml") << replaced(kDaemonSet, "namespace: gpu-operator", "namespace: gpu.operator");
  std::ofstream(a.dir / "notes.txt") << "{{ not read }}";
  auto r = run_gpuops({"lint", a.dir.string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "gpuops: error: " + (a.dir / "a.yaml").string() +
                ":5: this is a template (Helm/Go \"{{ }}\"), not a manifest: render it first (helm template ...)\n"
                "gpuops: error: " +
                (a.dir / "c.yaml").string() +
                ":5: metadata.namespace: DaemonSet.apps \"nvidia-device-plugin-daemonset\" is invalid: "
                "metadata.namespace: Invalid value: \"gpu.operator\": must not contain dots\n");
}

namespace {

// deploy/ is what the exporter's users apply (docs/EXPORTER.md): lint passes it, and
// refuses a broken copy of it as the API server would, with the file and
// line, exit 2. A kind lint does not check names every kind it does.
TEST(Lint, TheExportersManifestsPassAndABrokenOneIsRefused) {
  auto r = run_gpuops({"lint", std::string(GPUOPS_SOURCE_DIR) + "/deploy"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  TempFile svc("service.yaml",
               "apiVersion: v1\nkind: Service\nmetadata:\n  name: gpuops-exporter\n  namespace: gpu-operator\nspec:\n"
               "  ports:\n  - name: metrics\n    port: 9402\n  - name: metrics\n    port: 9403\n");
  r = run_gpuops({"lint", svc.path});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "gpuops: error: " + svc.path +
                       ":10: spec.ports[1].name: Service \"gpuops-exporter\" is invalid: spec.ports[1].name: Duplicate "
                       "value: \"metrics\"\n");
  TempFile cm("configmap.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n");
  r = run_gpuops({"lint", cm.path});
  EXPECT_EQ(r.err,
            "gpuops: error: " + cm.path +
                ":2: kind: kind \"ConfigMap\" (v1) is not handled by gpuops; expected Namespace, Node, "
                "DaemonSet, Pod, ClusterPolicy, NVIDIADriver, Deployment, Service, ServiceAccount, ClusterRole, "
                "Role, ClusterRoleBinding, RoleBinding, ServiceMonitor, PrometheusRule, ValidatingAdmissionPolicy or "
                "ValidatingAdmissionPolicyBinding\n");
}

// A number float64 cannot hold, in a manifest, as kubectl v1.37.2 and
// kube-apiserver v1.37.2 judged it (measured): in a JSON file kubectl cannot
// decode the file (`json: cannot unmarshal number 1e400 into Go value of
// type float64`, nothing sent); in a YAML file the scalar 1e400 is a string
// (go-yaml: ParseFloat's range error) and the API server refuses the string
// in an int field: a DaemonSet's revisionHistoryLimit (400, `cannot
// unmarshal string into Go struct field ...`) and a ClusterPolicy's integer
// (422, `... must be of type integer: "string"`). Exit 2.
TEST(Lint, NumbersBeyondFloat64) {
  TempFile json_ds("ds.json",
                   "{\"apiVersion\":\"apps/v1\",\"kind\":\"DaemonSet\",\"metadata\":{\"name\":\"d3\",\"namespace\":"
                   "\"default\"},\"spec\":{\"revisionHistoryLimit\":1e400,\"selector\":{\"matchLabels\":{\"a\":\"b\"}},"
                   "\"template\":{\"metadata\":{\"labels\":{\"a\":\"b\"}},\"spec\":{\"containers\":[{\"name\":\"c\","
                   "\"image\":\"i\"}]}}}}\n");
  auto r = run_gpuops({"lint", json_ds.path});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.err, "gpuops: error: " + json_ds.path +
                       ":1: json: cannot unmarshal number 1e400 into Go value of type "
                       "float64\n");
  TempFile yaml_ds("ds.yaml",
                   "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: d2\n  namespace: default\nspec:\n"
                   "  revisionHistoryLimit: 1e400\n  selector:\n    matchLabels: {a: b}\n  template:\n    metadata:\n"
                   "      labels: {a: b}\n    spec:\n      containers:\n      - {name: c, image: i}\n");
  r = run_gpuops({"lint", yaml_ds.path});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.err, "gpuops: error: " + yaml_ds.path +
                       ":7: spec.revisionHistoryLimit: DaemonSet in version \"v1\" cannot be handled as a DaemonSet: "
                       "json: cannot unmarshal string into Go struct field DaemonSetSpec.spec.revisionHistoryLimit of "
                       "type int32\n");
  TempFile yaml_cp("cp.yaml",
                   "apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata:\n  name: cp3\nspec:\n"
                   "  operator: {defaultRuntime: containerd}\n  daemonsets: {}\n"
                   "  driver: {enabled: true, startupProbe: {initialDelaySeconds: 1e400}}\n  toolkit: {enabled: true}\n"
                   "  devicePlugin: {}\n  dcgm: {}\n  dcgmExporter: {}\n  gfd: {}\n  nodeStatusExporter: {}\n"
                   "  validator: {}\n  mig: {}\n");
  r = run_gpuops({"lint", yaml_cp.path});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("ClusterPolicy.nvidia.com \"cp3\" is invalid: spec.driver.startupProbe.initialDelaySeconds: "
                       "Invalid value: \"string\": spec.driver.startupProbe.initialDelaySeconds in body must be of "
                       "type integer: \"string\""),
            std::string::npos)
      << r.err;
}

}  // namespace

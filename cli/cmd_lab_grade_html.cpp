// cli/cmd_lab_grade_html.cpp: see cmd_lab_grade_html.h.
#include "cli/cmd_lab_grade_html.h"

#include <algorithm>

#include "core/diagnose/html_report.h"

namespace gpuops::cli {

namespace {

std::string tag(const std::string& name, const std::string& text, const std::string& cls = "") {
  return "<" + name + (cls.empty() ? "" : " class=\"" + cls + "\"") + ">" + core::html_escape(text) + "</" + name + ">";
}

// The two texts of one file side by side.
std::string file_block(const core::GradeFile& f, bool open) {
  std::string mine = f.problem.empty() ? f.text : "(not read: " + f.problem + ")";
  if (f.problem.empty() && f.text.empty()) mine = "(missing or empty)";
  std::string out = std::string("<details class=\"file\"") + (open ? " open" : "") + ">" + tag("summary", f.path);
  out += "<div class=\"side-by-side\"><div class=\"learner\">" + tag("h4", "The learner's " + f.path) +
         tag("pre", mine, "file-text") + "</div>";
  out +=
      "<div class=\"expected\">" +
      tag("h4", f.exact ? "Expected (from the cluster)" : "gpuops' reference (the rules, not the bytes, are graded)") +
      tag("pre", f.expected, "file-text") + "</div></div></details>";
  return out;
}

}  // namespace

std::string grade_fix_hint(int step) {
  switch (step) {
    case 1:
      return "LAB.md step 1: out/roster.txt holds five lines <operand>=<deploy label> in the table's order; "
             "lab-node-0 and lab-node-1 carry feature.node.kubernetes.io/pci-10de.present=true, "
             "nvidia.com/gpu.present=true and the five deploy labels =true (lab-node-1's driver label =false).";
    case 2:
      return "LAB.md step 2: k8s/toolkit-ds.yaml, applied: the name, the pod label and selector app: <DaemonSet "
             "name>, the nodeSelector <deploy label>: \"true\" (quoted: label values are strings), the image and "
             "the memory request of LAB.md's table.";
    case 3:
      return "LAB.md step 3: k8s/driver-ds.yaml, applied; out/driver.txt read from the API: "
             "DESIRED=<desiredNumberScheduled> then SKIPPED=<the GPU nodes without a driver pod>.";
    case 4:
      return "LAB.md step 4: k8s/device-plugin-ds.yaml and k8s/gfd-ds.yaml, applied, each with its quoted "
             "nodeSelector.";
    case 5:
      return "LAB.md step 5: k8s/dcgm-ds.yaml applied, then nvidia.com/gpu.deploy.dcgm-exporter=false on "
             "lab-node-1; out/optout.txt: BEFORE=<desired before> then AFTER=<desired after>, read from the API.";
    case 6:
      return "LAB.md step 6: operand-audit.sh names no node, checks for a Running pod (not "
             "desiredNumberScheduled), prints <node> MISSING <operand> per gap or <node> OK, exits 1 on a gap; "
             "out/audit.txt is its output now.";
    case 7:
      return "LAB.md step 7: order-check.sh <node> prints device-plugin-without-toolkit and exits 1 when the "
             "node's device-plugin pod is Running without a container-toolkit pod, else ok and 0; out/order.txt: "
             "<node> <result> for the three nodes.";
    case 8:
      return "LAB.md step 8: out/matrix.txt read from the cluster now: per node driver= toolkit= device-plugin= "
             "gfd= dcgm= yes|no (yes: a Running pod), then TOTAL_PODS=<Running DaemonSet pods in gpu-operator>.";
    default: return "";
  }
}

std::string render_grade_html(const std::vector<core::GradeLine>& lines, const std::string& dir,
                              const core::PlacementView* grid) {
  const auto passed = std::count_if(lines.begin(), lines.end(), [](const core::GradeLine& l) { return l.pass; });
  // Inline style is what the page's CSP allows (style-src 'unsafe-inline').
  std::string body =
      "<style>.side-by-side{display:flex;gap:1em}.side-by-side>div{flex:1;min-width:0}"
      ".step.pass .result{color:#1a7f37}.step.fail .result{color:#cf222e}.hint{font-style:italic}</style>";
  body += tag("p", dir + ": " + std::to_string(passed) + " of " + std::to_string(lines.size()) + " steps passed",
              "summary");
  body += "<ol class=\"checklist\">";
  for (const auto& l : lines)
    body += "<li class=\"" + std::string(l.pass ? "pass" : "fail") + "\"><a href=\"#step-" + std::to_string(l.step) +
            "\">" +
            core::html_escape((l.pass ? "PASS step " : "FAIL step ") + std::to_string(l.step) + ": " + l.title) +
            "</a></li>";
  body += "</ol>";
  for (const auto& l : lines) {
    body += "<section class=\"step " + std::string(l.pass ? "pass" : "fail") + "\" id=\"step-" +
            std::to_string(l.step) + "\">";
    body += "<h2>" + core::html_escape("Step " + std::to_string(l.step) + ": " + l.title) + " " +
            tag("span", l.pass ? "PASS" : "FAIL", "result") + "</h2>";
    body += tag("pre", l.reason, "reason");
    if (!l.pass) body += tag("p", "How to fix: " + grade_fix_hint(l.step), "hint");
    for (const auto& f : l.files) body += file_block(f, !l.pass);
    body += "</section>";
  }
  if (grid) body += tag("h2", "The placement the grade judged") + core::render_view_table(*grid);
  return core::html_document("gpuops lab grade: " + dir, body);
}

}  // namespace gpuops::cli

// core/diagnose/html_report.cpp: see html_report.h.
#include "core/diagnose/html_report.h"

#include <cctype>

#include "core/diagnose/diagnose_render.h"

namespace gpuops::core {

std::string html_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

}  // namespace gpuops::core

namespace gpuops::core {

namespace {

std::string tag(const char* name, const std::string& text, const std::string& cls = "") {
  return std::string("<") + name + (cls.empty() ? "" : " class=\"" + html_escape(cls) + "\"") + ">" +
         html_escape(text) + "</" + name + ">";
}

bool same_shape(const PlacementView& a, const PlacementView& b) {
  if (a.operands != b.operands || a.nodes.size() != b.nodes.size()) return false;
  for (size_t i = 0; i < a.nodes.size(); ++i)
    if (a.nodes[i].name != b.nodes[i].name) return false;
  return true;
}

bool same_node(const ViewNode& a, const ViewNode& b) {
  return a.nvidia_labels == b.nvidia_labels && a.taints == b.taints && a.ready == b.ready &&
         a.unschedulable == b.unschedulable;
}

std::string pod_class(const ViewCell& c) {
  std::string pod = c.pod;
  for (auto& ch : pod) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (pod != "running" && pod != "pending" && pod != "terminating" && pod != "absent") pod = "other";
  std::string cls = "cell pod-" + pod + (c.wants ? " wanted" : " unwanted");
  if (c.wants && c.pod == "absent") cls += " missing";
  if (!c.wants && c.pod == "Running") cls += " misplaced";
  if (!c.has_daemonset && c.pod == "absent") cls += " nods";
  return cls;
}

}  // namespace

std::string render_view_table(const PlacementView& view, const PlacementView* before) {
  if (before && !same_shape(view, *before)) before = nullptr;
  std::string out =
      "<div class=\"grid\"><table class=\"report-grid\"><thead><tr><th class=\"corner\">operand \\ node</th>";
  for (size_t i = 0; i < view.nodes.size(); ++i) {
    const ViewNode& n = view.nodes[i];
    bool changed = before && !same_node(n, before->nodes[i]);
    out += std::string("<th class=\"node") + (changed ? " changed" : "") + "\">" + tag("div", n.name, "node-name");
    out += "<div class=\"node-state\">" +
           tag("span", "Ready=" + (n.ready.empty() ? "?" : n.ready), n.ready == "True" ? "ok" : "bad");
    if (n.unschedulable) out += tag("span", "cordoned", "bad");
    if (changed) out += tag("span", "changed", "bad");
    out += "</div>";
    for (const auto& t : n.taints) out += tag("div", t, "taint");
    out += "<div class=\"chips\">";
    for (const auto& [k, v] : n.nvidia_labels)
      out +=
          tag("span", k.substr(std::string("nvidia.com/").size()) + "=" + v, v == "false" ? "chip chip-false" : "chip");
    out += "</div></th>";
  }
  out += "</tr></thead><tbody>";
  for (size_t o = 0; o < view.operands.size(); ++o) {
    out += "<tr>" + tag("th", view.operands[o], "operand");
    for (size_t i = 0; i < view.nodes.size(); ++i) {
      const ViewCell& c = view.cells[o][i];
      bool changed = before && !(c == before->cells[o][i]);
      out += "<td class=\"" + pod_class(c) + (changed ? " changed" : "") + "\" data-node=\"" +
             html_escape(view.nodes[i].name) + "\" data-operand=\"" + html_escape(view.operands[o]) + "\">";
      out += tag("span", !c.has_daemonset ? "no DaemonSet" : c.wants ? "wanted" : "not wanted", "want");
      out += tag("span", c.pod, "pod");
      if (changed) out += tag("span", "changed", "mark");
      out += "</td>";
    }
    out += "</tr>";
  }
  return out + "</tbody></table></div>";
}

std::string html_document(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
         "<title>" +
         html_escape(title) + "</title>\n<style>\n" + html_asset("ui.css") +
         "</style>\n</head>\n"
         "<body class=\"report\">\n<header><h1>" +
         html_escape(title) + "</h1></header>\n" + body + "\n</body>\n</html>\n";
}

std::string render_matrix_html(const PlacementView& view, const std::string& matrix_text) {
  return html_document(
      "gpuops matrix: namespace " + view.namespace_,
      "<section>" + render_view_table(view) + "<h2>gpuops matrix</h2>" + tag("pre", matrix_text) + "</section>");
}

std::string render_diagnose_html(const std::vector<Finding>& findings) {
  std::string body =
      "<section><table class=\"findings\"><thead><tr><th>node</th><th>operand</th><th>severity</th>"
      "<th>finding</th><th>reason</th><th>evidence</th></tr></thead><tbody>";
  for (const auto& f : findings) {
    std::string sev = severity_name(f.severity);
    body += "<tr class=\"sev-" + sev + "\">" + tag("td", f.node) + tag("td", f.operand.empty() ? "-" : f.operand) +
            tag("td", sev, "sev") + tag("td", f.name) + tag("td", f.reason) + "<td>";
    for (const auto& [k, v] : f.evidence) body += tag("div", k + ": " + (v.empty() ? "\"\"" : v), "evidence");
    body += "</td></tr>";
  }
  body += "</tbody></table>";
  if (findings.empty()) body += tag("p", "No findings at this severity.");
  return html_document("gpuops diagnose", body + "</section>");
}

std::string render_lab_html(const std::vector<HtmlStep>& steps) {
  std::string body;
  const PlacementView* prev = nullptr;
  for (const auto& st : steps) {
    body += "<section class=\"step\" id=\"step-" + std::to_string(st.number) + "\">" +
            tag("h2", "Step " + std::to_string(st.number) + ": " + st.title);
    std::string commands, said;
    for (const auto& l : st.lines) {
      if (l.rfind("kubectl ", 0) == 0)
        commands += "$ " + l + "\n";
      else if (l.rfind("| ", 0) != 0)
        said += l + "\n";
    }
    if (!commands.empty()) body += tag("h3", "Commands") + tag("pre", commands, "commands");
    if (!said.empty()) body += tag("h3", "What happened") + tag("pre", said, "narration");
    if (!st.files.empty()) {
      // The deliverables (out/) open, what the step applied or installed
      // (k8s/, the scripts) folded: a teacher checks the first.
      body += tag("h3", "Files it wrote");
      for (const auto& [path, text] : st.files) {
        const bool deliverable = path.rfind("out/", 0) == 0;
        body += std::string("<details class=\"file\"") + (deliverable ? " open" : "") + ">" + tag("summary", path) +
                tag("pre", text, "file-text") + "</details>";
      }
    }
    body += tag("h3", "The view after it") + render_view_table(st.view, prev);
    std::vector<std::string> changes = prev ? view_changes(*prev, st.view) : std::vector<std::string>{};
    body += tag("h3", "What changed, and why") + "<ul class=\"changes\">";
    if (!prev)
      body += tag("li", "the starting point");
    else if (changes.empty())
      body += tag("li", "nothing in the view");
    for (const auto& c : changes) body += tag("li", c);
    body += "</ul></section>";
    prev = &st.view;
  }
  return html_document("gpuops lab run: the eight steps", body);
}

}  // namespace gpuops::core

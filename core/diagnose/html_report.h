// core/diagnose/html_report.h: the HTML of `gpuops serve --ui` (its files) and the
// self-contained HTML reports (`matrix -o html`, `diagnose -o html`,
// `lab run --html`).
//
// Every string that comes from a cluster (node names, label keys and
// values, taints, reasons) goes through html_escape: label values are the
// cluster's users' text, and must never become markup.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/analysis/placement_view.h"
#include "core/diagnose/finding.h"

namespace gpuops::core {

// A file of data/html/ compiled into the binary ("ui.html", "ui.js",
// "ui.css", "report.css"); "" for another name.
std::string html_asset(const std::string& name);

// `s` with & < > " ' replaced by their character references (&amp; &lt;
// &gt; &quot; &#39;), safe in element text and quoted attribute values.
std::string html_escape(const std::string& s);

// The placement view as an HTML <table class="report-grid"> (the live
// page's layout: a column per node, a row per operand, each cell's two
// words). With `before` (same nodes and operands, else ignored): the cells
// and node headers that differ from it carry class "changed" and the word
// "changed".
std::string render_view_table(const PlacementView& view, const PlacementView* before = nullptr);

// A whole self-contained HTML document: data/html/ui.css inline, a
// Content-Security-Policy <meta> that allows no script and no fetch
// (default-src 'none'; style-src 'unsafe-inline'), `title` escaped, `body`
// as given (markup built by the functions here).
std::string html_document(const std::string& title, const std::string& body);

// `gpuops matrix -o html`: the view, then the matrix lines (`matrix_text`,
// render_matrix's text) in a <pre>.
std::string render_matrix_html(const PlacementView& view, const std::string& matrix_text);

// `gpuops diagnose -o html`: one table row per finding (node, operand,
// severity, name, reason, evidence).
std::string render_diagnose_html(const std::vector<Finding>& findings);

// One step of `gpuops lab run --html`.
struct HtmlStep {
  int number = 0;
  std::string title;
  std::vector<std::string> lines;  // the narration: commands and what they did
  PlacementView view;              // after the step
  // The files the step wrote, in order: path relative to the working
  // directory ("out/driver.txt") and whole text (core::LabRunOptions::on_file).
  std::vector<std::pair<std::string, std::string>> files;
};
// Each step: its title, its commands (the lines starting "kubectl "), the
// rest of its narration, the files it wrote in full (the deliverables under
// out/ open, its manifests and scripts folded in <details>), the view after it
// with what changed since the previous step marked, and view_changes' lines
// (the reasons).
std::string render_lab_html(const std::vector<HtmlStep>& steps);

}  // namespace gpuops::core

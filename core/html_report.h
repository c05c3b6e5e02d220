// core/html_report.h: the HTML of `gpuops serve --ui` (its files) and the
// self-contained HTML reports (`matrix -o html`, `diagnose -o html`,
// `lab run --html`).
//
// Every string that comes from a cluster (node names, label keys and
// values, taints, reasons) goes through html_escape: label values are the
// cluster's users' text, and must never become markup.
#pragma once

#include <string>

namespace gpuops::core {

// A file of data/html/ compiled into the binary ("ui.html", "ui.js",
// "ui.css", "report.css"); "" for another name.
std::string html_asset(const std::string& name);

// `s` with & < > " ' replaced by their character references (&amp; &lt;
// &gt; &quot; &#39;), safe in element text and quoted attribute values.
std::string html_escape(const std::string& s);

}  // namespace gpuops::core

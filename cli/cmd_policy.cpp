// gpuops policy: the ValidatingAdmissionPolicy and binding that refuse, at the
// API server, a Node label write that silently breaks GPU workloads
// (core/gpu_operator/admission_policy.h; docs/POLICY.md).
#include <boost/json.hpp>

#include <iostream>
#include <string>
#include <vector>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "core/base/errors.h"
#include "core/gpu_operator/admission_policy.h"
#include "core/gpu_operator/operands.h"

namespace gpuops::cli {

int cmd_policy(const Args& args, std::ostream& out, std::ostream& err) {
  cxxopts::Options opts(
      command_name("policy"),
      "print an admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy and its binding (Kubernetes 1.30 and "
      "later) that refuse a Node label write leaving a combination of GPU Operator deploy labels that silently "
      "breaks GPU workloads, or a value the operator never writes; generated from the operand catalog and the "
      "rules gpuops audit uses. Apply it with kubectl apply -f -. Roll out with --validation-actions Audit, then "
      "Warn, then Deny (docs/POLICY.md).");
  opts.add_options()("o,output", "yaml (two documents) or json (a v1 List)",
                     cxxopts::value<std::string>()->default_value("yaml"))(
      "validation-actions", "the binding's validationActions: Deny, Warn, Audit (comma-separated; not Deny with Warn)",
      cxxopts::value<std::vector<std::string>>()->default_value("Deny"))(
      "rules", "only these rules (comma-separated ids; see --list-rules); default every rule",
      cxxopts::value<std::vector<std::string>>())(
      "operands", "operand catalog: gpu-operator (v26.7), gpu-operator-v25.3, lab, or a catalog file",
      cxxopts::value<std::string>()->default_value("gpu-operator"))(
      "name", "the policy's and the binding's name",
      cxxopts::value<std::string>()->default_value("gpuops-gpu-deploy-labels"))(
      "list-rules", "print each rule's id and what it refuses, then exit")("h,help", "show this help");
  auto r = parse(opts, args);
  if (r.count("help")) {
    out << opts.help();
    return 0;
  }
  if (!r.unmatched().empty()) throw core::InputError("", 0, "", "unexpected argument \"" + r.unmatched()[0] + "\"");
  const std::string output = r["output"].as<std::string>();
  if (!structured_output(output))
    throw core::InputError("", 0, "--output", "\"" + output + "\": allowed formats are json and yaml");
  const std::string catalog_name = r["operands"].as<std::string>();
  core::Catalog catalog = core::load_catalog(catalog_name);
  if (r.count("list-rules")) {
    for (const auto& rule : core::admission_policy_rules(catalog)) out << rule.id << "\t" << rule.summary << "\n";
    return done(0, out, err);
  }
  core::AdmissionPolicyOptions o;
  o.name = r["name"].as<std::string>();
  o.validation_actions = r["validation-actions"].as<std::vector<std::string>>();
  if (r.count("rules")) o.rules = r["rules"].as<std::vector<std::string>>();
  o.catalog_name = catalog_name;
  boost::json::array objects = core::admission_policy(catalog, o);
  if (output == "json") {
    write_document(out, boost::json::object{{"apiVersion", "v1"}, {"kind", "List"}, {"items", objects}}, "json");
  } else {
    for (size_t i = 0; i < objects.size(); ++i) {
      if (i) out << "---\n";
      write_document(out, objects[i], "yaml");
    }
  }
  return done(0, out, err);
}

}  // namespace gpuops::cli

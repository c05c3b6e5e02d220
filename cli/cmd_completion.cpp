// gpuops completion bash|zsh, and the hidden `gpuops __complete WORDS...`
// the scripts call, as cobra does (spf13/cobra completions.go: the shell
// script hands the words typed so far, the last one partial, to the program,
// which prints one candidate per line).
//
// Candidates: after `gpuops`, the command names; for order-check, diagnose
// and explain's first argument, the nodes of the cluster the words name
// (--kubeconfig, --context, --snapshot, as the command would read it: what
// kubectl completes for `kubectl get node <TAB>`); for explain's second, the
// operands of the catalog (--operands, else the one the install calls for).
// Anything else, and any error reaching the cluster, completes to nothing
// (the shell then completes file names).
#include <iostream>
#include <sstream>

#include "cli/app.h"
#include "cli/cluster_options.h"
#include "cli/commands.h"
#include "core/kube/names.h"

namespace gpuops::cli {

namespace {

const char* kBash = R"sh(# bash completion for gpuops: source <(gpuops completion bash)
_gpuops() {
  local words=("${COMP_WORDS[@]:1:COMP_CWORD}")
  # The candidates as lines, taken as they are: gpuops filters them by the
  # partial word, and no shell expansion runs on them (compgen -W would).
  mapfile -t COMPREPLY < <("${COMP_WORDS[0]}" __complete "${words[@]}" 2>/dev/null)
}
complete -o default -F _gpuops gpuops kubectl-gpuops
)sh";

const char* kZsh = R"sh(#compdef gpuops kubectl-gpuops
# zsh completion for gpuops: source <(gpuops completion zsh)
_gpuops() {
  local -a candidates
  candidates=("${(@f)$(${words[1]} __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")
  candidates=(${candidates:#})
  if (( ${#candidates} )); then compadd -a candidates; else _files; fi
}
compdef _gpuops gpuops kubectl-gpuops
)sh";

}  // namespace

int cmd_completion(const Args& args, std::ostream& out, std::ostream&) {
  if (args.size() == 1 && args[0] == "bash")
    out << kBash;
  else if (args.size() == 1 && args[0] == "zsh")
    out << kZsh;
  else if (args.size() == 1 && (args[0] == "-h" || args[0] == "--help"))
    out << "Usage: gpuops completion bash|zsh\n\nPrints the shell's completion script: `source <(gpuops completion "
           "bash)` in ~/.bashrc, `source <(gpuops completion zsh)` in ~/.zshrc.\n";
  else
    throw UsageError("give bash or zsh");
  return 0;
}

int cmd_complete(const Args& args, std::ostream& out, std::ostream&) {
  if (args.size() <= 1) {
    std::string partial = args.empty() ? "" : args[0];
    for (const auto& name : command_names())
      if (name.starts_with(partial)) out << name << "\n";
    return 0;
  }
  const std::string& command = args[0];
  const std::string& partial = args.back();
  if (partial.starts_with("-")) return 0;
  if (command != "order-check" && command != "diagnose" && command != "explain") return 0;
  // The words before the partial one, as the command would parse them.
  Args words(args.begin() + 1, args.end() - 1);
  if (!words.empty() && words.back().starts_with("-") && words.back().find('=') == std::string::npos)
    return 0;  // completing a flag's value: file names
  cxxopts::Options opts(command_name(command));
  add_cluster_options(opts);
  opts.allow_unrecognised_options();
  try {
    auto r = parse(opts, words);
    size_t position = r.unmatched().size();  // positional arguments before the partial one
    if (command == "order-check" && position > 0) return 0;
    if (command == "explain" && position > 1) return 0;
    std::ostringstream notes;
    LoadedState l = load_state(r, notes);
    if (command == "explain" && position == 1) {
      for (const auto& op : l.catalog.operands)
        if (op.name.starts_with(partial) && core::validate_dns1123_label(op.name).empty()) out << op.name << "\n";
      return 0;
    }
    // Only what is a node name (a DNS-1123 subdomain): nothing a shell could
    // take for more than a word, whatever the input held.
    for (const auto& n : l.node_names)
      if (n.starts_with(partial) && core::validate_dns1123_subdomain(n).empty()) out << n << "\n";
  } catch (const std::exception&) {
    // No candidates: the shell falls back to file names.
  }
  return 0;
}

}  // namespace gpuops::cli

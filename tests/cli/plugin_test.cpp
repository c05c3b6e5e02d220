// Run as the kubectl plugin (a kubectl-gpuops on PATH, as cmake --install
// and the .deb name it), the help texts say `kubectl gpuops`, the way a user
// types it; as gpuops they say gpuops. The binary itself, through a link.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace fs = std::filesystem;

namespace {

std::string output_of(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  ::pclose(p);
  return out;
}

TEST(Plugin, HelpSaysKubectlGpuopsWhenRunAsThePlugin) {
  fs::path dir = fs::temp_directory_path() / "gpuops-plugin-test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::create_symlink(GPUOPS_BINARY, dir / "kubectl-gpuops");
  const std::string plugin = (dir / "kubectl-gpuops").string();
  std::string help = output_of(plugin + " --help");
  EXPECT_NE(help.find("Usage: kubectl gpuops <command> [options]\n       kubectl gpuops --version\n"),
            std::string::npos)
      << help;
  EXPECT_NE(help.find("Run 'kubectl gpuops <command> --help'"), std::string::npos) << help;
  std::string audit = output_of(plugin + " audit --help");
  EXPECT_NE(audit.find("Usage:\n  kubectl gpuops audit [OPTION...]"), std::string::npos) << audit;
  EXPECT_NE(output_of(plugin + " audit --no-such-flag").find("Run 'kubectl gpuops audit --help' for usage."),
            std::string::npos);
  // The version line names the tool, as `kubectl-gpuops --version` is
  // checked by scripts/package-test.sh.
  EXPECT_EQ(output_of(plugin + " --version").rfind("gpuops ", 0), 0u);
  std::string direct = output_of(std::string(GPUOPS_BINARY) + " audit --help");
  EXPECT_NE(direct.find("Usage:\n  gpuops audit [OPTION...]"), std::string::npos) << direct;
  fs::remove_all(dir);
}

}  // namespace

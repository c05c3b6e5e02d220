// Reading an input file: regular files only, bounded in size; error texts
// bounded whatever the input put in them.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "../../common/temp_dir.h"
#include "core/base/errors.h"
#include "core/base/input_file.h"
#include "core/codec/documents.h"
#include "core/scenario/scenario.h"

using namespace gpuops;

namespace {

using Dir = gpuops::testing::TempDir;

std::string refused(const std::string& path) {
  try {
    core::read_input_file(path);
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.file(), path);
    return e.message();
  }
  ADD_FAILURE() << "read " << path;
  return "";
}

}  // namespace

TEST(InputFile, SpecialFilesAreRefusedWithoutBlocking) {
  Dir d;
  std::string fifo = d.path + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(refused(fifo), "not a regular file (a FIFO)");
  EXPECT_EQ(refused("/dev/zero"), "not a regular file (a character device)");
  EXPECT_EQ(refused(d.path), "not a regular file (a directory)");
  EXPECT_EQ(refused(d.path + "/none"), "cannot read file: No such file or directory");
  // Every reader goes through it.
  EXPECT_THROW(core::read_paths({fifo}), core::InputError);
  EXPECT_THROW(core::load_scenario(fifo), core::InputError);
  std::filesystem::create_symlink("/dev/zero", d.path + "/zero.yaml");
  EXPECT_THROW(core::read_paths({d.path + "/zero.yaml"}), core::InputError);
}

TEST(InputFile, SizeIsCapped) {
  Dir d;
  std::string f = d.path + "/f.json";
  std::ofstream(f) << std::string(1000, ' ') << "{}";
  auto old = core::max_input_bytes();
  core::set_max_input_bytes(1002);
  EXPECT_EQ(core::read_input_file(f).size(), 1002u);
  core::set_max_input_bytes(1001);
  EXPECT_EQ(refused(f), "larger than 1001 bytes (the input limit; set GPUOPS_MAX_INPUT_BYTES to raise it)");
  core::set_max_input_bytes(old);
}

// The default limit is half the memory gpuops may use, never under 2 GiB:
// a 65,000-node dump (about 2.7 GiB at 8 operands, bench/make_dump.cpp)
// is read without GPUOPS_MAX_INPUT_BYTES on a machine of 6 GiB or more.
TEST(InputFile, TheDefaultLimitIsHalfTheMemoryAndAtLeastTwoGiB) {
  constexpr std::size_t GiB = std::size_t{1} << 30;
  EXPECT_EQ(core::input_limit_for_memory(0), 2 * GiB);
  EXPECT_EQ(core::input_limit_for_memory(1 * GiB), 2 * GiB);
  EXPECT_EQ(core::input_limit_for_memory(4 * GiB), 2 * GiB);
  EXPECT_EQ(core::input_limit_for_memory(6 * GiB), 3 * GiB);
  EXPECT_EQ(core::input_limit_for_memory(23 * GiB), 23 * GiB / 2);
  // This machine's memory is read (/proc's page count, or a lower cgroup limit).
  EXPECT_GT(core::machine_memory_bytes(), 64u << 20);
  EXPECT_EQ(core::default_max_input_bytes(), core::input_limit_for_memory(core::machine_memory_bytes()));
}

// what() is a C string: a NUL in a name used to end the message there
// (`metadata.name: Node "a`). It is written as Go's %q writes it.
TEST(ErrorText, ANulByteDoesNotCutTheMessageShort) {
  core::InputError e("d.json", 0, "metadata.name", std::string("Invalid value: \"a\0b\": not a name", 32));
  EXPECT_EQ(std::string(e.what()), "d.json: metadata.name: Invalid value: \"a\\x00b\": not a name");
  core::ClusterError c(std::string("pod \"p\0q\" failed", 16));
  EXPECT_EQ(std::string(c.what()), "pod \"p\\x00q\" failed");
}

TEST(ErrorText, IsBoundedWhateverTheInput) {
  std::string name(50 * 1000 * 1000, 'a');
  std::string msg = "Invalid value: \"" + name + "\"";
  core::InputError e("f.yaml", 3, "metadata.name", msg);
  EXPECT_LE(std::string(e.what()).size(), 4096u + 100);
  EXPECT_EQ(e.message(), msg.substr(0, 4096) + "... (" + std::to_string(msg.size() - 4096) + " more bytes)");
  core::ClusterError c(name);
  EXPECT_LE(std::string(c.what()).size(), 8192u + 40);
  // A cut never splits a UTF-8 character.
  std::string u = std::string(4095, 'x') + "\xc3\xa9" + "tail";
  EXPECT_EQ(core::clip_message(u, 4096).substr(0, 4096), std::string(4095, 'x') + ".");
}

// core/base/input_file.h: how gpuops reads a whole input file (a snapshot, a
// manifest, a scenario, an operand catalog, a learner's file), so that no
// file can hang it or exhaust its memory.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace gpuops::core {

// The contents of `path`. Opened without blocking and checked before any
// byte is read. Throws InputError(path, 0, "", ...):
//  * "cannot read file: <reason>" when it cannot be opened;
//  * "not a regular file (a FIFO|a character device|a block device|a socket|
//    a directory)": a FIFO would hang the read, /dev/zero never ends;
//  * "larger than N bytes (the input limit; set GPUOPS_MAX_INPUT_BYTES to
//    raise it)" when the file, or what it grew to while read, is over
//    max_input_bytes().
// A symbolic link is followed (to a regular file, as any CLI does).
std::string read_input_file(const std::string& path);

// Reads `path` as read_input_file does (the same checks and errors, the same
// size limit), handing its bytes to `chunk` a piece at a time (at most 1 MiB
// each, in order) instead of keeping them: for readers that parse as they go.
// `chunk` returns false to stop reading (the rest of the file is not read).
// Exceptions thrown by `chunk` propagate.
void read_input_chunks(const std::string& path, const std::function<bool(const char* data, std::size_t size)>& chunk);

// The one rule for a file found inside a folder gpuops was given (a
// must-gather, a folder of dumps, a learner's working directory), rather
// than a path the user named: it must be that folder's own file. A user
// names a file on purpose and a symbolic link they name is followed; a
// folder is often someone else's (a must-gather attached to a bug report),
// and a link planted in it must not make gpuops read, and print in an
// error, a file of the machine it runs on (a service-account token, a
// .netrc). "" when `path` is the folder's own, else why not (to follow the
// entry's name in a message):
//  * "is a symbolic link that leads nowhere";
//  * "leads outside <folder> (to <target>)": a symbolic link, here or in a
//    folder on the way, out of the folder (one inside it is fine);
//  * "has N hard links, so it may be a file outside <folder>": the
//    other names of a hard link cannot be found, and a hard link defeats the
//    check above; a folder's own files have one.
// Not for a file that something else may swap while it is read: use
// open_entry_problem on the open descriptor for that.
std::string folder_entry_problem(const std::string& folder, const std::string& path);

// folder_entry_problem for a file already open as `fd`, checked on what the
// kernel opened (its path in /proc/self/fd and its link count), for a
// folder a running process may change (a learner's scripts). `root` is the
// folder's canonical path; `named`, how messages name it ("the working
// directory").
std::string open_entry_problem(const std::string& root, int fd, const std::string& named);

// What a file of st_mode `mode` is when it is not a regular file: "a FIFO",
// "a character device", "a block device", "a socket", "a directory", else
// "not a regular file" (for messages).
std::string file_kind(unsigned mode);

// The size limit of read_input_file, bytes. Default
// default_max_input_bytes() (worked out on first use); the CLI sets it from
// GPUOPS_MAX_INPUT_BYTES. Not thread-safe to change while reading.
std::size_t max_input_bytes();
void set_max_input_bytes(std::size_t bytes);

// The smallest default limit: 2 GiB.
inline constexpr std::size_t kMinInputLimitBytes = std::size_t{2} << 30;

// The default limit for a machine of `memory_bytes`: half of it, at least
// kMinInputLimitBytes. The snapshot commands keep a file in at most 1.5x
// its size and plan in about 2x (docs/PERFORMANCE.md), so a file at the
// limit fits beside what else runs, and a 65,000-node dump (about 2.7 GiB
// at 8 operands) is read on a machine of 6 GiB or more without raising it.
std::size_t input_limit_for_memory(std::size_t memory_bytes);

// The memory gpuops may use, bytes: the machine's (sysconf _SC_PHYS_PAGES x
// _SC_PAGESIZE), or its cgroup's limit when lower (cgroup v2 memory.max,
// v1 memory.limit_in_bytes; "max" is no limit), as in a container with a
// memory limit. 0 when none can be read.
std::size_t machine_memory_bytes();

// input_limit_for_memory(machine_memory_bytes()).
std::size_t default_max_input_bytes();

}  // namespace gpuops::core

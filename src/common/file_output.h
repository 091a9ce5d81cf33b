// How kvbench writes a file the user named (--json, --hgrm_prefix, --ack_file); kvb follows the
// same rule (scripts/kvbtools/core/output.py, docs/kvbtools.md):
//
//  - a regular file, or no file, is replaced atomically: PATH.tmp is written in the same
//    directory and renamed over PATH, so a reader sees the old file or the new one, never half;
//  - a symbolic link is followed to the end of its chain and that target is replaced the same
//    way: the link stays, and points at the new file;
//  - /dev/stdout (a link to /proc/self/fd/1), /dev/stderr and /dev/fd/N are written through that
//    descriptor, after what the process wrote there already;
//  - anything else that exists (a character device such as /dev/null, a FIFO) is written in
//    place: it is never replaced by a regular file;
//  - a failure (no space, /dev/full, a read-only directory) returns IOError naming the path and
//    the reason, removes the temporary file, and leaves what was at PATH as it was.
//
// Thread-safety: the functions keep no state; two writers of the same PATH race on PATH.tmp.
#pragma once

#include <sys/types.h>

#include <string>

#include "common/status.h"

namespace kvbench {

// Where a write to a path goes, and how.
struct OutputTarget {
  std::string path;       // the file to write: the path itself, or the end of its chain of links
  bool in_place = false;  // write `path` directly, not through PATH.tmp (a device, a FIFO)
  int fd = -1;            // >= 0: write this descriptor of the process instead (/dev/stdout)
};

// Resolves `path` by the rule above. Fails (IOError) on a directory, a chain of more than 40
// links, or a link that cannot be read. REQUIRES: !path.empty().
Status ResolveOutput(const std::string& path, OutputTarget* target);

// Writes `content` to `path` by the rule above.
Status WriteOutputFile(const std::string& path, const std::string& content);

// Whether WriteOutputFile(path, ...) could write, found without touching what is at `path`: for a
// file, PATH.tmp is created and removed again (a leftover PATH.tmp is opened, not removed); a
// device or FIFO is checked with access(W_OK), never opened (a FIFO would wait for a reader).
// IOError as WriteOutputFile's for the same cause.
Status CheckOutputWritable(const std::string& path);

// The file a path names, for telling whether two paths of a command line are one file, by the
// rule kvb follows too (scripts/kvbtools/core/output.py, check_outputs): links followed to the
// end of their chain (a dangling one to where it points), made absolute with every directory on
// the way resolved (`./a`, `a` and `d/../a` are one name), and, when it exists, its device and
// inode (two hard links are one file).
struct PathIdentity {
  // False for standard output, a descriptor, a device or a FIFO (written in place: two flags may
  // name /dev/null) and for a path that cannot be resolved: it is the same as nothing.
  bool valid = false;
  std::string name;  // absolute, resolved
  bool exists = false;
  dev_t device = 0;
  ino_t inode = 0;

  // Whether `other` is the same file (or, not there yet, the same name).
  bool Same(const PathIdentity& other) const;
  // Whether this lies in the directory `dir`, at any depth.
  bool Inside(const PathIdentity& dir) const;
};

// `path` (a file or a directory) identified by the rule above. REQUIRES: !path.empty().
PathIdentity IdentifyPath(const std::string& path);

}  // namespace kvbench

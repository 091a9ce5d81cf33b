// What --io_bound and --drop_caches need from the machine: a memory cgroup that bounds what the
// process may cache (for engines that read through the OS page cache), and the kernel's
// drop_caches switch. Each call says why it cannot be honoured instead of running a cached test
// under an IO-bound name.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace kvbench {

// Moves this process into a new memory cgroup, a child of its own (cgroup v1
// memory.limit_in_bytes or v2 memory.max), limited to `limit` bytes of anonymous memory and page
// cache together. *mechanism says which file was written. Fails with the reason (not root, no
// memory controller, the controller not delegated) and changes nothing then. Call before any
// thread starts. The cgroup is removed when the process exits (atexit).
Status LimitMemoryWithCgroup(uint64_t limit, std::string* mechanism);

// OK when DropCaches can work: root, and /proc/sys/vm/drop_caches writable.
Status CheckDropCaches();

// sync(), then drops the clean page cache, dentries and inodes of the whole machine
// (echo 3 > /proc/sys/vm/drop_caches).
Status DropCaches();

}  // namespace kvbench

#include "kv/engine.h"

#include <sys/stat.h>

#include <filesystem>
#include <system_error>

#include "kv/database_dir.h"

namespace kvbench {

uint64_t Engine::SizeOnDisk() const {
  namespace fs = std::filesystem;
  std::error_code ec;
  uint64_t total = 0;
  for (auto it = fs::recursive_directory_iterator(path_, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    struct stat st;
    if (it->path().filename() == kLockFile) continue;  // kvbench's, not the database's
    if (::lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      total += static_cast<uint64_t>(st.st_blocks) * 512;  // allocated, as du counts
    }
  }
  return total;
}

}  // namespace kvbench

// A 64-bit ELF file mapped read-only, for the audits that inspect shared objects (elf_audit.cc,
// arm_atomics.cc). Mapped, not read: only the pages inspected are touched, and dropped when the
// object goes away, so auditing a 10 MB library does not inflate the peak RSS a run reports.
#pragma once

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <string_view>

namespace kvbench {

class MappedElf {
 public:
  explicit MappedElf(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
      size_ = static_cast<size_t>(st.st_size);
      map_ = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    }
    close(fd);
  }
  ~MappedElf() {
    if (map_ != MAP_FAILED) munmap(map_, size_);
  }
  MappedElf(const MappedElf&) = delete;
  MappedElf& operator=(const MappedElf&) = delete;

  // The whole file when it could be mapped and is a 64-bit ELF file, else empty.
  std::string_view bytes() const {
    if (map_ == MAP_FAILED) return {};
    const std::string_view b(static_cast<const char*>(map_), size_);
    if (b.size() < sizeof(Elf64_Ehdr) || std::memcmp(b.data(), ELFMAG, SELFMAG) != 0 ||
        b[EI_CLASS] != ELFCLASS64) {
      return {};
    }
    return b;
  }

 private:
  void* map_ = MAP_FAILED;
  size_t size_ = 0;
};

}  // namespace kvbench

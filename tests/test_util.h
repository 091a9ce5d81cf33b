// Helpers shared by the test suites.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

namespace kvbench {
namespace test {

// A fresh directory under $TEST_TMPDIR (or /tmp), removed when the object goes away.
class TempDir {
 public:
  TempDir() {
    const char* base = getenv("TEST_TMPDIR");
    std::string tmpl = std::string(base ? base : "/tmp") + "/kvbench-test-XXXXXX";
    path_ = mkdtemp(&tmpl[0]);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace test
}  // namespace kvbench

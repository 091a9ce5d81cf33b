// Helpers shared by the test suites.
#pragma once

#include <gtest/gtest.h>
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

// For EXPECT_TRUE: whether `text` holds `part`, saying which part and showing the whole text when
// it does not.
inline ::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "no \"" << part << "\" in:\n" << text;
}

}  // namespace test
}  // namespace kvbench

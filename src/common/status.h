// Status: the outcome of every fallible call in kvbench.
//
// ok, not-found (a normal answer for a read), or an error carrying a human-readable message that
// includes the engine's own text. No engine error code leaves its adapter.
#pragma once

#include <string>
#include <utility>

namespace kvbench {

class Status {
 public:
  enum class Code { kOk = 0, kNotFound, kInvalidArgument, kNotSupported, kIOError, kCorruption };

  Status() = default;
  static Status OK() { return Status(); }
  // Without a message: the common answer of a read, so it builds no string.
  static Status NotFound() { return Status(Code::kNotFound); }
  static Status NotFound(std::string msg) { return Status(Code::kNotFound, std::move(msg)); }
  static Status InvalidArgument(std::string msg) {
    return Status(Code::kInvalidArgument, std::move(msg));
  }
  static Status NotSupported(std::string msg) {
    return Status(Code::kNotSupported, std::move(msg));
  }
  static Status IOError(std::string msg) { return Status(Code::kIOError, std::move(msg)); }
  static Status Corruption(std::string msg) { return Status(Code::kCorruption, std::move(msg)); }

  bool ok() const { return code_ == Code::kOk; }
  bool IsNotFound() const { return code_ == Code::kNotFound; }
  bool IsInvalidArgument() const { return code_ == Code::kInvalidArgument; }
  bool IsNotSupported() const { return code_ == Code::kNotSupported; }
  Code code() const { return code_; }
  const std::string& message() const { return msg_; }

  // "OK", "NotFound: ...", "IO error: ...".
  std::string ToString() const;

 private:
  explicit Status(Code c) : code_(c) {}
  Status(Code c, std::string msg) : code_(c), msg_(std::move(msg)) {}
  Code code_ = Code::kOk;
  std::string msg_;
};

}  // namespace kvbench

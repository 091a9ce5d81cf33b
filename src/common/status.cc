#include "common/status.h"

namespace kvbench {

std::string Status::ToString() const {
  const char* prefix = "OK";
  switch (code_) {
    case Code::kOk:
      return "OK";
    case Code::kNotFound:
      prefix = "NotFound";
      break;
    case Code::kInvalidArgument:
      prefix = "Invalid argument";
      break;
    case Code::kNotSupported:
      prefix = "Not supported";
      break;
    case Code::kIOError:
      prefix = "IO error";
      break;
    case Code::kCorruption:
      prefix = "Corruption";
      break;
  }
  return msg_.empty() ? std::string(prefix) : std::string(prefix) + ": " + msg_;
}

}  // namespace kvbench

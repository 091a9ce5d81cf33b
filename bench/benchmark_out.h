// --benchmark_out=PATH by kvbench's write rule (common/file_output.h). Google Benchmark opens its
// output file before it matches --benchmark_filter, so a filter that matches nothing left an
// empty file, or truncated the results that were there. Instead, Google Benchmark writes
// PATH.tmp (next to the end of PATH's chain of links), which is renamed over PATH once benchmarks
// ran and wrote it, and removed otherwise: PATH is the whole new document or what it was. A
// device, FIFO or descriptor (/dev/stdout) is given to Google Benchmark as it is.
//
// Thread-safety: one per process, used by main() only.
#pragma once

#include <string>

namespace kvbench {
namespace micro {

class BenchmarkOut {
 public:
  // Points --benchmark_out=PATH in argv (left to Google Benchmark's parser) at PATH.tmp. argv
  // then points into this object: it must outlive benchmark::Initialize.
  BenchmarkOut(int argc, char** argv);
  BenchmarkOut(const BenchmarkOut&) = delete;
  BenchmarkOut& operator=(const BenchmarkOut&) = delete;

  // Whether --benchmark_out was given.
  bool given() const { return !path_.empty(); }

  // After the run: PATH.tmp renamed over PATH when `ran` and it holds something, else removed.
  // False, with the reason on stderr, when the rename fails.
  bool Finish(bool ran);

 private:
  std::string path_;  // as given
  std::string tmp_;   // where Google Benchmark writes: empty when it writes PATH itself
  std::string target_;
  std::string arg_;  // the flag as argv now holds it
};

}  // namespace micro
}  // namespace kvbench

// crc32c benchmarks: every kvbench implementation (crc32c/table, hw_1way, hw_3way), the
// dispatching crc32c::Extend the KV workloads use (crc32c/extend), and RocksDB's crc32c as the
// installed library was built (crc32c/rocksdb_lib).
#include <string>

#include "common/crc32c.h"
#include "micro.h"
#ifdef KVBENCH_HAVE_ROCKSDB
#include "rocksdb_crc32c.h"
#endif

namespace kvbench {
namespace micro {

namespace {

// `fn` == nullptr means unavailable here: the benchmark reports `why` instead of a number.
void BM_Crc32c(benchmark::State& state, crc32c::ExtendFn fn, const std::string& label,
               const std::string& why, size_t block_size) {
  if (fn == nullptr) {
    state.SkipWithError(why.c_str());
    return;
  }
  const Blocks blocks = InputBlocks(block_size);
  RunOverBlocks(state, blocks, [&](size_t i) { return fn(0, blocks.block(i), blocks.size); });
  state.SetLabel(label);
}

void Register(const std::string& variant, crc32c::ExtendFn fn, const std::string& label,
              const std::string& why) {
  for (size_t size : GetOptions().block_sizes) {
    benchmark::RegisterBenchmark(BenchmarkName("crc32c", variant, size).c_str(), BM_Crc32c, fn,
                                 label, why, size);
  }
}

}  // namespace

void RegisterCrc32c() {
  size_t count = 0;
  const crc32c::Implementation* impls = crc32c::Implementations(&count);
  for (size_t i = 0; i < count; ++i) {
    std::string why;
    crc32c::ExtendFn fn = crc32c::Resolve(impls[i], &why);
    Register(impls[i].name, fn, impls[i].description, why);
  }
  Register("extend", crc32c::Extend,
           std::string("crc32c::Extend -> crc32c/") + crc32c::Selected().name, "");
#ifdef KVBENCH_HAVE_ROCKSDB
  Register("rocksdb_lib", rocksdb::crc32c::Extend,
           "librocksdb " + rocksdb::GetRocksVersionAsString(true) +
               " as installed: " + rocksdb::crc32c::IsFastCrc32Supported(),
           "");
#endif
}

void AddCrc32cContext() {
  const crc32c::CpuFeatures& cpu = crc32c::DetectCpu();
  benchmark::AddCustomContext("crc32c_extend_uses", crc32c::Selected().name);
  benchmark::AddCustomContext("cpu_crc32c_instruction", cpu.crc32c ? "yes" : "no");
  benchmark::AddCustomContext("cpu_carryless_multiply", cpu.clmul ? "yes" : "no");
#ifdef KVBENCH_HAVE_ROCKSDB
  benchmark::AddCustomContext("rocksdb_version", rocksdb::GetRocksVersionAsString(true));
  benchmark::AddCustomContext("rocksdb_fast_crc32", rocksdb::crc32c::IsFastCrc32Supported());
#else
  benchmark::AddCustomContext("rocksdb_version", "not found at configure time");
#endif
}

}  // namespace micro
}  // namespace kvbench

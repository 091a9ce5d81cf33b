// crc32c benchmarks: every kvbench implementation (crc32c/table, hw_1way, hw_3way, fold_*), the
// dispatching crc32c::Extend (crc32c/extend), and two peers as their libraries were built:
// RocksDB's crc32c (crc32c/rocksdb_lib) and ISA-L's crc32_iscsi (crc32c/isal).
#include <string>

#include "crc32c/crc32c.h"
#include "micro.h"
#ifdef KVBENCH_HAVE_ISAL
#include "isal_crc32c.h"
#endif
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

// crc32c::Extend as a program calls it: directly, so its table lookup is inline in the loop (the
// kernels above are called through a pointer, as Extend calls them).
void BM_Crc32cExtend(benchmark::State& state, const std::string& label, size_t block_size) {
  const Blocks blocks = InputBlocks(block_size);
  RunOverBlocks(state, blocks,
                [&](size_t i) { return crc32c::Extend(0, blocks.block(i), blocks.size); });
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
  // One label per block size: the kernel of that size's class, and how it was chosen.
  const crc32c::Choice& choice = crc32c::CurrentChoice();
  for (size_t size : GetOptions().block_sizes) {
    const size_t c = crc32c::SizeClassOf(size);
    const std::string label = std::string("crc32c::Extend -> crc32c/") + choice.kernel[c]->name +
                              " (" + crc32c::ChosenByName(choice.chosen_by) + ", class " +
                              crc32c::SizeClassName(c) + ")";
    benchmark::RegisterBenchmark(BenchmarkName("crc32c", "extend", size).c_str(), BM_Crc32cExtend,
                                 label, size);
  }
#ifdef KVBENCH_HAVE_ROCKSDB
  Register("rocksdb_lib", rocksdb::crc32c::Extend,
           "librocksdb " + rocksdb::GetRocksVersionAsString(true) +
               " as installed: " + rocksdb::crc32c::IsFastCrc32Supported(),
           "");
#endif
#ifdef KVBENCH_HAVE_ISAL
  Register("isal", IsalExtend, "ISA-L " + IsalVersion() + " as installed: crc32_iscsi", "");
#endif
}

void AddCrc32cContext() {
  const crc32c::CpuFeatures& cpu = crc32c::DetectCpu();
  // crc32c::Extend's kernel per size class, how it was chosen and, when measured, from what.
  const crc32c::Choice& choice = crc32c::CurrentChoice();
  benchmark::AddCustomContext("crc32c_extend_uses", crc32c::DescribeChoice(choice));
  benchmark::AddCustomContext("crc32c_extend_chosen_by", crc32c::DescribeHow(choice));
  for (size_t c = 0; c < crc32c::kSizeClassCount; ++c) {
    const std::string rates = crc32c::DescribeRates(choice, c);
    if (rates.empty()) continue;
    benchmark::AddCustomContext("crc32c_extend_rates." + crc32c::SizeClassName(c), rates);
  }
  const auto yes_no = [&cpu](crc32c::Feature f) { return cpu.Has(f) ? "yes" : "no"; };
  benchmark::AddCustomContext("cpu_crc32c_instruction", yes_no(crc32c::kCrc32cInsn));
  benchmark::AddCustomContext("cpu_carryless_multiply", yes_no(crc32c::kClmul));
#if defined(__x86_64__)
  benchmark::AddCustomContext("cpu_vpclmulqdq_256", yes_no(crc32c::kClmul256));
  benchmark::AddCustomContext("cpu_vpclmulqdq_512", yes_no(crc32c::kClmul512));
#elif defined(__aarch64__)
  benchmark::AddCustomContext("cpu_eor3", yes_no(crc32c::kEor3));
#endif
#ifdef KVBENCH_HAVE_ROCKSDB
  benchmark::AddCustomContext("rocksdb_version", rocksdb::GetRocksVersionAsString(true));
  benchmark::AddCustomContext("rocksdb_fast_crc32", rocksdb::crc32c::IsFastCrc32Supported());
#else
  benchmark::AddCustomContext("rocksdb_version", "not found at configure time");
#endif
#ifdef KVBENCH_HAVE_ISAL
  benchmark::AddCustomContext("isal_version", IsalVersion());
#else
  benchmark::AddCustomContext("isal_version", "not found at configure time (libisal-dev)");
#endif
}

}  // namespace micro
}  // namespace kvbench

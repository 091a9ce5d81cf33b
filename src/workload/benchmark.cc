#include "workload/benchmark.h"

#include <cstdio>

#include "common/enum_names.h"

namespace kvbench {

const char* RoleName(Role role) {
  static constexpr EnumName<Role> kNames[] = {
      {Role::kReader, "reader"},
      {Role::kWriter, "writer"},
  };
  return NameOf(role, kNames, "");
}

uint64_t BenchmarkSpec::MainCount(const WorkloadOptions& o, uint64_t acked) const {
  switch (count) {
    case OpCount::kNum:
      return o.num;
    case OpCount::kReads:
      return o.TotalReads();
    case OpCount::kWrites:
      return o.TotalWrites();
    case OpCount::kAcked:
      return acked;
    case OpCount::kNone:
      break;
  }
  return 0;
}

double BenchmarkSpec::WriterBytesPerSec(const WorkloadOptions& o) const {
  if (writer_rows_per_sec > 0 && row_bytes != nullptr) {
    return writer_rows_per_sec * static_cast<double>(row_bytes(o));
  }
  return o.write_rate_limit;
}

std::string BenchmarkSpec::CountNote(const WorkloadOptions& o, uint64_t acked) const {
  const std::string n = std::to_string(MainCount(o, acked));
  std::string note = count == OpCount::kNum     ? n + " keys"
                     : count == OpCount::kAcked ? n + " acknowledged writes"
                     : count == OpCount::kReads ? n + " reads"
                                                : n + " writes";
  note += " total over " + std::to_string(o.threads) + " thread" + (o.threads == 1 ? "" : "s");
  if (o.duration_seconds > 0) {
    char duration[64];
    std::snprintf(duration, sizeof(duration), " --duration=%.3fs", o.duration_seconds);
    note += std::string(Bounded() ? ", or until" : ", ignored: runs for") + duration;
  }
  if (background != nullptr && writer_rows_per_sec > 0) {
    char rate[64];
    std::snprintf(rate, sizeof(rate), "; plus 1 writer thread paced at %g rows/s",
                  writer_rows_per_sec);
    note += rate;
  } else if (background != nullptr) {
    note += "; plus 1 paced writer thread";
  }
  return note;
}

namespace {

// The fields every row with workers sets.
BenchmarkSpec Row(const char* name, const char* description, Role role, OpCount count,
                  WorkFn work) {
  BenchmarkSpec b;
  b.name = name;
  b.description = description;
  b.role = role;
  b.count = count;
  b.work = work;
  return b;
}

}  // namespace

BenchmarkSpec Fill(const char* name, const char* description, WorkFn work, AckKind acks) {
  BenchmarkSpec b = Row(name, description, Role::kWriter, OpCount::kNum, work);
  b.fresh_db = true;
  b.acks = acks;
  return b;
}

BenchmarkSpec Update(const char* name, const char* description, WorkFn work) {
  return Row(name, description, Role::kWriter, OpCount::kWrites, work);
}

BenchmarkSpec Read(const char* name, const char* description, WorkFn work) {
  BenchmarkSpec b = Row(name, description, Role::kReader, OpCount::kReads, work);
  b.misses_are_absent_keys = true;
  return b;
}

BenchmarkSpec ReadWhileWriting(const char* name, const char* description, WorkFn work) {
  BenchmarkSpec b = Read(name, description, work);
  b.background = &PacedWriter;
  return b;
}

BenchmarkSpec CheckAcks(const char* name, const char* description, WorkFn work) {
  BenchmarkSpec b = Read(name, description, work);
  b.count = OpCount::kAcked;
  b.checks_acks = true;
  return b;
}

BenchmarkSpec Settle(const char* name, const char* description) {
  return Row(name, description, Role::kNone, OpCount::kNone, nullptr);
}

BenchmarkSpec Pass(const char* name, const char* description, Role role, WorkFn work) {
  return Row(name, description, role, OpCount::kNum, work);
}

BenchmarkSpec Step(BenchmarkSpec spec, SetupFn setup) {
  spec.setup = setup;
  return spec;
}

BenchmarkSpec ReadWhileInserting(const char* name, const char* description, WorkFn work,
                                 WorkFn writer, double rows_per_sec,
                                 uint64_t (*row_bytes)(const WorkloadOptions&)) {
  BenchmarkSpec b = Read(name, description, work);
  b.misses_are_absent_keys = false;
  b.background = writer;
  b.writer_rows_per_sec = rows_per_sec;
  b.row_bytes = row_bytes;
  return b;
}

}  // namespace kvbench

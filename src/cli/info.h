// What kvbench prints instead of running: --version (the build, the engines, the libraries as
// loaded, crc32c's choice on this host) and --list-engines. --help is the command line's own
// (cli/command_line.h): it prints the flag table.
#pragma once

namespace kvbench {

// --version: the build (preset, compiler, flags, target, layout), the engines and how
// --memory_budget splits 1 GB between each one's memory settings, the libraries with the same
// audit as a run's header, and crc32c::Extend's kernel per size class with the rates it was
// chosen from.
void PrintVersion();

// --list-engines: one compiled-in engine per line, "name<TAB>storage" or "name<TAB>reference".
void PrintEngineList();

}  // namespace kvbench

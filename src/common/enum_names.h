// Names of enum values, kept in a table beside the function that prints them.
#pragma once

#include <cstddef>

namespace kvbench {

template <typename E>
struct EnumName {
  E value;
  const char* name;
};

// The name `names` gives `value`, or `otherwise` when it gives none.
template <typename E, size_t N>
constexpr const char* NameOf(E value, const EnumName<E> (&names)[N], const char* otherwise) {
  for (const EnumName<E>& n : names) {
    if (n.value == value) return n.name;
  }
  return otherwise;
}

}  // namespace kvbench

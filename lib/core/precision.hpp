// The element type of a product, as a tag that every non-template layer carries
// (GemmProblem::precision), and the one switch that turns it back into a type for the
// code that touches elements (docs/design/double-precision.md, section 1).
//
// Plain constexpr, so host C++ and CUDA code can both use it.
#pragma once

#include <cstdint>

namespace tiledmm {

enum class Precision : uint8_t { F32, F64 };

// The size of one element.
constexpr int element_bytes(Precision p) { return p == Precision::F64 ? 8 : 4; }

template <class T>
struct PrecisionOf;
template <>
struct PrecisionOf<float> {
  static constexpr Precision value = Precision::F32;
};
template <>
struct PrecisionOf<double> {
  static constexpr Precision value = Precision::F64;
};

// The tag of an element type: precision_of<float> is Precision::F32.
template <class T>
constexpr Precision precision_of = PrecisionOf<T>::value;

// Calls f(float{}) or f(double{}) by the tag, so that f (a generic lambda) runs with
// the element type: decltype(x) inside it.
template <class F>
decltype(auto) visit_precision(Precision p, F&& f) {
  if (p == Precision::F64) return f(double{});
  return f(float{});
}

}  // namespace tiledmm

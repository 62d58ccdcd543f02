//===- Buffers.cpp - Host buffers for memref arguments --------------------===//
//
// A memref argument's host buffer: its extent (strides that keep dynamic
// dims apart, checked against 63 bits) and its allocation, with the
// element reads and writes of Buffer (Run.h).
//
//===----------------------------------------------------------------------===//

#include "tools/attn-run/Run.h"

#include "llvm/Support/CheckedArithmetic.h"

#include <cstdio>

namespace attn_run {

std::string shortDouble(double x) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3g", x);
  return text;
}

int fail(const Twine &message) {
  llvm::errs() << "attn-run: error: " << message << "\n";
  return 1;
}

FailureOr<Extent> extentOf(MemRefType type, ArrayRef<int64_t> shape) {
  Extent e;
  int64_t offset;
  if (failed(type.getStridesAndOffset(e.strides, offset)))
    return failure();
  e.offset = ShapedType::isDynamic(offset) ? 0 : offset;
  std::optional<int64_t> extent = 1; // span of the static-stride dims
  for (size_t i = 0; i < shape.size() && extent; ++i) {
    if (ShapedType::isDynamic(e.strides[i]))
      continue;
    std::optional<int64_t> x = llvm::checkedMul(e.strides[i], shape[i]);
    extent = x ? std::optional<int64_t>(std::max(*extent, *x)) : std::nullopt;
  }
  for (int64_t i = shape.size() - 1; i >= 0 && extent; --i) {
    if (ShapedType::isDynamic(e.strides[i])) {
      e.strides[i] = *extent;
      extent = llvm::checkedMul(*extent, shape[i]);
    }
  }
  std::optional<int64_t> span = e.offset + 1;
  for (size_t i = 0; i < shape.size() && span && extent; ++i) {
    std::optional<int64_t> x = llvm::checkedMul(shape[i] - 1, e.strides[i]);
    span = x ? llvm::checkedAdd(*span, *x) : std::nullopt;
  }
  std::optional<int64_t> bytes;
  if (span && extent)
    bytes = llvm::checkedMul<int64_t>(*span, bytesOf(type.getElementType()));
  if (!bytes)
    return failure();
  e.bytes = *bytes;
  return e;
}

double quantizedLargest(Type elt) {
  if (elt.isInteger())
    return 127.0;
  return isa<Float8E4M3FNType>(elt) ? 448.0 : 57344.0;
}

int64_t scaleIndex(const Buffer &data, const Buffer *scale, int64_t i) {
  if (!scale || scale->shape.empty())
    return 0;
  int64_t headStride = 1; // elements a head: the dims after dim 1
  for (size_t d = 2; d < data.shape.size(); ++d)
    headStride *= data.shape[d];
  if (scale->shape.size() == 1)
    return i / headStride % data.shape[1];
  return i / data.shape.back();
}

std::vector<double> dequantized(const Buffer &data, const Buffer *scale) {
  std::vector<double> values = data.toDense();
  if (!scale)
    return values;
  for (size_t i = 0; i < values.size(); ++i)
    values[i] *= scale->get(scaleIndex(data, scale, int64_t(i)));
  return values;
}

/// Allocates the buffer `extent` describes.
Buffer allocate(MemRefType type, ArrayRef<int64_t> shape, Extent extent) {
  Buffer buf;
  buf.elt = type.getElementType();
  buf.shape.assign(shape.begin(), shape.end());
  buf.strides = extent.strides;
  buf.offset = extent.offset;
  buf.bytes.assign(extent.bytes, 0);
  int64_t base = reinterpret_cast<int64_t>(buf.bytes.data());
  buf.descriptor = {base, base, buf.offset};
  buf.descriptor.insert(buf.descriptor.end(), shape.begin(), shape.end());
  buf.descriptor.insert(buf.descriptor.end(), buf.strides.begin(),
                        buf.strides.end());
  return buf;
}

} // namespace attn_run

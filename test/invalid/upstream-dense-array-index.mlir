// A known upstream crash (docs/Testing.md, "Known issues"): MLIR 22's parser aborts
// in Parser::parseDenseArrayAttr on a dense array of `index` elements, as in
// `operandSegmentSizes = array<index: ...>`. Upstream mlir-opt crashes the
// same way; no attn code runs before the crash. This test expects the crash,
// so it fails once upstream fixes it, and the docs/Testing.md entry can go. Under
// ASan the SEGV becomes an ASan report with exit code 1, not a crash.
// UNSUPPORTED: sanitizer
// RUN: not --crash mlir-opt -allow-unregistered-dialect %s 2>&1 | FileCheck %s
// RUN: not --crash attn-opt %s 2>&1 | FileCheck %s
// CHECK: mlir::detail::Parser::parseDenseArrayAttr
// CHECK-NOT: attn::
func.func @f(%q: memref<1x2x4x32xf16>) {
  "attn.attention"(%q, %q, %q, %q) {operandSegmentSizes = array<index: 1, 1, 1, 0, 0, 1, 0>} : (memref<1x2x4x32xf16>, memref<1x2x4x32xf16>, memref<1x2x4x32xf16>, memref<1x2x4x32xf16>) -> ()
  return
}

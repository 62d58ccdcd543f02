// A dim beyond int64 is a parse error.
// RUN: not attn-opt %s 2>&1 | FileCheck %s
// CHECK: error: invalid dimension
func.func @f(%q: memref<1x8x99999999999999999999999999x64xf16>) {
  return
}

// RUN: not attn-opt %s 2>&1 | FileCheck %s
// CHECK: error: custom op 'attn.flash' is unknown
func.func @f() {
  attn.flash
  return
}

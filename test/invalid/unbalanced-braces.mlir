// RUN: not attn-opt %s 2>&1 | FileCheck %s
// CHECK: error: expected operation name in quotes
func.func @f() {
  func.func @g() {
  return
}

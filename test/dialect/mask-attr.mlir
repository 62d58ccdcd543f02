// Every spelling of #attn.mask round-trips; top_left is the default and is
// not printed.
// RUN: attn-opt %s | attn-opt | FileCheck %s

// CHECK: m0 = #attn.mask<none>
// CHECK-SAME: m1 = #attn.mask<causal>
// CHECK-SAME: m2 = #attn.mask<causal>
// CHECK-SAME: m3 = #attn.mask<causal, bottom_right>
// CHECK-SAME: m4 = #attn.mask<window 4096, 0>
// CHECK-SAME: m5 = #attn.mask<window 0, 0, bottom_right>
func.func @masks() attributes {
  m0 = #attn.mask<none>,
  m1 = #attn.mask<causal>,
  m2 = #attn.mask<causal, top_left>,
  m3 = #attn.mask<causal, bottom_right>,
  m4 = #attn.mask<window 4096, 0, top_left>,
  m5 = #attn.mask<window 0, 0, bottom_right>
} {
  return
}

// Standalone, not split: the input must stop mid-attribute at end of file, no newline.
// RUN: not attn-opt %s 2>&1 | FileCheck %s
// CHECK: error: unbalanced '<' character in pretty dialect name
func.func @cut() attributes {m = #attn.mask<window 12
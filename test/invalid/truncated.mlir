// A spec cut off mid-op: a parse error and exit code 1, no crash.
// Standalone, not split: the input must stop mid-token at end of file, no newline.
// RUN: not attn-opt %s 2>&1 | FileCheck %s
// CHECK: error: expected 'x' in dimension list
func.func @cut(%q: memref<1x8x16x64xf16>, %k: memref<1x8x16x64xf16>,
               %v: memref<1x8x16x64xf16>, %o: memref<1x8x16x64xf16>) {
  attn.attention q(%q : memref<1x8x16x64xf16>) k(%k : memref<1x8
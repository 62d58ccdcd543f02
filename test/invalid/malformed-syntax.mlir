// Input that is not well-formed MLIR for attn-opt: an op no dialect defines
// and braces that never close. One case per split section; each was a
// standalone `not attn-opt | FileCheck` test before.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

// An attn op that does not exist. (was unknown-op.mlir)
func.func @f() {
  // expected-error @+1 {{custom op 'attn.flash' is unknown}}
  attn.flash
  return
}

// -----

// A region left open: the parser reaches the end of the section still inside
// @f's body and reports it just after the last `}`. (was unbalanced-braces.mlir)
// expected-error @+4 {{expected operation name in quotes}}
func.func @f() {
  func.func @g() {
  return
}

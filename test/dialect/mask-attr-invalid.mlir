// #attn.mask rejects what it cannot mean.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{unknown mask kind 'diagonal'; expected none, causal or window}}
func.func @f() attributes {m = #attn.mask<diagonal>} { return }

// -----

// expected-error @+1 {{unknown mask alignment 'middle'; expected top_left or bottom_right}}
func.func @f() attributes {m = #attn.mask<causal, middle>} { return }

// -----

// expected-error @+1 {{mask 'window' extents must be >= 0, got left = -5, right = 0}}
func.func @f() attributes {m = #attn.mask<window -5, 0>} { return }

// -----

// expected-error @+1 {{mask 'window' extents must be >= 0, got left = 3, right = -1}}
func.func @f() attributes {m = #attn.mask<window 3, -1, bottom_right>} { return }

// -----

// expected-error @+1 {{mask 'none' takes no alignment}}
func.func @f() attributes {m = #attn.mask<none, bottom_right>} { return }

// -----

// A window needs both extents.
// expected-error @+1 {{expected ','}}
func.func @f() attributes {m = #attn.mask<window 128>} { return }

// -----

// Extents larger than int64 are refused by the integer parser.
// expected-error @+1 {{integer value too large}}
func.func @f() attributes {m = #attn.mask<window 99999999999999999999999, 0>} { return }

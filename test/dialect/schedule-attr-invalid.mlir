// A schedule field's value names its kind.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

// expected-error @+2 {{expected ::mlir::attn::Toggle to be one of: auto, off, on}}
// expected-error @+1 {{failed to parse Attn_ScheduleAttr parameter 'producer'}}
func.func @f() attributes {a = #attn.schedule<producer = yes>} { return }

// -----

// expected-error @+2 {{expected ::mlir::attn::Transfer to be one of: auto, threads, tma}}
// expected-error @+1 {{failed to parse Attn_ScheduleAttr parameter 'kv_load'}}
func.func @f() attributes {a = #attn.schedule<kv_load = on>} { return }

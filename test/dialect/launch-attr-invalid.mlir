// #attn.launch rejects a contract a host could not follow, naming the field
// and the rule; attn.launch on an op must be one and fit the launch.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{unknown launch role 'split'; expected prefill, decode_split, decode_combine, decode_unsplit, append, merge or block_mask}}
func.func @f() attributes {l = #attn.launch<split, tier = mma, threads = 128, shared = 0, grid = [ceildiv(group_rows, 64), kv_heads, batch], params = [q]>} { return }

// -----

// expected-error @+1 {{unknown launch tier 'tcgen05'; expected wmma, mma, wgmma, decode or copy}}
func.func @f() attributes {l = #attn.launch<prefill, tier = tcgen05, threads = 128, shared = 0, grid = [ceildiv(group_rows, 64), kv_heads, batch], params = [q]>} { return }

// -----

// expected-error @+1 {{launch 'threads' must be in [1, 1024], got 2048}}
func.func @f() attributes {l = #attn.launch<prefill, tier = mma, threads = 2048, shared = 0, grid = [ceildiv(group_rows, 64), kv_heads, batch], params = [q]>} { return }

// -----

// expected-error @+1 {{launch 'shared' must be >= 0 bytes, got -1}}
func.func @f() attributes {l = #attn.launch<prefill, tier = mma, threads = 128, shared = -1, grid = [ceildiv(group_rows, 64), kv_heads, batch], params = [q]>} { return }

// -----

// expected-error @+1 {{launch 'grid' must have 3 dimensions (x, y, z), got 2}}
func.func @f() attributes {l = #attn.launch<prefill, tier = mma, threads = 128, shared = 0, grid = [group_rows, batch], params = [q]>} { return }

// -----

// expected-error @+1 {{launch 'grid' term ceildiv(group_rows, 0) in dimension x must divide by a constant >= 1}}
func.func @f() attributes {l = #attn.launch<prefill, tier = mma, threads = 128, shared = 0, grid = [ceildiv(group_rows, 0), kv_heads, batch], params = [q]>} { return }

// -----

// expected-error @+1 {{launch 'grid' constant term in dimension z must be >= 1, got 0}}
func.func @f() attributes {l = #attn.launch<prefill, tier = mma, threads = 128, shared = 0, grid = [group_rows, kv_heads, 0], params = [q]>} { return }

// -----

// expected-error @+1 {{unknown launch size 'heads'; expected batch, q_heads, kv_heads, q_len, kv_len, group_rows, rows, splits or new_len}}
func.func @f() attributes {l = #attn.launch<prefill, tier = mma, threads = 128, shared = 0, grid = [group_rows, heads, batch], params = [q]>} { return }

// -----

// expected-error @+1 {{launch 'params' must list the kernel's parameters, got none}}
func.func @f() attributes {l = #attn.launch<prefill, tier = mma, threads = 128, shared = 0, grid = [ceildiv(group_rows, 64), kv_heads, batch], params = []>} { return }

// -----

// expected-error @+1 {{unknown launch parameter 'x'; expected q, k, v, block_table, kv_lens, o, lse, k_new, v_new, new_lens, slot_mapping, cu_seqlens_q, cu_seqlens_k, workspace, capture(N) or tensor_map(operand)}}
func.func @f() attributes {l = #attn.launch<prefill, tier = mma, threads = 128, shared = 0, grid = [ceildiv(group_rows, 64), kv_heads, batch], params = [q, x]>} { return }

// -----

// K may stand in V's place (v_from_k) only where the launch passes no v.
// expected-error @+1 {{launch 'params' names operand 'k' twice}}
func.func @f() attributes {l = #attn.launch<prefill, tier = mma, threads = 128, shared = 0, grid = [ceildiv(group_rows, 64), kv_heads, batch], params = [q, k, v, k]>} { return }

// -----

// expected-error @+1 {{launch 'params' names operand 'cu_seqlens_k' twice}}
func.func @f() attributes {l = #attn.launch<prefill, tier = mma, threads = 128, shared = 0, grid = [ceildiv(packed_q_tiles, 64), kv_heads, 1], params = [q, cu_seqlens_k, cu_seqlens_k]>} { return }

// -----

// expected-error @+1 {{launch 'params' names the workspace twice}}
func.func @f() attributes {l = #attn.launch<decode_combine, tier = decode, threads = 128, shared = 0, grid = [ceildiv(group_rows, 64), kv_heads, batch], params = [workspace, workspace], workspace = [rows] : f32>} { return }

// -----

// expected-error @+1 {{launch 'params' has a workspace parameter but the launch has no 'workspace' shape}}
func.func @f() attributes {l = #attn.launch<decode_combine, tier = decode, threads = 128, shared = 0, grid = [ceildiv(group_rows, 64), kv_heads, batch], params = [workspace, o]>} { return }

// -----

// expected-error @+1 {{launch 'workspace' shape is given but no parameter is the workspace}}
func.func @f() attributes {l = #attn.launch<prefill, tier = mma, threads = 128, shared = 0, grid = [ceildiv(group_rows, 64), kv_heads, batch], params = [q], workspace = [rows] : f32>} { return }

// -----

// expected-error @+1 {{launch 'workspace' must have rank 1 to 4, got 5}}
func.func @f() attributes {l = #attn.launch<decode_combine, tier = decode, threads = 128, shared = 0, grid = [ceildiv(group_rows, 64), kv_heads, batch], params = [workspace], workspace = [rows, 1, 1, 1, 1] : f32>} { return }

// -----

// expected-error @+1 {{launch 'workspace' term ceildiv(splits, 0) in dimension 1 must divide by a constant >= 1}}
func.func @f() attributes {l = #attn.launch<decode_combine, tier = decode, threads = 128, shared = 0, grid = [ceildiv(group_rows, 64), kv_heads, batch], params = [workspace], workspace = [rows, ceildiv(splits, 0)] : f32>} { return }

// -----

// expected-error @+1 {{launch 'workspace' element type must be an integer or float type}}
func.func @f() attributes {l = #attn.launch<decode_combine, tier = decode, threads = 128, shared = 0, grid = [ceildiv(group_rows, 64), kv_heads, batch], params = [workspace], workspace = [rows] : index>} { return }

// -----

// expected-error @+1 {{launch 'block_q' must be >= 0, got -64}}
func.func @f() attributes {l = #attn.launch<prefill, tier = mma, threads = 128, shared = 0, grid = [ceildiv(group_rows, 64), kv_heads, batch], params = [q], block_q = -64>} { return }

// -----

// expected-error @+1 {{launch 'group' must be >= 0, got -1}}
func.func @f() attributes {l = #attn.launch<prefill, tier = mma, threads = 128, shared = 0, grid = [ceildiv(group_rows, 64), kv_heads, batch], params = [q], group = -1>} { return }

// -----

// expected-error @+1 {{unknown launch field 'stages'; expected workspace, block_q, group, programmatic or max_kv_len}}
func.func @f() attributes {l = #attn.launch<prefill, tier = mma, threads = 128, shared = 0, grid = [ceildiv(group_rows, 64), kv_heads, batch], params = [q], stages = 2>} { return }

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%q: memref<?x8x?x64xf16>, %w: memref<?x?x66xf32>) kernel {
      gpu.return
    }
  }
  func.func @host(%q: memref<?x8x?x64xf16>, %w: memref<?x?x66xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %smem = arith.constant 1024 : i32
    // expected-error @+1 {{'attn.launch' must be a #attn.launch attribute, got "mma"}}
    gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %smem args(%q : memref<?x8x?x64xf16>, %w : memref<?x?x66xf32>) {attn.launch = "mma"}
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%q: memref<?x8x?x64xf16>, %w: memref<?x?x66xf32>) kernel {
      gpu.return
    }
  }
  func.func @host(%q: memref<?x8x?x64xf16>, %w: memref<?x?x66xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %smem = arith.constant 1024 : i32
    // expected-error @+1 {{unknown attn attribute 'attn.lanuch'; attn declares attn.launch, attn.tier, attn.schedule, attn.kv_loop}}
    gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %smem args(%q : memref<?x8x?x64xf16>, %w : memref<?x?x66xf32>) {attn.lanuch = #attn.launch<decode_split, tier = decode, threads = 128, shared = 1024, grid = [splits, kv_heads, batch], params = [q, workspace], workspace = [rows, splits, 66] : f32>}
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%q: memref<?x8x?x64xf16>, %w: memref<?x?x66xf32>) kernel {
      gpu.return
    }
  }
  func.func @host(%q: memref<?x8x?x64xf16>, %w: memref<?x?x66xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %smem = arith.constant 1024 : i32
    // expected-error @+1 {{unknown attn attribute 'attn.block_q'; attn declares attn.launch, attn.tier, attn.schedule, attn.kv_loop, attn.tensor_map_params (launch facts are fields of attn.launch)}}
    gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %smem args(%q : memref<?x8x?x64xf16>, %w : memref<?x?x66xf32>) {attn.launch = #attn.launch<decode_split, tier = decode, threads = 128, shared = 1024, grid = [splits, kv_heads, batch], params = [q, workspace], workspace = [rows, splits, 66] : f32>, attn.block_q = 4 : i64}
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%q: memref<?x8x?x64xf16>, %w: memref<?x?x66xf32>) kernel {
      gpu.return
    }
  }
  func.func @host(%q: memref<?x8x?x64xf16>, %w: memref<?x?x66xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %smem = arith.constant 1024 : i32
    // expected-error @+1 {{'attn.launch' lists 3 params, but the launch passes 2 kernel operands}}
    gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %smem args(%q : memref<?x8x?x64xf16>, %w : memref<?x?x66xf32>) {attn.launch = #attn.launch<decode_split, tier = decode, threads = 128, shared = 1024, grid = [splits, kv_heads, batch], params = [q, k, workspace], workspace = [rows, splits, 66] : f32>}
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%q: memref<?x8x?x64xf16>, %w: memref<?x?x66xf32>) kernel {
      gpu.return
    }
  }
  func.func @host(%q: memref<?x8x?x64xf16>, %w: memref<?x?x66xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %smem = arith.constant 1024 : i32
    // expected-error @+1 {{'attn.launch' workspace has rank 2 and element type 'f32', but kernel operand #1 is 'memref<?x?x66xf32>'}}
    gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %smem args(%q : memref<?x8x?x64xf16>, %w : memref<?x?x66xf32>) {attn.launch = #attn.launch<decode_split, tier = decode, threads = 128, shared = 1024, grid = [splits, kv_heads, batch], params = [q, workspace], workspace = [rows, splits] : f32>}
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%q: memref<?x8x?x64xf16>, %w: memref<?x?x66xf32>) kernel {
      gpu.return
    }
  }
  func.func @host(%q: memref<?x8x?x64xf16>, %w: memref<?x?x66xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %smem = arith.constant 1024 : i32
    // expected-error @+1 {{'attn.launch' workspace has rank 3 and element type 'f16', but kernel operand #1 is 'memref<?x?x66xf32>'}}
    gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %smem args(%q : memref<?x8x?x64xf16>, %w : memref<?x?x66xf32>) {attn.launch = #attn.launch<decode_split, tier = decode, threads = 128, shared = 1024, grid = [splits, kv_heads, batch], params = [q, workspace], workspace = [rows, splits, 66] : f16>}
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%q: memref<?x8x?x64xf16>, %w: memref<?x?x66xf32>) kernel {
      gpu.return
    }
  }
  func.func @host(%q: memref<?x8x?x64xf16>, %w: memref<?x?x66xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %smem = arith.constant 1024 : i32
    // expected-error @+1 {{'attn.launch' says threads = 256, but the launch's block has 128}}
    gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %smem args(%q : memref<?x8x?x64xf16>, %w : memref<?x?x66xf32>) {attn.launch = #attn.launch<decode_split, tier = decode, threads = 256, shared = 1024, grid = [splits, kv_heads, batch], params = [q, workspace], workspace = [rows, splits, 66] : f32>}
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%q: memref<?x8x?x64xf16>, %w: memref<?x?x66xf32>) kernel {
      gpu.return
    }
  }
  func.func @host(%q: memref<?x8x?x64xf16>, %w: memref<?x?x66xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %smem = arith.constant 1024 : i32
    // expected-error @+1 {{'attn.launch' says shared = 0, but the launch asks for 1024 bytes}}
    gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %smem args(%q : memref<?x8x?x64xf16>, %w : memref<?x?x66xf32>) {attn.launch = #attn.launch<decode_split, tier = decode, threads = 128, shared = 0, grid = [splits, kv_heads, batch], params = [q, workspace], workspace = [rows, splits, 66] : f32>}
    return
  }
}

// -----

// expected-error @+1 {{'attn.launch' belongs on gpu.launch_func, not on 'func.func'}}
func.func @f() attributes {attn.launch = #attn.launch<decode_split, tier = decode, threads = 128, shared = 1024, grid = [splits, kv_heads, batch], params = [q, workspace], workspace = [rows, splits, 66] : f32>} { return }

// -----

// expected-error @+1 {{launch 'params' names capture(1) twice}}
func.func @f() attributes {l = #attn.launch<prefill, tier = mma, threads = 128, shared = 0, grid = [ceildiv(group_rows, 64), kv_heads, batch], params = [q, k, v, capture(1), capture(1), o]>} { return }

// -----

// expected-error @+1 {{launch parameter capture(-1) must name a capture in [0, 255]}}
func.func @f() attributes {l = #attn.launch<prefill, tier = mma, threads = 128, shared = 0, grid = [ceildiv(group_rows, 64), kv_heads, batch], params = [q, k, v, capture(-1), o]>} { return }

// -----

// Only a decode_combine launch follows a launch it may overlap.
// expected-error @+1 {{a 'prefill' launch cannot be 'programmatic' (only decode_combine follows a launch it may overlap)}}
func.func @f() attributes {l = #attn.launch<prefill, tier = mma, threads = 128, shared = 0, grid = [ceildiv(group_rows, 64), kv_heads, batch], params = [q], programmatic>} { return }

// -----

// expected-error @+1 {{launch 'max_kv_len' must be >= 0 (0: no bound), got -512}}
func.func @f() attributes {l = #attn.launch<prefill, tier = mma, threads = 128, shared = 0, grid = [ceildiv(group_rows, 64), kv_heads, batch], params = [q], max_kv_len = -512>} { return }

// -----

// expected-error @+1 {{a 'decode_split' launch cannot have 'max_kv_len' (only prefill launches are alternatives the runtime chooses among)}}
func.func @f() attributes {l = #attn.launch<decode_split, tier = decode, threads = 128, shared = 0, grid = [splits, kv_heads, batch], params = [q, workspace], workspace = [rows, splits, 130] : f32, max_kv_len = 512>} { return }

// -----

// The one-split decode kernel writes O itself: no workspace.
// expected-error @+1 {{a 'decode_unsplit' launch cannot have a workspace (it runs in place of decode_split and decode_combine, writing O itself)}}
func.func @f() attributes {l = #attn.launch<decode_unsplit, tier = mma, threads = 128, shared = 0, grid = [ceildiv(group_rows, 16), kv_heads, batch], params = [q, workspace], workspace = [rows, splits, 130] : f32>} { return }

// -----

// libattnrt launches one-dimensional blocks.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%q: memref<?x8x?x64xf16>, %w: memref<?x?x66xf32>) kernel {
      gpu.return
    }
  }
  func.func @host(%q: memref<?x8x?x64xf16>, %w: memref<?x?x66xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c128 = arith.constant 128 : index
    %smem = arith.constant 1024 : i32
    // expected-error @+1 {{'attn.launch' blocks are threads x 1 x 1, but the launch's block has y = 2}}
    gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1) threads in (%c128, %c2, %c1) dynamic_shared_memory_size %smem args(%q : memref<?x8x?x64xf16>, %w : memref<?x?x66xf32>) {attn.launch = #attn.launch<decode_split, tier = decode, threads = 128, shared = 1024, grid = [splits, kv_heads, batch], params = [q, workspace], workspace = [rows, splits, 66] : f32>}
    return
  }
}

// -----

// A grid dimension the contract fixes (constant terms) against the
// launch's constant.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%q: memref<?x8x?x64xf16>, %w: memref<?x?x66xf32>) kernel {
      gpu.return
    }
  }
  func.func @host(%q: memref<?x8x?x64xf16>, %w: memref<?x?x66xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c128 = arith.constant 128 : index
    %smem = arith.constant 1024 : i32
    // expected-error @+1 {{'attn.launch' grid z is 1, but the launch's is 4}}
    gpu.launch_func @kernels::@k blocks in (%n, %c1, %c4) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %smem args(%q : memref<?x8x?x64xf16>, %w : memref<?x?x66xf32>) {attn.launch = #attn.launch<decode_split, tier = decode, threads = 128, shared = 1024, grid = [rows, 1, 1], params = [q, workspace], workspace = [rows, splits, 66] : f32>}
    return
  }
}

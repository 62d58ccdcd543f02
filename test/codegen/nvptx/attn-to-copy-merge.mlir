// attn.merge_states becomes the copy tier's merge kernel: two 16-byte
// pieces of a row a thread, rows packed into blocks of 128 threads, and a
// launch whose #attn.launch<merge, tier = copy> contract libattnrt
// follows. A static N of at most 8 is unrolled (every load first); a
// dynamic N loops.
// RUN: attn-opt %s --attn-to-copy | FileCheck %s
// REQUIRES: ptxas
// RUN: attn-opt %s --attn-to-ptx="chip=sm_90" | attn-translate --attn-ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: attn-opt %s --attn-to-ptx="chip=sm_75" | attn-translate --attn-ptx -o %t75.ptx
// RUN: %ptxas -arch=sm_75 %t75.ptx -o %t75.cubin

// f16 D128: 8 halves a piece, two pieces a thread, 8 threads a row, 16
// rows a block.
// CHECK-LABEL: func.func @two_parts
// CHECK: gpu.launch_func @attn_kernels::@two_parts_merge blocks in (%{{.*}}, %c1{{.*}}, %c1{{.*}}) threads in (%c128,
// CHECK-SAME: {attn.launch = #attn.launch<merge, tier = copy, threads = 128, shared = 0, grid = [ceildiv(rows, 16), 1, 1], params = [o_parts, lse_parts, o, lse]>}
// CHECK-NOT: attn.merge_states
func.func @two_parts(%op: memref<2x?x32x128xf16>, %lp: memref<2x?x32xf32>,
                     %o: memref<?x32x128xf16>, %l: memref<?x32xf32>) {
  attn.merge_states o_parts(%op : memref<2x?x32x128xf16>) lse_parts(%lp : memref<2x?x32xf32>)
                 -> o(%o : memref<?x32x128xf16>) lse(%l : memref<?x32xf32>)
  return
}

// f32 parts into bf16, no LSE: 4 floats a piece (the wider type's 16
// bytes), two a thread, 16 threads a row, 8 rows a block; N dynamic: a
// loop of two parts a trip, each part's loads under a guard.
// CHECK-LABEL: func.func @dynamic_parts
// CHECK: #attn.launch<merge, tier = copy, threads = 128, shared = 0, grid = [ceildiv(rows, 8), 1, 1], params = [o_parts, lse_parts, o]>
func.func @dynamic_parts(%op: memref<?x?x4x128xf32, strided<[?, ?, ?, 1]>>,
                         %lp: memref<?x?x4xf32, strided<[?, ?, ?]>>,
                         %o: memref<?x4x128xbf16>) {
  attn.merge_states o_parts(%op : memref<?x?x4x128xf32, strided<[?, ?, ?, 1]>>)
                    lse_parts(%lp : memref<?x?x4xf32, strided<[?, ?, ?]>>)
                 -> o(%o : memref<?x4x128xbf16>)
  return
}

// CHECK-LABEL: gpu.func @two_parts_merge
// CHECK-COUNT-4: vector.load {{.*}} : memref<2x?x32x128xf16>, vector<8xf16>
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: vector.store {{.*}} : memref<?x32x128xf16>, vector<8xf16>
// CHECK-LABEL: gpu.func @dynamic_parts_merge
// CHECK: scf.for
// CHECK: scf.if
// CHECK-COUNT-2: vector.load {{.*}} vector<4xf32>
// CHECK: vector.store {{.*}} vector<4xbf16>

// PTX: .entry two_parts_merge
// PTX-COUNT-4: ld.global.v4.b32
// PTX: ex2.approx.ftz.f32
// PTX: st.global.v4.b32
// PTX: .entry dynamic_parts_merge

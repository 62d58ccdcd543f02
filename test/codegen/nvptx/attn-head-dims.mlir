// Head dims that are multiples of 8 but not of 16 (D 40, 72, 104 are real
// models'). The prefill tiers pad them to 16 in shared memory: the copies
// read the row's 16-byte chunks and zero-fill the rest (a cp.async of 0
// source bytes), the MMAs run over the padded width, and the epilogue
// writes only O's own columns. The decode tier reads them with a power of
// two of 16-byte lanes per key, the lanes past the row reading zeros.
// RUN: attn-opt %s --attn-select-tier --attn-tile --attn-to-mma | FileCheck %s --check-prefix=MMA
// RUN: attn-opt %s "--attn-select-tier=prefill=wmma" --attn-tile --attn-to-wmma | FileCheck %s --check-prefix=WMMA
// RUN: attn-opt %s --attn-select-tier --attn-tile --attn-to-decode | FileCheck %s --check-prefix=DECODE
// RUN: attn-opt %s "--attn-select-tier=sm=90" --attn-tile --attn-to-decode | FileCheck %s --check-prefix=TCDECODE

// Q/K/V rows of 40 copied as tiles 48 wide (src_width 40: the chunk at
// column 40 copies 0 bytes, zeros; attn-nv-to-nvvm.mlir shows how) into
// shared rows of 48 + 8 padding.
// MMA-LABEL: gpu.func @prefill_d40_mma
// MMA: attn_nv.copy_tile %arg0 -> %{{.*}} plain async thread %{{.*}} {rows = 128 : i64, src_width = 40 : i64, threads = 128 : i64, width = 48 : i64} : memref<?x8x?x40xf16> -> memref<128x56xf16, #gpu.address_space<workgroup>>
// MMA: memref<64x56xf16, #gpu.address_space<workgroup>>
// O's chunks over its 40 columns: five 16-byte chunks a row, not six.
// MMA: attn_nv.for_each_chunk thread %{{.*}} of 32 rows(%{{.*}}, 32) width 40 chunk 8
// MMA: vector.store %{{.*}}, %arg3[{{.*}}] {alignment = 16 : i64} : memref<?x8x?x40xf16>, vector<8xf16>
// WMMA-LABEL: gpu.func @prefill_d40_wmma
// WMMA: attn_nv.copy_tile {{.*}} plain async {{.*}} width = 48 : i64} : memref<?x8x?x40xf16> -> memref<64x56xf16, #gpu.address_space<workgroup>>
// WMMA: vector.store %{{.*}}, %arg3[{{.*}}] {alignment = 16 : i64} : memref<?x8x?x40xf16>, vector<8xf16>
func.func @prefill_d40(%q: memref<?x8x?x40xf16>, %k: memref<?x2x?x40xf16>,
                       %v: memref<?x2x?x40xf16>, %o: memref<?x8x?x40xf16>) {
  attn.attention q(%q : memref<?x8x?x40xf16>) k(%k : memref<?x2x?x40xf16>)
                 v(%v : memref<?x2x?x40xf16>) -> o(%o : memref<?x8x?x40xf16>)
                 mask = <causal>
  return
}

// D 40, Dv 72: 16 lanes per key (9 slices of V, 5 of K), 8 key groups;
// the workspace holds Dv + 2 floats per split.
// On sm_90 (f16) the tensor-core split kernel, its tiles
// padded like the mma tier's (16 rows, D and Dv to multiples of 16).
// TCDECODE-LABEL: func.func @decode_d40_dv72
// TCDECODE: gpu.launch_func @attn_kernels::@decode_d40_dv72_decode_split {{.*}} workspace = [rows, splits, 74] : f32, block_q = 16, group = 4>
// TCDECODE-LABEL: gpu.func @decode_d40_dv72_decode_split
// TCDECODE: attn_nv.mma_tile
// DECODE-LABEL: func.func @decode_d40_dv72
// DECODE: gpu.launch_func @attn_kernels::@decode_d40_dv72_decode_split {{.*}} shared = 16640, {{.*}} workspace = [rows, splits, 74] : f32
// DECODE-LABEL: gpu.func @decode_d40_dv72_decode_split
// DECODE: %[[LANE:.*]] = arith.remui %thread_id_x, %c16{{.*}} : index
// DECODE: %[[COL:.*]] = arith.muli %[[LANE]], %{{.*}} : index
// DECODE: %[[INK:.*]] = arith.cmpi slt, %[[COL]], %c40{{.*}} : index
// DECODE: %[[AT:.*]] = arith.select %[[INK]], %[[COL]], %{{.*}} : index
// DECODE: vector.load %arg0[%{{.*}}, %{{.*}}, %{{.*}}, %[[AT]]]
// K and V slices go through the cp.async ring; lanes past a row copy 0
// bytes (zero-fill).
// DECODE: memref.view {{.*}} to memref<2x2x2x128x8xf16, #gpu.address_space<workgroup>>
// DECODE: %[[INK2:.*]] = arith.cmpi slt, %[[COL]], %c40{{.*}} : index
// DECODE: %[[KN:.*]] = arith.select %[[INK2]], %c8{{.*}}, %c0{{.*}} : index
// DECODE: nvgpu.device_async_copy %arg1[{{.*}}], %view[{{.*}}], 8, %[[KN]] {bypassL1} : memref<?x2x?x40xf16>
// DECODE: %[[INV:.*]] = arith.cmpi slt, %[[COL]], %c72{{.*}} : index
// DECODE: %[[VN:.*]] = arith.select %[[INV]], %c8{{.*}}, %c0{{.*}} : index
// DECODE: nvgpu.device_async_copy %arg2[{{.*}}], %view[{{.*}}], 8, %[[VN]] {bypassL1} : memref<?x2x?x72xf16>
func.func @decode_d40_dv72(%q: memref<?x8x1x40xf16>, %k: memref<?x2x?x40xf16>,
                           %v: memref<?x2x?x72xf16>, %o: memref<?x8x1x72xf16>) {
  attn.attention q(%q : memref<?x8x1x40xf16>) k(%k : memref<?x2x?x40xf16>)
                 v(%v : memref<?x2x?x72xf16>) -> o(%o : memref<?x8x1x72xf16>)
  return
}

"""attn.flash_mla without a GPU: FlashMLA's arguments reach the spec they
should (mla_facts: one latent head, V its first head_dim_v columns, paged,
the LSE, the bottom-right causal mask only where s_q > 1), and every
refusal raises its error before any kernel runs. test_gpu.py's
test_flash_mla runs the function on a GPU against float64."""
import pytest

torch = pytest.importorskip("torch")

from attn import flash_mla  # noqa: E402

BF16 = torch.bfloat16


def args(**over):
    a = dict(q=torch.zeros(2, 1, 16, 576, dtype=BF16),
             k_cache=torch.zeros(8, 64, 1, 576, dtype=BF16),
             block_table=torch.zeros(2, 4, dtype=torch.int32),
             cache_seqlens=torch.zeros(2, dtype=torch.int32),
             head_dim_v=512)
    a.update(over)
    return a


def test_facts():
    f = flash_mla.mla_facts("bf16", 16, 576, 512, 1, 64, causal=True,
                            softmax_scale=0.1352)
    assert (f.hq, f.hkv, f.d, f.dv, f.q_len, f.block_size) == \
        (16, 1, 576, 512, 1, 64)
    assert f.v_from_k and f.kv_lens and f.lse
    # One query a sequence sees every key: causal adds nothing.
    assert f.mask == "none"
    text = f.spec_text()
    assert "v_from_k" in text and "%v" not in text
    assert "scale = 0.1352" in text
    mtp = flash_mla.mla_facts("f16", 16, 576, 512, 2, 16, causal=True)
    assert mtp.mask == "causal" and mtp.align == "bottom_right"
    assert abs(mtp.scale - 576 ** -0.5) < 1e-12  # FlashMLA's default
    assert flash_mla.get_mla_metadata(torch.zeros(2), 16, 1) == (None, None)


@pytest.mark.parametrize("over, error, message", [
    (dict(is_fp8_kvcache=True), NotImplementedError, "fp8 latent cache"),
    (dict(indices=torch.zeros(1)), NotImplementedError, "sparse"),
    (dict(q=torch.zeros(2, 16, 576, dtype=BF16)), RuntimeError,
     "q must be 4-D"),
    (dict(block_table=[[0]]), TypeError, "block_table must be a "
     "torch.Tensor"),
    (dict(), RuntimeError, "q must be on CUDA"),
])
def test_refused(over, error, message):
    a = args()
    extra = {k: over.pop(k) for k in ("is_fp8_kvcache", "indices")
             if k in over}
    a.update(over)
    with pytest.raises(error, match=message):
        flash_mla.flash_mla_with_kvcache(**a, **extra)

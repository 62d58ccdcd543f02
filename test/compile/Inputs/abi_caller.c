// Links against a library attn-compile made from short_kv.mlir: through
// the generated C ABI (whose calls into libattnrt carry this header's
// table layout in their names), or, with OLD_TABLES, as code generated
// against an older attnrt_attention.h would: by the unversioned name.
#ifdef OLD_TABLES
int attnrt_attention_run(const void *kernel, const void *call);
int main(void) { return attnrt_attention_run(0, 0); }
#else
#include "short_kv.h"
int main(void) { return attn_prefill_can_implement(1, 128, 128); }
#endif

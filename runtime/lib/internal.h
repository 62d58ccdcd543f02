//===- internal.h - What libattnrt's files share --------------------------===//

#ifndef ATTNRT_INTERNAL_H
#define ATTNRT_INTERNAL_H

/* Sets the calling thread's attnrt_last_error() to "<context>: <format>". */
void attnrt_internal_set_error(const char *context, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* Clears it: what every entry point does first. */
void attnrt_internal_clear_error(void);

/* Whether block_q rows of a K/V head's query rows (query-major, `group`
   heads each) make one box of Q's (or O's) tensor-map view: whole
   queries, or part of one query's group. The one statement of the rule
   check_launch and attnrt_encode_attention_tensor_map apply. */
static inline int attnrt_internal_q_view_box(long long block_q,
                                             long long group) {
  return block_q >= 1 && block_q <= 256 && group >= 1 &&
         (block_q % group == 0 || group % block_q == 0);
}

#endif // ATTNRT_INTERNAL_H

//===- internal.h - What libattnrt's files share --------------------------===//

#ifndef ATTNRT_INTERNAL_H
#define ATTNRT_INTERNAL_H

/* Sets the calling thread's attnrt_last_error() to "<context>: <format>". */
void attnrt_internal_set_error(const char *context, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* Clears it: what every entry point does first. */
void attnrt_internal_clear_error(void);

#endif // ATTNRT_INTERNAL_H

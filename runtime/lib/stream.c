//===- stream.c - Streams and events --------------------------------------===//
//
// Streams and events over the driver's.
//
//===----------------------------------------------------------------------===//

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "driver.h"

#include <stdio.h>

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

static CUstream to_cu_stream(attnrt_stream *stream) {
  return (CUstream)(void *)stream;
}

static CUevent to_cu_event(attnrt_event *event) {
  return (CUevent)(void *)event;
}

attnrt_status attnrt_stream_create(attnrt_stream **stream) {
  attnrt_internal_begin_call();
  REQUIRE_ARGUMENT(stream, "stream is NULL");
  *stream = NULL;
  int device;
  RETURN_IF_ERROR(attnrt_internal_enter_current_device(__func__, &device));
  CUstream created = NULL;
  // Not CU_STREAM_NON_BLOCKING: the blocking copies must wait for its work.
  CUresult result =
      attnrt_internal_driver.cuStreamCreate(&created, CU_STREAM_DEFAULT);
  if (result)
    return FAIL_DRIVER(result, "cuStreamCreate on device %d failed", device);
  *stream = (attnrt_stream *)(void *)created;
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_stream_destroy(attnrt_stream *stream) {
  attnrt_internal_begin_call();
  REQUIRE_ARGUMENT(stream, "stream is NULL (the default stream cannot be "
                           "destroyed)");
  RETURN_IF_ERROR(attnrt_internal_enter_current_device(__func__, NULL));
  CUresult result =
      attnrt_internal_driver.cuStreamDestroy(to_cu_stream(stream));
  if (result)
    return FAIL_DRIVER(result, "cuStreamDestroy_v2 failed");
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_stream_synchronize(attnrt_stream *stream) {
  attnrt_internal_begin_call();
  RETURN_IF_ERROR(attnrt_internal_enter_current_device(__func__, NULL));
  CUresult result =
      attnrt_internal_driver.cuStreamSynchronize(to_cu_stream(stream));
  if (result)
    return FAIL_DRIVER(result, "cuStreamSynchronize failed");
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_event_create(attnrt_event **event) {
  attnrt_internal_begin_call();
  REQUIRE_ARGUMENT(event, "event is NULL");
  *event = NULL;
  int device;
  RETURN_IF_ERROR(attnrt_internal_enter_current_device(__func__, &device));
  CUevent created = NULL;
  CUresult result =
      attnrt_internal_driver.cuEventCreate(&created, CU_EVENT_DEFAULT);
  if (result)
    return FAIL_DRIVER(result, "cuEventCreate on device %d failed", device);
  *event = (attnrt_event *)(void *)created;
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_event_destroy(attnrt_event *event) {
  attnrt_internal_begin_call();
  REQUIRE_ARGUMENT(event, "event is NULL");
  RETURN_IF_ERROR(attnrt_internal_enter_current_device(__func__, NULL));
  CUresult result = attnrt_internal_driver.cuEventDestroy(to_cu_event(event));
  if (result)
    return FAIL_DRIVER(result, "cuEventDestroy_v2 failed");
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_event_record(attnrt_event *event, attnrt_stream *stream) {
  attnrt_internal_begin_call();
  REQUIRE_ARGUMENT(event, "event is NULL");
  RETURN_IF_ERROR(attnrt_internal_enter_current_device(__func__, NULL));
  CUresult result = attnrt_internal_driver.cuEventRecord(to_cu_event(event),
                                                         to_cu_stream(stream));
  if (result)
    return FAIL_DRIVER(result, "cuEventRecord failed");
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_event_synchronize(attnrt_event *event) {
  attnrt_internal_begin_call();
  REQUIRE_ARGUMENT(event, "event is NULL");
  RETURN_IF_ERROR(attnrt_internal_enter_current_device(__func__, NULL));
  CUresult result =
      attnrt_internal_driver.cuEventSynchronize(to_cu_event(event));
  if (result)
    return FAIL_DRIVER(result, "cuEventSynchronize failed");
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_event_elapsed_ms(float *milliseconds, attnrt_event *start,
                                      attnrt_event *end) {
  attnrt_internal_begin_call();
  REQUIRE_ARGUMENT(milliseconds, "milliseconds is NULL");
  *milliseconds = 0.0f;
  REQUIRE_ARGUMENT(start, "start is NULL");
  REQUIRE_ARGUMENT(end, "end is NULL");
  RETURN_IF_ERROR(attnrt_internal_enter_current_device(__func__, NULL));
  // Without the wait the driver answers CUDA_ERROR_NOT_READY.
  CUresult result = attnrt_internal_driver.cuEventSynchronize(to_cu_event(end));
  if (result)
    return FAIL_DRIVER(result, "cuEventSynchronize of the end event failed");
  float elapsed = 0.0f;
  result = attnrt_internal_driver.cuEventElapsedTime(
      &elapsed, to_cu_event(start), to_cu_event(end));
  if (result)
    return FAIL_DRIVER(result, "cuEventElapsedTime failed (were both events "
                               "recorded?)");
  *milliseconds = elapsed;
  return ATTNRT_SUCCESS;
}

// The watchdog: a kernel that would hang must end the process with status
// 124 and a message. The launch runs in a child process so this one can
// check how it ended.
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"
#include ATTN_MSL_KERNEL_SOURCE

int main() {
  int pipe_fds[2];
  CHECK(pipe(pipe_fds) == 0, "pipe");
  pid_t child = fork();
  if (child == 0) {
    dup2(pipe_fds[1], 2);
    std::vector<int> flag(1, 0);
    attn_msl::LaunchOptions options;
    options.watchdog_seconds = 1;
    attn_msl::LaunchResult result = attn_msl::launch(
        ATTN_MSL_KERNEL(spin_wait), {1, 1, 1}, {64, 1, 1},
        {attn_msl::bind_buffer(0, flag.data(), 1)}, {}, options);
    std::fprintf(stderr, "launch returned %d\n", int(result.ok));
    std::_Exit(0);
  }
  close(pipe_fds[1]);
  std::string output;
  char chunk[256];
  for (ssize_t got; (got = read(pipe_fds[0], chunk, sizeof chunk)) > 0;)
    output.append(chunk, size_t(got));
  int status = 0;
  waitpid(child, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 124, "child status %d",
        status);
  for (const char *fragment :
       {"kernel 'spin_wait'", "threadgroup (0,0,0), thread 0",
        "no barrier, SIMD collective or return for 1 s"})
    CHECK(output.find(fragment) != std::string::npos,
          "watchdog message lacks \"%s\": %s", fragment, output.c_str());
  std::printf("watchdog reported: %s", output.c_str());
  return test::finish("watchdog");
}

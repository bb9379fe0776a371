// A listen() recorder for the end-to-end tests: preloaded into the trainer (LD_PRELOAD, inherited by
// the ranks it starts), it passes each listen() call on to the C library and then appends the
// socket's bound address to the file named by TRAINER_LISTEN_RECORD, one line per call:
// "<pid> <address> <port>" (IPv6 addresses in brackets). Looking at /proc from outside misses
// Gloo's sockets on a loaded machine (Debian's 1.13 listens only while the ranks connect, a few
// milliseconds); this sees every one, however short it lives.
#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace {

using ListenFunction = int (*)(int, int);

// The address text of `fd`'s local end, or "?" when it is not an IP socket.
void describe(int fd, char* text, std::size_t size, int* port) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  *port = -1;
  std::snprintf(text, size, "?");
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return;
  if (address.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&address);
    ::inet_ntop(AF_INET, &v4->sin_addr, text, static_cast<socklen_t>(size));
    *port = ntohs(v4->sin_port);
  } else if (address.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&address);
    char inner[INET6_ADDRSTRLEN] = "";
    ::inet_ntop(AF_INET6, &v6->sin6_addr, inner, sizeof(inner));
    std::snprintf(text, size, "[%s]", inner);
    *port = ntohs(v6->sin6_port);
  } else if (address.ss_family == AF_UNIX) {
    std::snprintf(text, size, "unix");
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int listen(int fd, int backlog) {
  static const auto real = reinterpret_cast<ListenFunction>(::dlsym(RTLD_NEXT, "listen"));
  const int result = real(fd, backlog);
  const char* path = std::getenv("TRAINER_LISTEN_RECORD");
  if (result == 0 && path != nullptr) {
    char address[INET6_ADDRSTRLEN + 3];
    int port = -1;
    describe(fd, address, sizeof(address), &port);
    char line[128];
    const int length = std::snprintf(line, sizeof(line), "%d %s %d\n", static_cast<int>(::getpid()), address, port);
    // One write() per line on an O_APPEND file: the ranks' lines never interleave.
    const int out = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (out >= 0) {
      if (length > 0) (void)!::write(out, line, static_cast<std::size_t>(length));
      ::close(out);
    }
  }
  return result;
}

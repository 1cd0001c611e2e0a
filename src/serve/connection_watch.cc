#include "serve/connection_watch.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cstdlib>

namespace ridge {
namespace {

int port_of(const sockaddr_storage& addr) {
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(addr).sin_port);
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(addr).sin6_port);
  return -1;
}

// The numeric host of an address, as httplib formats remote_addr (getnameinfo, NI_NUMERICHOST).
std::string host_of(const sockaddr_storage& addr, socklen_t len) {
  char host[NI_MAXHOST];
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&addr), len, host, sizeof host, nullptr, 0, NI_NUMERICHOST) != 0) return {};
  return host;
}

// Calls visit(fd, peer, peer_len) for each connected socket of this process whose local port is
// local_port, until it returns true. Descriptors other threads open and close meanwhile are only
// read (fstat, getsockname, getpeername).
void for_each_connection(int local_port, const std::function<bool(int, const sockaddr_storage&, socklen_t)>& visit) {
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return;
  while (const dirent* entry = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (*end != '\0' || fd == dirfd(dir)) continue;
    struct stat st {};
    if (fstat(int(fd), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (getsockname(int(fd), reinterpret_cast<sockaddr*>(&addr), &len) != 0 || port_of(addr) != local_port) continue;
    len = sizeof addr;
    if (getpeername(int(fd), reinterpret_cast<sockaddr*>(&addr), &len) != 0) continue;  // a listener
    if (visit(int(fd), addr, len)) break;
  }
  closedir(dir);
}

}  // namespace

// One that matches both ends of the connection can only be the one httplib serves this request on.
ConnectionWatch::ConnectionWatch(const std::string& remote_addr, int remote_port, int local_port) {
  for_each_connection(local_port, [&](int fd, const sockaddr_storage& peer, socklen_t len) {
    if (port_of(peer) != remote_port || host_of(peer, len) != remote_addr) return false;
    fd_ = fd;
    return true;
  });
}

int shut_down_idle_connections(int local_port, const std::function<bool(const std::string&, int)>& busy) {
  int shut = 0;
  for_each_connection(local_port, [&](int fd, const sockaddr_storage& peer, socklen_t len) {
    if (!busy(host_of(peer, len), port_of(peer)) && shutdown(fd, SHUT_RD) == 0) ++shut;
    return false;
  });
  return shut;
}

bool ConnectionWatch::closed() const {
  if (fd_ < 0) return false;
  pollfd p{fd_, POLLIN | POLLRDHUP, 0};
  if (poll(&p, 1, 0) <= 0) return false;
  if (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) return true;
  char byte;
  return recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;  // readable with nothing to read: end of stream
}

}  // namespace ridge

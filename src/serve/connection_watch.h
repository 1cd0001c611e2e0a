#pragma once
// Whether the client of a request has hung up, for a handler that waits for a non-streamed result.
// httplib 0.11 gives handlers neither the socket nor is_connection_closed() (streamed responses
// learn it from the DataSink), so the socket is found among the process's descriptors by the
// connection's addresses, which httplib does pass: its peer is remote_addr:remote_port and its
// local port is local_port. Linux (/proc/self/fd); elsewhere the watch never fires.
#include <functional>
#include <string>

namespace ridge {

class ConnectionWatch {
 public:
  ConnectionWatch(const std::string& remote_addr, int remote_port, int local_port);

  // True once the peer has closed or reset the connection; false while open or when the socket
  // was not found. The descriptor is only borrowed: httplib owns it until the response is written.
  bool closed() const;
  bool found() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// The end of a graceful shutdown, once the listener is closed: shuts the reading side of every
// connected socket of this process whose local port is local_port, except those `busy` names by
// their peer (remote_addr as httplib formats it, remote_port). httplib's worker on an idle keep-alive
// connection waits for the client's next request up to its keep-alive timeout (5 s) without looking
// at the server's state; a shut read side wakes it to close at once. A connection whose response is
// being written must be left alone (httplib stops writing to a socket that reads as closed).
// Returns how many sockets it shut (Linux; 0 elsewhere).
int shut_down_idle_connections(int local_port, const std::function<bool(const std::string&, int)>& busy);

}  // namespace ridge

// A kvmon client that subscribes and then never reads, for bench/kvmon_clients.sh. Its receive
// buffer is set small before connecting, so what piles up is in kvmon's queue (and kernel send
// buffer), not in an autotuned client buffer of many megabytes: the drop is then kvmon's doing.
// Usage: kvmon_stuck_client PORT SECONDS   (connects to 127.0.0.1:PORT, sleeps SECONDS, exits)
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: kvmon_stuck_client PORT SECONDS\n");
    return 2;
  }
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int rcvbuf = 4096;
  if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf) != 0) {
    std::perror("kvmon_stuck_client: socket");
    return 1;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::atoi(argv[1])));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::perror("kvmon_stuck_client: connect");
    return 1;
  }
  const char req[] = "hello v=1\nsubscribe\n";
  if (write(fd, req, sizeof req - 1) != static_cast<ssize_t>(sizeof req - 1)) {
    std::perror("kvmon_stuck_client: write");
    return 1;
  }
  sleep(static_cast<unsigned>(std::atoi(argv[2])));
  close(fd);
  return 0;
}

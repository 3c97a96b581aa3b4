// libzmq, as installed by Debian's libzmq3-dev (or Homebrew's zeromq).
#include <zmq.h>

#ifdef __linux__
#include <sys/epoll.h>
#include <sys/prctl.h>
// Names the calling thread (at most 15 bytes on Linux). prctl is variadic, so Swift cannot call it
// directly; socket-owning threads use this so profilers and `top -H` show whose thread it is.
static inline void ride_name_current_thread(const char *name) {
    prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}
#else
static inline void ride_name_current_thread(const char *name) { (void)name; }
#endif

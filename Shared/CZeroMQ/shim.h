// libzmq, as installed by Debian's libzmq3-dev (or Homebrew's zeromq).
#include <zmq.h>

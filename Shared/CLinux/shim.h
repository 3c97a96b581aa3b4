// What the platform asks of the operating system that Swift cannot call directly: thread names
// and priorities, the allocator's slack, and epoll (not in Swift's Glibc); no ZeroMQ here:
// CZeroMQ is libzmq alone.
#ifdef __linux__
#include <sys/epoll.h>

#include <sys/prctl.h>
// Names the calling thread (at most 15 bytes on Linux). prctl is variadic, so Swift cannot call it
// directly; socket-owning threads use this so profilers and `top -H` show whose thread it is.
static inline void ride_name_current_thread(const char *name) {
    prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
// Raises the calling thread's nice value by `delta` (Linux schedules threads one by one).
static inline void ride_lower_current_thread_priority(int delta) {
    id_t thread = (id_t)syscall(SYS_gettid);
    setpriority(PRIO_PROCESS, thread, getpriority(PRIO_PROCESS, thread) + delta);
}

#include <malloc.h>
// mallopt's constants are macros Swift cannot see through Glibc; see ProcessLimits.keepFreedMemoryLonger.
static inline void ride_set_malloc_slack(int trim_threshold, int top_pad) {
    mallopt(M_TRIM_THRESHOLD, trim_threshold);
    mallopt(M_TOP_PAD, top_pad);
}
#else
static inline void ride_name_current_thread(const char *name) { (void)name; }
static inline void ride_set_malloc_slack(int trim_threshold, int top_pad) { (void)trim_threshold; (void)top_pad; }
static inline void ride_lower_current_thread_priority(int delta) { (void)delta; }
#endif

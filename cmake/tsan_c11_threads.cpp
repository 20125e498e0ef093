// Linked into every executable of a ThreadSanitizer build (EXACTLY_SANITIZE=thread), nowhere else.
//
// Debian's librdkafka creates its threads and takes its locks through C11 <threads.h>. glibc
// implements thrd_create, mtx_lock, cnd_wait and call_once on its internal pthread functions,
// which ThreadSanitizer does not intercept: it would not know librdkafka's threads exist (and
// crash in the first callback one of them runs in our code) nor see its locks. These definitions
// in the executable take precedence over glibc's for librdkafka and forward to the public pthread
// functions, which ThreadSanitizer intercepts. glibc's mtx_t, cnd_t and once_flag are its
// pthread_mutex_t, pthread_cond_t and pthread_once_t (same layout, same implementation).
#include <pthread.h>
#include <threads.h>

#include <cerrno>
#include <cstdint>
#include <new>

static_assert(sizeof(mtx_t) == sizeof(pthread_mutex_t));
static_assert(sizeof(cnd_t) == sizeof(pthread_cond_t));
static_assert(sizeof(once_flag) == sizeof(pthread_once_t));

namespace {

struct Start {
  thrd_start_t function;
  void* argument;
};

void* trampoline(void* start) {
  const Start s = *static_cast<Start*>(start);
  delete static_cast<Start*>(start);
  return reinterpret_cast<void*>(static_cast<std::intptr_t>(s.function(s.argument)));
}

int status(int error) {
  switch (error) {
    case 0: return thrd_success;
    case ENOMEM: return thrd_nomem;
    case ETIMEDOUT: return thrd_timedout;
    case EBUSY: return thrd_busy;
    default: return thrd_error;
  }
}

pthread_mutex_t* native(mtx_t* m) { return reinterpret_cast<pthread_mutex_t*>(m); }
pthread_cond_t* native(cnd_t* c) { return reinterpret_cast<pthread_cond_t*>(c); }

}  // namespace

extern "C" {

int thrd_create(thrd_t* thread, thrd_start_t function, void* argument) {
  auto* start = new (std::nothrow) Start{function, argument};
  if (start == nullptr) return thrd_nomem;
  const int error = pthread_create(thread, nullptr, trampoline, start);
  if (error != 0) delete start;
  return status(error);
}

int thrd_join(thrd_t thread, int* result) {
  void* value = nullptr;
  const int error = pthread_join(thread, &value);
  if (error == 0 && result != nullptr) {
    *result = static_cast<int>(reinterpret_cast<std::intptr_t>(value));
  }
  return status(error);
}

int thrd_detach(thrd_t thread) { return status(pthread_detach(thread)); }

int mtx_init(mtx_t* mutex, int type) {
  pthread_mutexattr_t attributes;
  pthread_mutexattr_init(&attributes);
  pthread_mutexattr_settype(&attributes, (type & mtx_recursive) != 0 ? PTHREAD_MUTEX_RECURSIVE
                                                                     : PTHREAD_MUTEX_NORMAL);
  const int error = pthread_mutex_init(native(mutex), &attributes);
  pthread_mutexattr_destroy(&attributes);
  return status(error);
}
int mtx_lock(mtx_t* mutex) { return status(pthread_mutex_lock(native(mutex))); }
int mtx_trylock(mtx_t* mutex) { return status(pthread_mutex_trylock(native(mutex))); }
int mtx_timedlock(mtx_t* __restrict mutex, const struct timespec* __restrict until) {
  return status(pthread_mutex_timedlock(native(mutex), until));
}
int mtx_unlock(mtx_t* mutex) { return status(pthread_mutex_unlock(native(mutex))); }
void mtx_destroy(mtx_t* mutex) { pthread_mutex_destroy(native(mutex)); }

int cnd_init(cnd_t* cond) { return status(pthread_cond_init(native(cond), nullptr)); }
int cnd_signal(cnd_t* cond) { return status(pthread_cond_signal(native(cond))); }
int cnd_broadcast(cnd_t* cond) { return status(pthread_cond_broadcast(native(cond))); }
int cnd_wait(cnd_t* cond, mtx_t* mutex) { return status(pthread_cond_wait(native(cond), native(mutex))); }
int cnd_timedwait(cnd_t* __restrict cond, mtx_t* __restrict mutex,
                  const struct timespec* __restrict until) {
  return status(pthread_cond_timedwait(native(cond), native(mutex), until));
}
void cnd_destroy(cnd_t* cond) { pthread_cond_destroy(native(cond)); }

void call_once(once_flag* flag, void (*function)()) {
  pthread_once(reinterpret_cast<pthread_once_t*>(flag), function);
}

}  // extern "C"

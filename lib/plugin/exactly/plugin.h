/* exactly/plugin.h: the C ABI between the exactly host and a transform plugin (a shared library).
 *
 * Plain C (C99 and later, and C++), no dependency but the C standard library, so a plugin can be
 * written in any language that can export a C function. C++ authors use <exactly/sdk.hpp>, which is
 * built on this header.
 *
 * The handshake: after dlopen() the host looks up one symbol, EXACTLY_PLUGIN_ENTRY
 * ("exactly_plugin_descriptor"), calls it, and reads the descriptor it returns. The descriptor
 * starts with its own size and the ABI version it was built against; the host refuses a descriptor
 * smaller than EXACTLY_PLUGIN_DESCRIPTOR_V1_SIZE or of another ABI version, and accepts a larger
 * one (fields appended by a later minor revision that this host does not know).
 *
 * Ownership, in one rule: every pointer the host passes in is BORROWED for the duration of the call
 * that receives it; whatever the plugin passes back is COPIED by the host before the call returns,
 * except the descriptor, which is static. The per-type notes below say the same for each pointer.
 *
 * REPLAY: process() may run again for the same record after a transaction aborts (the host rewinds
 * the partition and replays the range). It must be deterministic and must have no side effects
 * outside the transaction (no writes to databases, files or other topics).
 *
 * Threads: the host calls one instance from one thread at a time; distinct instances may run on
 * distinct threads at once. Nothing may unwind (a C++ exception, longjmp) out of a plugin function.
 */
#ifndef EXACTLY_PLUGIN_H
#define EXACTLY_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI this header describes. A change that breaks existing plugins bumps it. */
#define EXACTLY_PLUGIN_ABI_VERSION 1u

/* The one exported symbol. Define it with EXACTLY_PLUGIN_EXPORT so it survives
 * -fvisibility=hidden. */
#define EXACTLY_PLUGIN_ENTRY exactly_plugin_descriptor
#define EXACTLY_PLUGIN_ENTRY_NAME "exactly_plugin_descriptor"

#if defined(_WIN32)
#define EXACTLY_PLUGIN_EXPORT __declspec(dllexport)
#elif defined(__GNUC__) || defined(__clang__)
#define EXACTLY_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define EXACTLY_PLUGIN_EXPORT
#endif

/* What process() returns. An int32_t, not an enum type, so its size is fixed across compilers. */
typedef int32_t exactly_status_t;
#define EXACTLY_OK ((exactly_status_t)0)    /* done; the emitted outputs (zero or more) stand */
#define EXACTLY_SKIP ((exactly_status_t)1)  /* drop this record on purpose: counted, not an error */
#define EXACTLY_ERROR ((exactly_status_t)2) /* failed: the pipeline's failure policy (dlq, skip,
                                               fail) decides; the message goes in `error` */

/* Levels for exactly_host_api_t.log. */
#define EXACTLY_LOG_DEBUG 0
#define EXACTLY_LOG_INFO 1
#define EXACTLY_LOG_WARN 2
#define EXACTLY_LOG_ERROR 3

/* One record header. Byte strings are (pointer, length) and need not be NUL-terminated.
 * In a record: borrowed from the host, valid until process() returns.
 * In an output: owned by the plugin, copied by the host inside emit(). */
typedef struct exactly_header_t {
  const char* name; /* never NULL when name_len > 0 */
  size_t name_len;
  const char* value;     /* ignored when value_is_null */
  size_t value_len;
  int32_t value_is_null; /* nonzero: a null value, distinct from an empty one */
} exactly_header_t;

/* One input record, read-only. The struct and everything it points to are borrowed from the host
 * and valid only until process() returns: copy what must be kept. */
typedef struct exactly_record_t {
  uint32_t struct_size; /* sizeof(exactly_record_t) of the host; later versions only append */
  const char* topic;    /* borrowed; not NUL-terminated */
  size_t topic_len;
  int32_t partition;
  int64_t offset;
  int64_t timestamp_ms; /* milliseconds since the Unix epoch; -1 when the record carries none */
  const char* key;      /* borrowed; ignored when key_is_null */
  size_t key_len;
  int32_t key_is_null;  /* nonzero: a null key, distinct from an empty one */
  const char* value;    /* borrowed; ignored when value_is_null */
  size_t value_len;
  int32_t value_is_null; /* nonzero: a null value (tombstone), distinct from an empty one */
  const exactly_header_t* headers; /* borrowed array of header_count; NULL when 0 */
  size_t header_count;
} exactly_record_t;

/* One output record, built by the plugin. The host copies it, and everything it points to, before
 * emit() returns, so it may live on the plugin's stack. */
typedef struct exactly_output_t {
  uint32_t struct_size; /* set to sizeof(exactly_output_t) */
  const char* key;      /* plugin-owned; ignored when key_is_null */
  size_t key_len;
  int32_t key_is_null;
  const char* value; /* plugin-owned; ignored when value_is_null */
  size_t value_len;
  int32_t value_is_null;
  const exactly_header_t* headers; /* plugin-owned array of header_count; NULL when 0 */
  size_t header_count;
  int32_t has_partition; /* zero: the pipeline's partitioner decides */
  int32_t partition;     /* the output partition when has_partition is nonzero */
} exactly_output_t;

/* Where process() sends its outputs. Host-owned and borrowed for one process() call: do not keep
 * the pointer. emit() returns 0 when the output was taken; anything else means the host could not
 * take it, and process() should then return EXACTLY_ERROR. */
typedef struct exactly_emitter_t exactly_emitter_t;
struct exactly_emitter_t {
  uint32_t struct_size;
  int (*emit)(exactly_emitter_t* emitter, const exactly_output_t* output);
  void* host_ctx; /* the host's; the plugin must not touch it */
};

/* Services the host offers a plugin instance. The struct, and host_ctx, are owned by the host and
 * stay valid from create() until destroy() returns for that instance, so create() may keep the
 * pointer. Both functions may be called from create() and process() (not from destroy()). */
typedef struct exactly_host_api_t {
  uint32_t struct_size; /* sizeof(exactly_host_api_t) of the host */
  uint32_t abi_version; /* EXACTLY_PLUGIN_ABI_VERSION of the host */
  void* host_ctx;       /* pass back as the first argument of the functions below */
  /* level: EXACTLY_LOG_*; message: NUL-terminated, borrowed for the call (the host copies it). */
  void (*log)(void* host_ctx, int32_t level, const char* message);
  /* Adds delta to a counter the plugin names (NUL-terminated, borrowed for the call), exported
   * with the host's metrics as a label value. A name is 1 to 128 characters of A-Z a-z 0-9 _ . : -;
   * the host drops a count under any other name and logs a warning once per instance. Counters
   * are not transactional: a replayed record counts again. */
  void (*counter_add)(void* host_ctx, const char* name, uint64_t delta);
} exactly_host_api_t;

/* One config key, for documentation (`exactly plugins`). Static strings, NUL-terminated. */
typedef struct exactly_config_key_t {
  const char* name;
  const char* description; /* one line */
} exactly_config_key_t;

/* What the entry point returns. Static: owned by the plugin, valid until dlclose(). */
typedef struct exactly_plugin_descriptor_t {
  /* ---- the handshake: these four fields never move ---- */
  uint32_t struct_size; /* sizeof(exactly_plugin_descriptor_t) as the plugin was built */
  uint32_t abi_version; /* EXACTLY_PLUGIN_ABI_VERSION as the plugin was built */
  const char* name;     /* static, NUL-terminated, e.g. "uppercase" */
  const char* version;  /* static, NUL-terminated, the plugin's own version, e.g. "1.0.0" */

  /* ---- version 1 ---- */

  /* Static array of the config keys this plugin reads, ended by an entry whose name is NULL.
   * May be NULL for none. */
  const exactly_config_key_t* config_keys;

  /* Creates an instance. config_json is the transform's TOML table ([transform.config]) rendered
   * as a JSON object (not NUL-terminated; len bytes; borrowed for the call); TOML dates and times
   * arrive as JSON strings. host is valid until destroy() of this instance (see above).
   * On success: store the instance in *instance_out and return EXACTLY_OK. To reject the config,
   * or on any failure: write a NUL-terminated message of at most error_len bytes (including the
   * NUL) into error and return EXACTLY_ERROR; the host shows the message and refuses to start. */
  exactly_status_t (*create)(const char* config_json, size_t len, const exactly_host_api_t* host,
                             void** instance_out, /* the plugin's, owned by it until destroy() */
                             char* error, /* the host's buffer of error_len bytes, for the call */
                             size_t error_len);

  /* Processes one record: calls emitter->emit zero or more times, then returns EXACTLY_OK,
   * EXACTLY_SKIP or EXACTLY_ERROR. On EXACTLY_ERROR (and optionally on EXACTLY_SKIP) writes a
   * NUL-terminated reason of at most error_len bytes into error. The host discards whatever was
   * emitted for a record whose process() does not return EXACTLY_OK. See REPLAY above. */
  exactly_status_t (*process)(void* instance, /* what create() stored; the plugin's */
                              const exactly_record_t* record, /* borrowed for the call */
                              exactly_emitter_t* emitter,     /* borrowed for the call */
                              char* error, /* the host's buffer of error_len bytes, for the call */
                              size_t error_len);

  /* Frees an instance that create() returned. Called once per instance, never concurrently with
   * process() on it. */
  void (*destroy)(void* instance /* what create() stored; invalid once destroy() returns */);
} exactly_plugin_descriptor_t;

/* The smallest descriptor a version-1 host accepts. */
#define EXACTLY_PLUGIN_DESCRIPTOR_V1_SIZE \
  (offsetof(exactly_plugin_descriptor_t, destroy) + sizeof(void (*)(void*)))

/* The signature of the entry point. */
typedef const exactly_plugin_descriptor_t* (*exactly_plugin_entry_t)(void);

/* Declared here so a plugin's definition is checked against it. Returns a static descriptor (or
 * NULL when the plugin cannot describe itself); called once or more, from any thread. */
EXACTLY_PLUGIN_EXPORT const exactly_plugin_descriptor_t* EXACTLY_PLUGIN_ENTRY(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* EXACTLY_PLUGIN_H */

/*
 * xferbench/plugin.h: the C ABI through which xferbench measures a transport it does
 * not carry inside, one shared library per plugin.
 *
 * This header is the whole interface. It needs nothing beyond the C standard library
 * (<stddef.h>, <stdint.h>) and none of xferbench's own code: build a plugin with
 *
 *     cc -shared -fPIC -O2 -I include -o libmine.so mine.c
 *
 * and measure it with `xferbench run stream -t plugin:./libmine.so`. The same file,
 * unchanged, is read by every xferbench of the same ABI generation (see VERSIONING).
 *
 * ---------------------------------------------------------------------------------
 * WHAT A PLUGIN IS
 *
 * A shared library that exports one function, xferbench_plugin_v1, returning a
 * description of one or more transports (struct xb_plugin). A transport moves
 * messages between two endpoints, in one process or between processes of the same
 * user on the same host: one side listens and gets an address string, the other
 * connects to that address, and both then send and receive messages.
 *
 * HOW XFERBENCH USES IT
 *
 * The xferbench process itself never loads a plugin. A short-lived child process
 * opens the library and describes it; the measuring side of every channel (the
 * sender of `stream`, the requester of `pingpong`) runs in a second child process,
 * and the serving side in peer processes of that one (or threads of it with
 * `--peer thread`). Each of them loads the same file. So a plugin that crashes or
 * hangs costs the run it was in, reported like a dead peer, never the tool, the
 * finished results or the other points.
 *
 * ---------------------------------------------------------------------------------
 * THE CONTRACT
 *
 * Objects. A *transport* (create/destroy) holds the parameter values of one
 * configuration. A *listener* (listen/accept/close_listener) waits for one peer. An
 * *endpoint* (accept or connect ... close) is one end of one channel. Every object
 * the plugin hands out is an opaque `void *` the lab passes back unchanged; the lab
 * never frees plugin memory and the plugin never frees the lab's.
 *
 * Threads. The functions of one transport object (listen, connect) may be called
 * from several threads at once; so may create and destroy of different transport
 * objects. A listener is used by one thread. An endpoint is used by one thread at a
 * time, but may move to another thread between calls; its calls are never concurrent
 * with each other. Different endpoints are used concurrently from different threads.
 * The plugin may start threads of its own; they must not outlive the object that
 * started them (destroy, close, close_listener).
 *
 * Processes. The address that listen returns is passed, as a string, to another
 * process of the same user on the same host (or to the same process), which loads
 * the same library, creates its transport with the same parameter values and
 * connects. An address is used by one connect.
 *
 * Hosts (revision 2). A transport whose addresses cross hosts says so with
 * xb_transport::reach = XB_REACH_NETWORK; then `xferbench run --remote AGENT` runs
 * its serving side on the agent's host: the agent loads the same file (the same
 * absolute path there, with the same SHA-256, or the point is refused), creates the
 * transport with the same parameter values and connects to the address listen wrote
 * on the measuring host. For such a run, xb_host::listen_host names the measuring
 * host's address on the route to the agent: listen there and write an address that
 * names it. Every other transport (XB_REACH_HOST, and every plugin built against
 * revision 1) is local to one host, and `--remote` refuses it.
 *
 * Blocking and time. Every call that waits for the peer takes a timeout in
 * nanoseconds and should return XB_ERR_TIMEDOUT when it passes without success
 * (within a few milliseconds). This is how a hung peer is best reported: xferbench
 * passes its `--timeout` (10 s by default) to send and recv, so a timeout there fails
 * the run with the plugin's own message. A transport whose waiting system call has
 * no timeout (a blocking read() on a pipe) may block in it instead: the measuring
 * process watches every channel's progress with the same `--timeout` and fails a
 * point where nothing moves, killing its processes (the built-in pipe relies on this
 * watch too). accept and connect must honour their timeouts. The calls without a
 * timeout (flush, close_send, close, commit, release) may wait only as long as a send
 * would (the timeout last given to send or recv), and never forever.
 *
 * Messages. xferbench decides every message's length, and the two sides agree on it
 * out of band: send gets `len` bytes, and the matching recv gets a buffer of the same
 * `len`. One send is one message; one recv receives exactly one message of exactly
 * `len` bytes, or reports XB_ERR_MESSAGE_SIZE (a stream that ended inside a message,
 * or a message transport's message of another length). Lengths are at least 1 byte.
 * A message longer than the transport's largest (max_message) is refused by send with
 * XB_ERR_TOO_LARGE, and the endpoint stays usable.
 *
 * Ordering and integrity. Messages arrive in the order they were sent, each exactly
 * once and unmodified. (`xferbench run --verify` and `xferbench check` count every
 * message lost, duplicated, reordered or corrupted.)
 *
 * Batching. send returns once the transport accepted the message; it may buffer it.
 * What was sent becomes visible to the peer at the latest at the next flush,
 * close_send or close, or when the sender has to wait (a recv finding nothing, a
 * send finding no room). Request/response loops call flush after each request.
 *
 * Closed. close_send means "no more messages from this side": after the messages
 * already sent, the peer's recv (or borrow) returns XB_CLOSED. Receiving stays
 * possible. close also implies close_send. When the peer's process dies, or its
 * endpoint is closed, a waiting recv returns XB_CLOSED or XB_ERR_PEER, and a send
 * that cannot complete returns XB_ERR_PEER, within the timeout at the latest.
 *
 * Errors. Functions return XB_OK (0), XB_CLOSED (1, recv and borrow only), or a
 * negative XB_ERR_* code. On an error the plugin may write a message for the user
 * (NUL-terminated, at most XB_ERROR_MAX bytes with the NUL) into err->message, which
 * xferbench prints after the transport's name ("posix-mq: send: mq_timedsend: ...").
 * err is never NULL.
 *
 * Zero-copy (XB_ZERO_COPY). A transport whose messages can be written and read in
 * its own memory also fills loan/commit and borrow/release. loan hands out a buffer
 * of at least `len` bytes; xferbench writes the message in it and commits it, which
 * sends it as send would. borrow waits for the next message (as recv: exactly `len`
 * bytes, or XB_CLOSED) and hands out its bytes; xferbench reads them and releases the
 * buffer. An endpoint holds at most one loan and one borrow at a time (a request/
 * response echo borrows a request, loans its reply, commits, releases), and nothing
 * else is called on it between loan and commit or borrow and release.
 *
 * Clean-up. Every transport object is created with the xb_host::scope string, the
 * same in every process taking part in one visit of one measured point (one
 * `xferbench check` check). A plugin that creates objects outside its processes
 * (message queues, socket files, shared memory) names them under the scope. When the
 * lab is done with a scope, every process that used it having exited, xferbench calls
 * xb_plugin::cleanup(scope) in a fresh process, on every path: a run that finished,
 * failed, was interrupted, or whose process crashed or hung and was killed. cleanup
 * removes whatever is left under the scope; it must tolerate finding nothing. With
 * `--remote`, each serving process on the agent's host has a scope of its own, and the
 * agent calls cleanup on it on that host once the process has ended.
 *
 * Signals and the process. A plugin does not install handlers for SIGINT, SIGTERM,
 * SIGHUP or SIGCHLD, does not call exit(), and does not write to stdout (xferbench's
 * processes talk to each other over it); stderr is fine, and is shown when the
 * process dies. Write errors into err->message rather than to stderr where you can.
 *
 * Lifetime. xferbench never unloads a plugin (no dlclose): strings and arrays of the
 * description stay valid for the life of the process.
 *
 * ---------------------------------------------------------------------------------
 * VERSIONING
 *
 * The entry symbol names the ABI generation: xferbench_plugin_v1. Within a
 * generation, structures only grow at their end, as SQLite's sqlite3_vfs does with
 * iVersion: each later revision of this header (XB_ABI_VERSION 2, 3, ...) may add
 * members after the last one, never remove, move or retype one. The plugin says which
 * revision it was built with in xb_plugin::abi_version; xferbench reads only the
 * members that revision has, so a plugin built against revision 1 keeps working with
 * every later xferbench of generation 1, unchanged and without rebuilding.
 * xferbench refuses a revision newer than its own (it would not know the members)
 * with a usage error naming both. Arrays of structures (transports, params) are read
 * with the element size of the plugin's revision.
 *
 * An incompatible change would start a new generation, xferbench_plugin_v2, which a
 * plugin could export next to v1. None is planned.
 *
 * The host tells the plugin its own revision (host_abi_version), so a plugin may
 * fill members of a newer revision only when the host knows them, and may read a
 * member of a newer revision in what the host passes it (xb_host) only when
 * xb_host::abi_version says the host has it.
 *
 * Revisions: 1, the first. 2 added xb_transport::reach and xb_host::listen_host
 * (transports whose addresses cross hosts, for `--remote`); a revision-1 plugin is
 * read as XB_REACH_HOST.
 */
#ifndef XFERBENCH_PLUGIN_H
#define XFERBENCH_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The revision of this header within generation 1. */
#define XB_ABI_VERSION 2

/*
 * XB_REQUIRE_ABI(n): stops the build, with a message, when this header is older than
 * revision n, for a plugin that fills or reads members revision n added. Write it
 * once at file scope, after the #include:
 *
 *     #include <xferbench/plugin.h>
 *     XB_REQUIRE_ABI(2);   (this file sets xb_transport::reach)
 *
 * It is a _Static_assert in C11 and later, a static_assert in C++11 and later, and a
 * typedef of an array of negative size before (C99, C++98), whose error names
 * xb_abi_revision_too_old. It checks the header the plugin is compiled with; the
 * xferbench that loads the plugin checks the revision the plugin says it was built
 * with (see VERSIONING).
 */
#if defined(__cplusplus) && __cplusplus >= 201103L
#define XB_REQUIRE_ABI(n)                                                              \
    static_assert(XB_ABI_VERSION >= (n), "xferbench/plugin.h is older than ABI "       \
                                         "revision " #n ": use the header of a newer " \
                                         "xferbench (xferbench plugin sdk --prefix DIR)")
#elif !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define XB_REQUIRE_ABI(n)                                                              \
    _Static_assert(XB_ABI_VERSION >= (n), "xferbench/plugin.h is older than ABI "      \
                                          "revision " #n ": use the header of a newer " \
                                          "xferbench (xferbench plugin sdk --prefix DIR)")
#else
#define XB_ABI_PASTE_(a, b) a##b
#define XB_ABI_PASTE(a, b) XB_ABI_PASTE_(a, b)
#define XB_REQUIRE_ABI(n)                                                              \
    typedef char XB_ABI_PASTE(xb_abi_revision_too_old_,                                 \
                              __LINE__)[(XB_ABI_VERSION >= (n)) ? 1 : -1]
#endif

/* Marks the entry symbol for export when building with -fvisibility=hidden. */
#if defined(__GNUC__) || defined(__clang__)
#define XB_EXPORT __attribute__((visibility("default")))
#else
#define XB_EXPORT
#endif

/* ---- status codes ---------------------------------------------------------- */

/* Success. */
#define XB_OK 0
/* recv, borrow: the peer closed its sending side; no message follows. */
#define XB_CLOSED 1
/* Nothing happened within the timeout. */
#define XB_ERR_TIMEDOUT (-1)
/* The peer is gone: its process died or it closed its endpoint. */
#define XB_ERR_PEER (-2)
/* send, loan: the message is longer than the transport's largest. */
#define XB_ERR_TOO_LARGE (-3)
/* recv, borrow: what arrived is not one message of `len` bytes. */
#define XB_ERR_MESSAGE_SIZE (-4)
/* connect: the address is not one this transport gave out, or not reachable. */
#define XB_ERR_ADDRESS (-5)
/* The operation is not offered (zero-copy calls of a copying transport). */
#define XB_ERR_UNSUPPORTED (-6)
/* create: a parameter value the plugin cannot use (the message says which). */
#define XB_ERR_PARAM (-7)
/* Anything else: a system call failed, memory ran out, ... */
#define XB_ERR_IO (-8)

/* Largest error message, with its terminating NUL. */
#define XB_ERROR_MAX 256
/* Largest address, with its terminating NUL. */
#define XB_ADDRESS_MAX 256

/* Where a function reports what went wrong; see "Errors" above. */
typedef struct xb_error {
    char message[XB_ERROR_MAX];
} xb_error;

/* ---- parameters ------------------------------------------------------------ */

/*
 * A transport declares its parameters; xferbench lists them (`xferbench list -t
 * plugin:PATH`), sweeps them (`-p depth=1,10,100`), parses and checks every value
 * against the declaration before anything runs, records them in results, and hands
 * the parsed values to create. The kinds are those of the built-in transports:
 */
typedef enum xb_param_kind {
    /* A whole number: "10", "-3". number = the value. */
    XB_PARAM_INTEGER = 1,
    /* A byte size: "64", "4KiB", "1MiB", "1MB". number = bytes. */
    XB_PARAM_BYTES = 2,
    /* A length of time: "250ms", "10us", "2s", or bare seconds. number = nanoseconds. */
    XB_PARAM_DURATION = 3,
    /* One of named choices: "spin". number = the choice's index. */
    XB_PARAM_ENUM = 4,
    /* "true" or "false" (also 1/0, on/off, yes/no). number = 1 or 0. */
    XB_PARAM_BOOL = 5
} xb_param_kind;

/* One value of an XB_PARAM_ENUM parameter. */
typedef struct xb_choice {
    /* As written on the command line: [a-z0-9][a-z0-9._-]*. */
    const char *name;
    /* One line of help, or NULL. */
    const char *help;
} xb_choice;

/* One parameter of a transport. */
typedef struct xb_param {
    /* As in `-p NAME=VALUE`: [a-z][a-z0-9_]*, at most 32 bytes, unique within the
     * transport, and none of xferbench's axis names (transport, size, channels,
     * workload, zero_copy). */
    const char *name;
    /* An xb_param_kind. */
    uint32_t kind;
    /* The default, written as a user would write it ("10", "64KiB", "1ms", "spin",
     * "false"); it must parse as the kind and lie within min..max. */
    const char *default_value;
    /* One line of help for `xferbench list`. */
    const char *help;
    /* XB_PARAM_INTEGER, _BYTES, _DURATION (nanoseconds): the smallest and largest
     * accepted values, inclusive; both 0 means no bound beyond the kind's own
     * (bytes and durations are never negative). Others: 0. */
    int64_t min;
    int64_t max;
    /* XB_PARAM_ENUM: its choices (at least one, unique names). Others: NULL, 0. */
    const xb_choice *choices;
    size_t choice_count;
} xb_param;

/* One parsed parameter value, as create receives it: one per declared parameter, in
 * declaration order, the default where the user gave none. */
typedef struct xb_value {
    /* The parameter's name. */
    const char *name;
    /* The value as xferbench shows it ("65536", "spin", "true"). */
    const char *text;
    /* The value as a number; see xb_param_kind for its meaning per kind. */
    int64_t number;
} xb_value;

/* ---- the host -------------------------------------------------------------- */

/* What xferbench tells a transport it creates. Valid during create only (copy what
 * you keep). */
typedef struct xb_host {
    /* The host's revision of this header (XB_ABI_VERSION of the xferbench build). */
    uint32_t abi_version;
    /* The clean-up scope of this process's work: [A-Za-z0-9_-]+, at most 64 bytes,
     * the same in every process of one measured point. Name the objects you leave in
     * the system under it; see "Clean-up" above. */
    const char *scope;

    /* Revision 2. With the peers on another host (`--remote`, an XB_REACH_NETWORK
     * transport only): this host's IP address on the route to theirs ("10.0.0.1"),
     * where listen should listen and which the address it writes should name. NULL
     * when every peer runs on this host. Read it only when abi_version >= 2. */
    const char *listen_host;
} xb_host;

/* ---- a transport ----------------------------------------------------------- */

/* flags */
/* The endpoints move messages in place: loan/commit and borrow/release are filled. */
#define XB_ZERO_COPY 0x1u

/* reach (revision 2) */
/* Peers are processes of this host (the default, and every revision-1 plugin). */
#define XB_REACH_HOST 0u
/* Addresses cross hosts: a peer on another host can connect to what listen wrote
 * (given xb_host::listen_host), so `--remote` may run the serving side there. */
#define XB_REACH_NETWORK 1u

/* One transport of a plugin. Every function pointer is required unless it says
 * "may be NULL". */
typedef struct xb_transport {
    /* Its name in results and tables, and in `-t plugin:PATH:NAME`:
     * [a-z0-9][a-z0-9._-]*, at most 32 bytes, unique within the plugin, and not the
     * name of a built-in transport (shm, pipe, unix, tcp, iceoryx2, rpmsg). */
    const char *name;
    /* One line for `xferbench list`. */
    const char *description;
    /* The largest message any configuration carries, in bytes; 0 for no limit. A
     * configuration may carry less (create's max_message). */
    uint64_t max_message;
    /* XB_ZERO_COPY, or 0. */
    uint32_t flags;
    /* Its parameters (param_count of them; NULL when 0). */
    const xb_param *params;
    size_t param_count;

    /* Makes a transport object from parameter values (count == param_count, in
     * declaration order). Sets *transport, and *max_message to the largest message
     * this configuration carries (0: no limit; it starts as the declared
     * max_message). XB_ERR_PARAM for a value the plugin cannot use. */
    int (*create)(const xb_value *values, size_t count, const xb_host *host,
                  void **transport, uint64_t *max_message, xb_error *err);
    /* Frees a transport object. Listeners and endpoints made from it are closed
     * before. */
    void (*destroy)(void *transport);

    /* Starts listening for one peer. Sets *listener, and writes the address peers
     * pass to connect into address (NUL-terminated, at most address_size bytes with
     * the NUL; address_size is XB_ADDRESS_MAX). */
    int (*listen)(void *transport, void **listener, char *address, size_t address_size,
                  xb_error *err);
    /* Waits up to timeout_ns for the peer to connect; sets *endpoint. Called at most
     * once per listener. */
    int (*accept)(void *listener, uint64_t timeout_ns, void **endpoint, xb_error *err);
    /* Frees a listener, accepted or not (an unaccepted one gives its address up). */
    void (*close_listener)(void *listener);
    /* Connects to a listener's address, waiting up to timeout_ns; sets *endpoint.
     * XB_ERR_ADDRESS for an address this transport did not give out (any string may
     * arrive here, garbage included: refuse it, never crash). */
    int (*connect)(void *transport, const char *address, uint64_t timeout_ns,
                   void **endpoint, xb_error *err);

    /* Sends one message of len bytes (1 <= len), waiting up to timeout_ns for room.
     * The hot path: keep it free of allocation and of system calls it does not
     * need. */
    int (*send)(void *endpoint, const void *message, size_t len, uint64_t timeout_ns,
                xb_error *err);
    /* Makes everything sent so far visible to the peer now; may be NULL (nothing is
     * ever held back). */
    int (*flush)(void *endpoint, xb_error *err);
    /* Receives one message of exactly len bytes into buffer, waiting up to
     * timeout_ns; XB_CLOSED when the peer closed its sending side. The hot path. */
    int (*recv)(void *endpoint, void *buffer, size_t len, uint64_t timeout_ns,
                xb_error *err);
    /* No more messages from this side; the peer's recv returns XB_CLOSED after those
     * already sent. Receiving stays possible. Called at most once. */
    int (*close_send)(void *endpoint, xb_error *err);
    /* Closes (implying close_send if it was not called) and frees an endpoint. */
    void (*close)(void *endpoint);

    /* Zero-copy (XB_ZERO_COPY; NULL otherwise). loan: a buffer of at least len
     * bytes for the next message, waiting up to timeout_ns for room. commit: sends the
     * loaned buffer's first len bytes as one message. borrow: waits up to timeout_ns
     * for the next message, of exactly len bytes, and sets *buffer to its bytes (or
     * returns XB_CLOSED). release: gives the borrowed buffer back. */
    int (*loan)(void *endpoint, size_t len, void **buffer, uint64_t timeout_ns,
                xb_error *err);
    int (*commit)(void *endpoint, void *buffer, size_t len, xb_error *err);
    int (*borrow)(void *endpoint, size_t len, const void **buffer, uint64_t timeout_ns,
                  xb_error *err);
    int (*release)(void *endpoint, const void *buffer, xb_error *err);

    /* Revision 2. Where its peers may run: XB_REACH_HOST (0) or XB_REACH_NETWORK; see
     * "Hosts" above. */
    uint32_t reach;
} xb_transport;

/* ---- the plugin ------------------------------------------------------------ */

typedef struct xb_plugin {
    /* XB_ABI_VERSION as the plugin was built: which members it fills. First, so that
     * every revision can read it. */
    uint32_t abi_version;
    /* The library's name ("xb-posix-mq"), for results and `xferbench list`. */
    const char *name;
    /* Its own version ("1.4.2", a git describe, a build date): recorded with every
     * result beside the file's SHA-256, so `xferbench compare` tells builds apart. */
    const char *version;
    /* Its transports: transport_count of them (1 to 64). */
    const xb_transport *transports;
    size_t transport_count;
    /* Removes whatever is left under a clean-up scope (see "Clean-up"); may be NULL
     * when the plugin leaves nothing outside its processes. */
    void (*cleanup)(const char *scope);
} xb_plugin;

/*
 * The entry point, the one symbol a plugin exports:
 *
 *     XB_EXPORT const xb_plugin *xferbench_plugin_v1(uint32_t host_abi_version)
 *     {
 *         return &my_plugin;
 *     }
 *
 * Returns the description (a static object; it is read, never written or freed), or
 * NULL when the plugin cannot run here (write why to stderr). It may be called more
 * than once per process and must return the same description each time. It must not
 * start threads, open files it keeps or take long: `xferbench list` calls it too.
 */
typedef const xb_plugin *(*xb_plugin_entry)(uint32_t host_abi_version);

XB_EXPORT const xb_plugin *xferbench_plugin_v1(uint32_t host_abi_version);

#ifdef __cplusplus
}
#endif

#endif /* XFERBENCH_PLUGIN_H */

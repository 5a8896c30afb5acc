/*
 * ZeroMQ PAIR sockets over ipc:// as an xferbench transport, through libzmq
 * (Debian: apt-get install libzmq3-dev).
 *
 *     cc -shared -fPIC -O2 -I include -o libxb_zeromq.so examples/plugins/zeromq/zeromq.c -lzmq
 *     xferbench check -t plugin:./libxb_zeromq.so
 *     xferbench run pingpong -t unix,plugin:./libxb_zeromq.so -s 64,4KiB
 *
 * The design, and what each part of the plugin contract asks of it:
 *
 *  - One ZeroMQ context per transport object (its I/O thread serves every socket of
 *    it). listen binds a PAIR socket to ipc:///tmp/xb-zmq-<scope>-<pid>-<n>; the
 *    address is that endpoint. connect connects a PAIR socket (no reconnection: a
 *    channel is one connection), waits until ZeroMQ reports the connection, and
 *    sends a hello (its pid) that accept waits for.
 *  - A ZeroMQ message is one xferbench message; an empty message ends the stream
 *    (close_send). Sends and receives are non-blocking calls first; only when they
 *    would block does the endpoint wait in zmq_poll, in slices of 50 ms.
 *  - Closing: ZeroMQ discards the messages still in flight when a connection closes,
 *    so close waits for the peer's end of stream (which follows everything the peer
 *    read) before closing the socket, within the timeout.
 *  - The peer's death or close: between slices the endpoint reads its socket
 *    monitor, where ZeroMQ reports the connection's end (ZMQ_EVENT_DISCONNECTED),
 *    and checks that the peer's process (pid from the address or the hello) runs.
 *  - Back-pressure: a PAIR socket blocks (never drops) at its high-water mark, -p hwm
 *    messages each way.
 *  - Clean-up: ZeroMQ removes a bound socket's file when the socket is closed, and
 *    the endpoint removes it too; a process that crashes leaves it, so the cleanup
 *    hook removes /tmp/xb-zmq-<scope>-* (every xferbench process of the scope has
 *    exited when it is called).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include <xferbench/plugin.h>

#define DIR_PREFIX "/tmp/xb-zmq-"
#define SLICE_MS 50
#define HELLO_MAGIC 0x514d5a58u /* "XZMQ" */
#define LINGER_MS 1000

typedef struct {
    void *ctx;
    int hwm;
    char scope[72];
} transport;

typedef struct {
    void *sock, *mon;
    char path[128];
} listener;

typedef struct {
    void *sock, *mon;
    pid_t peer;
    int eos_sent, peer_closed, peer_gone;
    uint64_t timeout_ns;
    char path[128]; /* the bound socket's file, removed on close; empty when connected */
} endpoint;

typedef struct {
    uint32_t magic;
    int32_t pid;
} hello;

static atomic_uint next_socket;
static atomic_uint next_monitor;

static int fail(xb_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}

static int fail_zmq(xb_error *err, const char *what)
{
    return fail(err, XB_ERR_IO, "%s: %s", what, zmq_strerror(zmq_errno()));
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t deadline_after(uint64_t timeout_ns)
{
    uint64_t now = mono_ns();
    return timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
}

/* Milliseconds to wait in the next slice: at most SLICE_MS, at most the deadline. */
static long slice_ms(uint64_t deadline)
{
    uint64_t now = mono_ns();
    if (now >= deadline)
        return 0;
    uint64_t ms = (deadline - now + 999999) / 1000000;
    return ms > SLICE_MS ? SLICE_MS : (long)ms;
}

static int alive(pid_t pid)
{
    if (pid <= 0)
        return 1;
    if (kill(pid, 0) != 0 && errno == ESRCH)
        return 0;
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return errno != ENOENT;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    return !(p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'));
}

/* A PAIR socket with the transport's options, and a monitor reporting `events`. */
static int new_socket(transport *t, int events, void **sock, void **mon, xb_error *err)
{
    *sock = zmq_socket(t->ctx, ZMQ_PAIR);
    if (!*sock)
        return fail_zmq(err, "zmq_socket");
    int linger = LINGER_MS;
    zmq_setsockopt(*sock, ZMQ_SNDHWM, &t->hwm, sizeof t->hwm);
    zmq_setsockopt(*sock, ZMQ_RCVHWM, &t->hwm, sizeof t->hwm);
    zmq_setsockopt(*sock, ZMQ_LINGER, &linger, sizeof linger);
    /* A name of its own: a socket's address may be reused while an old monitor
     * still holds its inproc name. */
    char inproc[64];
    snprintf(inproc, sizeof inproc, "inproc://xb-monitor-%u", atomic_fetch_add(&next_monitor, 1));
    *mon = zmq_socket(t->ctx, ZMQ_PAIR);
    if (!*mon || zmq_socket_monitor(*sock, inproc, events) != 0 ||
        zmq_connect(*mon, inproc) != 0) {
        int e = fail_zmq(err, "zmq_socket_monitor");
        if (*mon)
            zmq_close(*mon);
        zmq_close(*sock);
        return e;
    }
    return XB_OK;
}

static void close_socket(void *sock, void *mon)
{
    zmq_socket_monitor(sock, NULL, 0);
    zmq_close(mon);
    zmq_close(sock);
}

/* Reads the monitor's pending events without waiting; returns the last one seen
 * (0: none). An event is two frames: 6 bytes (event, value), then an address. */
static int monitor_event(void *mon)
{
    int last = 0;
    for (;;) {
        unsigned char head[6];
        char addr[256];
        if (zmq_recv(mon, head, sizeof head, ZMQ_DONTWAIT) < 0)
            return last;
        zmq_recv(mon, addr, sizeof addr, ZMQ_DONTWAIT);
        uint16_t event;
        memcpy(&event, head, sizeof event);
        last = event;
    }
}

/* ---- transport ------------------------------------------------------------------ */

static int xz_create(const xb_value *values, size_t count, const xb_host *host, void **out,
                      uint64_t *max_message, xb_error *err)
{
    (void)max_message; /* no limit */
    transport *t = calloc(1, sizeof *t);
    if (!t)
        return fail(err, XB_ERR_IO, "out of memory");
    t->hwm = 1000;
    for (size_t i = 0; i < count; i++)
        if (strcmp(values[i].name, "hwm") == 0)
            t->hwm = (int)values[i].number;
    snprintf(t->scope, sizeof t->scope, "%s", host->scope);
    t->ctx = zmq_ctx_new();
    if (!t->ctx) {
        free(t);
        return fail_zmq(err, "zmq_ctx_new");
    }
    *out = t;
    return XB_OK;
}

static void xz_destroy(void *tp)
{
    transport *t = tp;
    zmq_ctx_term(t->ctx); /* waits for sockets' pending messages, LINGER_MS at most */
    free(t);
}

static int xz_listen(void *tp, void **out, char *address, size_t size, xb_error *err)
{
    transport *t = tp;
    listener *l = calloc(1, sizeof *l);
    if (!l)
        return fail(err, XB_ERR_IO, "out of memory");
    snprintf(l->path, sizeof l->path, DIR_PREFIX "%s-%d-%u", t->scope, (int)getpid(),
             atomic_fetch_add(&next_socket, 1));
    int rc = new_socket(t, ZMQ_EVENT_DISCONNECTED, &l->sock, &l->mon, err);
    if (rc != XB_OK) {
        free(l);
        return rc;
    }
    char endpoint_name[160];
    snprintf(endpoint_name, sizeof endpoint_name, "ipc://%s", l->path);
    if (zmq_bind(l->sock, endpoint_name) != 0) {
        rc = fail(err, XB_ERR_IO, "zmq_bind %s: %s", endpoint_name, zmq_strerror(zmq_errno()));
        close_socket(l->sock, l->mon);
        free(l);
        return rc;
    }
    snprintf(address, size, "%s", endpoint_name);
    *out = l;
    return XB_OK;
}

static int xz_accept(void *lp, uint64_t timeout_ns, void **out, xb_error *err)
{
    listener *l = lp;
    uint64_t deadline = deadline_after(timeout_ns);
    for (;;) {
        hello h;
        int n = zmq_recv(l->sock, &h, sizeof h, ZMQ_DONTWAIT);
        if (n == (int)sizeof h && h.magic == HELLO_MAGIC) {
            endpoint *e = calloc(1, sizeof *e);
            if (!e)
                return fail(err, XB_ERR_IO, "out of memory");
            e->sock = l->sock;
            e->mon = l->mon;
            e->peer = h.pid == (int32_t)getpid() ? 0 : h.pid;
            e->timeout_ns = 1000000000ull;
            snprintf(e->path, sizeof e->path, "%s", l->path);
            l->sock = l->mon = NULL; /* the endpoint's now */
            *out = e;
            return XB_OK;
        }
        if (n >= 0)
            return fail(err, XB_ERR_IO, "a %d-byte message where the peer's hello was due", n);
        if (zmq_errno() != EAGAIN && zmq_errno() != EINTR)
            return fail_zmq(err, "zmq_recv");
        long ms = slice_ms(deadline);
        if (ms == 0)
            return fail(err, XB_ERR_TIMEDOUT, "no peer connected");
        zmq_pollitem_t item = {.socket = l->sock, .events = ZMQ_POLLIN};
        zmq_poll(&item, 1, ms);
    }
}

static void xz_close_listener(void *lp)
{
    listener *l = lp;
    if (l->sock) {
        close_socket(l->sock, l->mon);
        unlink(l->path);
    }
    free(l);
}

/* An address is "ipc:///tmp/xb-zmq-<scope>-<pid>-<n>" as xz_listen makes it; the
 * listener's pid comes from it. */
static int parse_address(const char *a, pid_t *pid)
{
    const char *path = a + 6;
    if (strncmp(a, "ipc://" DIR_PREFIX, 6 + strlen(DIR_PREFIX)) != 0 || strlen(a) > 120)
        return 0;
    for (const char *c = path + strlen(DIR_PREFIX); *c; c++)
        if (!(*c == '-' || *c == '_' || (*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') ||
              (*c >= 'A' && *c <= 'Z')))
            return 0;
    const char *last = strrchr(path, '-');
    const char *p = last ? last - 1 : NULL;
    while (p && p > path && *p != '-')
        p--;
    if (!p || *p != '-')
        return 0;
    char *end;
    long v = strtol(p + 1, &end, 10);
    if (end != last || v <= 0)
        return 0;
    *pid = (pid_t)v;
    return 1;
}

/* Waits for the monitor to report the connection: 1 connected, 0 not in time. */
static int wait_connected(void *mon, uint64_t deadline)
{
    for (;;) {
        int ms = (int)slice_ms(deadline);
        if (ms == 0)
            return 0;
        zmq_setsockopt(mon, ZMQ_RCVTIMEO, &ms, sizeof ms);
        unsigned char head[6];
        char addr[256];
        if (zmq_recv(mon, head, sizeof head, 0) < 0)
            continue;
        zmq_recv(mon, addr, sizeof addr, 0);
        uint16_t event;
        memcpy(&event, head, sizeof event);
        if (event == ZMQ_EVENT_CONNECTED)
            return 1;
    }
}

static int xz_connect(void *tp, const char *address, uint64_t timeout_ns, void **out,
                        xb_error *err)
{
    transport *t = tp;
    pid_t listener_pid;
    if (!parse_address(address, &listener_pid))
        return fail(err, XB_ERR_ADDRESS, "\"%.64s\" is not a zeromq plugin address", address);
    struct stat st;
    if (stat(address + 6, &st) != 0 || !S_ISSOCK(st.st_mode))
        return fail(err, XB_ERR_ADDRESS, "nothing listens at %s", address);
    void *sock, *mon;
    int rc = new_socket(t, ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED, &sock, &mon, err);
    if (rc != XB_OK)
        return rc;
    uint64_t deadline = deadline_after(timeout_ns);
    if (zmq_connect(sock, address) != 0) {
        rc = fail(err, XB_ERR_ADDRESS, "zmq_connect %s: %s", address, zmq_strerror(zmq_errno()));
        close_socket(sock, mon);
        return rc;
    }
    if (!wait_connected(mon, deadline)) {
        close_socket(sock, mon);
        return fail(err, XB_ERR_TIMEDOUT, "could not connect to %s", address);
    }
    hello h = {.magic = HELLO_MAGIC, .pid = (int32_t)getpid()};
    if (zmq_send(sock, &h, sizeof h, ZMQ_DONTWAIT) != (int)sizeof h) {
        rc = fail_zmq(err, "hello");
        close_socket(sock, mon);
        return rc;
    }
    endpoint *e = calloc(1, sizeof *e);
    if (!e) {
        close_socket(sock, mon);
        return fail(err, XB_ERR_IO, "out of memory");
    }
    e->sock = sock;
    e->mon = mon;
    e->peer = listener_pid == getpid() ? 0 : listener_pid;
    e->timeout_ns = 1000000000ull;
    *out = e;
    return XB_OK;
}

/* ---- the hot path ------------------------------------------------------------------ */

/* Why a wait that timed out a slice cannot go on, or 0 to keep waiting. */
static int peer_trouble(endpoint *e, xb_error *err)
{
    if (monitor_event(e->mon) == ZMQ_EVENT_DISCONNECTED)
        e->peer_gone = 1;
    if (e->peer_gone)
        return fail(err, XB_ERR_PEER, "the peer disconnected");
    if (!alive(e->peer))
        return fail(err, XB_ERR_PEER, "the peer process (pid %d) is gone", (int)e->peer);
    return 0;
}

/* Waits up to the deadline for `events` on the socket, in slices. */
static int wait_socket(endpoint *e, short events, uint64_t deadline, const char *what,
                       xb_error *err)
{
    long ms = slice_ms(deadline);
    if (ms == 0)
        return fail(err, XB_ERR_TIMEDOUT, "%s", what);
    zmq_pollitem_t item = {.socket = e->sock, .events = events};
    int n = zmq_poll(&item, 1, ms);
    if (n < 0 && zmq_errno() != EINTR)
        return fail_zmq(err, "zmq_poll");
    if (n == 0)
        return peer_trouble(e, err);
    return XB_OK;
}

static int send_frame(endpoint *e, const void *msg, size_t len, uint64_t timeout_ns,
                      xb_error *err)
{
    uint64_t deadline = 0;
    for (;;) {
        int n = zmq_send(e->sock, msg, len, ZMQ_DONTWAIT);
        if (n == (int)len)
            return XB_OK;
        if (zmq_errno() != EAGAIN && zmq_errno() != EINTR)
            return fail_zmq(err, "zmq_send");
        if (deadline == 0)
            deadline = deadline_after(timeout_ns);
        int rc = wait_socket(e, ZMQ_POLLOUT, deadline, "the peer took no message", err);
        if (rc != XB_OK)
            return rc;
    }
}

static int xz_send(void *ep, const void *msg, size_t len, uint64_t timeout_ns,
                        xb_error *err)
{
    endpoint *e = ep;
    e->timeout_ns = timeout_ns;
    if (e->eos_sent)
        return fail(err, XB_ERR_IO, "the sending side is closed");
    if (len > (size_t)INT32_MAX)
        return fail(err, XB_ERR_TOO_LARGE, "a %zu-byte message", len);
    return send_frame(e, msg, len, timeout_ns, err);
}

static int xz_recv(void *ep, void *buf, size_t len, uint64_t timeout_ns, xb_error *err)
{
    endpoint *e = ep;
    e->timeout_ns = timeout_ns;
    if (e->peer_closed)
        return XB_CLOSED;
    uint64_t deadline = 0;
    for (;;) {
        int n = zmq_recv(e->sock, buf, len, ZMQ_DONTWAIT);
        if (n == 0) {
            e->peer_closed = 1;
            return XB_CLOSED;
        }
        if (n > 0 && (size_t)n == len)
            return XB_OK;
        if (n > 0)
            return fail(err, XB_ERR_MESSAGE_SIZE, "a %d-byte message where %zu bytes were expected",
                        n, len);
        if (zmq_errno() != EAGAIN && zmq_errno() != EINTR)
            return fail_zmq(err, "zmq_recv");
        if (e->peer_gone)
            return fail(err, XB_ERR_PEER, "the peer disconnected");
        if (deadline == 0)
            deadline = deadline_after(timeout_ns);
        int rc = wait_socket(e, ZMQ_POLLIN, deadline, "no message arrived", err);
        if (rc == XB_ERR_PEER) {
            /* Messages that arrived before the disconnection are still there. */
            n = zmq_recv(e->sock, buf, len, ZMQ_DONTWAIT);
            if (n == 0) {
                e->peer_closed = 1;
                return XB_CLOSED;
            }
            if (n > 0 && (size_t)n == len)
                return XB_OK;
        }
        if (rc != XB_OK)
            return rc;
    }
}

static int xz_close_send(void *ep, xb_error *err)
{
    endpoint *e = ep;
    if (e->eos_sent)
        return XB_OK;
    e->eos_sent = 1;
    if (e->peer_gone)
        return XB_OK;
    return send_frame(e, "", 0, e->timeout_ns, err);
}

static void xz_close(void *ep)
{
    endpoint *e = ep;
    xb_error ignored;
    if (!e->eos_sent)
        xz_close_send(e, &ignored);
    /* ZeroMQ drops what is still in flight when a connection closes, so wait for the
     * peer's end of stream before closing ours: it comes once the peer has read
     * everything we sent. Give up at once if the peer sends data instead (it is not
     * closing), disconnects, or the timeout passes. */
    uint64_t deadline = deadline_after(e->timeout_ns);
    while (!e->peer_closed && !e->peer_gone) {
        char byte;
        int n = zmq_recv(e->sock, &byte, sizeof byte, ZMQ_DONTWAIT);
        if (n == 0)
            e->peer_closed = 1;
        else if (n > 0 || (zmq_errno() != EAGAIN && zmq_errno() != EINTR))
            break;
        else if (wait_socket(e, ZMQ_POLLIN, deadline, "", &ignored) != XB_OK)
            break;
    }
    close_socket(e->sock, e->mon);
    if (e->path[0])
        unlink(e->path);
    free(e);
}

/* ---- clean-up -------------------------------------------------------------------- */

static void xz_cleanup(const char *scope)
{
    DIR *d = opendir("/tmp");
    if (!d)
        return;
    char prefix[128];
    snprintf(prefix, sizeof prefix, "xb-zmq-%s-", scope);
    size_t n = strlen(prefix);
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        if (strncmp(ent->d_name, prefix, n) == 0) {
            char path[300];
            snprintf(path, sizeof path, "/tmp/%s", ent->d_name);
            unlink(path);
        }
    }
    closedir(d);
}

/* ---- description ----------------------------------------------------------------- */

static const xb_param params[] = {
    {
        .name = "hwm",
        .kind = XB_PARAM_INTEGER,
        .default_value = "1000",
        .help = "high-water mark: messages queued each way before a send waits (ZMQ_SNDHWM, ZMQ_RCVHWM)",
        .min = 1,
        .max = 10000000,
    },
};

static const xb_transport transports[] = {
    {
        .name = "zeromq",
        .description = "ZeroMQ PAIR sockets over ipc:// (libzmq)",
        .max_message = 0,
        .flags = 0,
        .params = params,
        .param_count = sizeof params / sizeof params[0],
        .create = xz_create,
        .destroy = xz_destroy,
        .listen = xz_listen,
        .accept = xz_accept,
        .close_listener = xz_close_listener,
        .connect = xz_connect,
        .send = xz_send,
        .flush = NULL,
        .recv = xz_recv,
        .close_send = xz_close_send,
        .close = xz_close,
    },
};

static char version[32];

static const xb_plugin plugin = {
    .abi_version = XB_ABI_VERSION,
    .name = "xb-zeromq",
    .version = version,
    .transports = transports,
    .transport_count = sizeof transports / sizeof transports[0],
    .cleanup = xz_cleanup,
};

XB_EXPORT const xb_plugin *xferbench_plugin_v1(uint32_t host_abi_version)
{
    (void)host_abi_version;
    /* The plugin's version and the libzmq it runs with: both change what is measured. */
    if (!version[0]) {
        int major, minor, patch;
        zmq_version(&major, &minor, &patch);
        snprintf(version, sizeof version, "1.0.0 libzmq %d.%d.%d", major, minor, patch);
    }
    return &plugin;
}

/*
 * {{name}}: an xferbench transport plugin.
 *
 * Written by `xferbench plugin new {{name}} --lang c` as a start that works: it moves
 * messages over Unix-domain SOCK_SEQPACKET sockets in the abstract namespace (no file
 * is created, so nothing is left behind when a process dies) and passes
 * `xferbench check`. Replace what the "YOUR TRANSPORT" comments mark with your own
 * code, keep `make check` passing, and measure:
 *
 *     make && make check
 *     xferbench run stream -t unix,plugin:./lib{{ident}}.so -s 64,4KiB --verify
 *
 * xferbench/plugin.h is the contract: what every function must do, its threads, its
 * timeouts, what "closed" means. Its comments are worth reading once in full.
 */
#define _GNU_SOURCE
#include <xferbench/plugin.h>

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* This file fills the members of header revision 2 (xb_transport::reach): refuse an
 * older header at compile time. */
XB_REQUIRE_ABI(2);

/* YOUR TRANSPORT: the largest message it carries (0 for no limit). */
#define MAX_MESSAGE (64 * 1024)
/* The start of every address this transport gives out. */
#define PREFIX "xb-"

/* ---- the objects ------------------------------------------------------------ */

/* YOUR TRANSPORT: one configuration (parameter values, shared state). */
typedef struct {
    char scope[XB_ADDRESS_MAX]; /* host->scope, for naming what listen creates */
} {{ident}}_transport;

/* YOUR TRANSPORT: one listening address, waiting for one peer. */
typedef struct {
    int fd;
} {{ident}}_listener;

/* YOUR TRANSPORT: one end of one channel. */
typedef struct {
    int fd;
} {{ident}}_endpoint;

/* ---- helpers ---------------------------------------------------------------- */

static int fail(xb_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}

static int fail_errno(xb_error *err, const char *what)
{
    int e = errno;
    int code = XB_ERR_IO;
    if (e == EPIPE || e == ECONNRESET || e == ENOTCONN)
        code = XB_ERR_PEER;
    else if (e == EMSGSIZE)
        code = XB_ERR_TOO_LARGE;
    return fail(err, code, "%s: %s", what, strerror(e));
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Waits until fd is ready for events or the deadline passes: XB_OK or
 * XB_ERR_TIMEDOUT. */
static int wait_fd(int fd, short events, uint64_t deadline, xb_error *err, const char *what)
{
    for (;;) {
        uint64_t now = now_ns();
        if (now >= deadline)
            return fail(err, XB_ERR_TIMEDOUT, "%s", what);
        uint64_t left_ms = (deadline - now + 999999) / 1000000;
        struct pollfd p = {.fd = fd, .events = events};
        int n = poll(&p, 1, left_ms > 60000 ? 60000 : (int)left_ms);
        if (n > 0)
            return XB_OK;
        if (n < 0 && errno != EINTR)
            return fail_errno(err, "poll");
    }
}

static uint64_t deadline_after(uint64_t timeout_ns)
{
    uint64_t now = now_ns();
    return timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
}

/* ---- the transport ---------------------------------------------------------- */

static int {{ident}}_create(const xb_value *values, size_t count, const xb_host *host,
                            void **transport, uint64_t *max_message, xb_error *err)
{
    (void)values; /* YOUR TRANSPORT: one value per declared parameter, in order */
    (void)count;
    {{ident}}_transport *t = calloc(1, sizeof *t);
    if (t == NULL)
        return fail(err, XB_ERR_IO, "out of memory");
    snprintf(t->scope, sizeof t->scope, "%s", host->scope);
    *max_message = MAX_MESSAGE;
    *transport = t;
    return XB_OK;
}

static void {{ident}}_destroy(void *transport)
{
    free(transport);
}

static int {{ident}}_listen(void *transport, void **listener, char *address,
                            size_t address_size, xb_error *err)
{
    {{ident}}_transport *t = transport;
    static unsigned long next;
    unsigned long n = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);

    /* YOUR TRANSPORT: make something a peer can find, and write its address. */
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    /* The abstract namespace: sun_path starts with a NUL byte, the name follows. */
    int len = snprintf(sa.sun_path + 1, sizeof sa.sun_path - 1, PREFIX "%s-%ld-%lu",
                       t->scope, (long)getpid(), n);
    if (len < 0 || (size_t)len >= sizeof sa.sun_path - 1 || (size_t)len + 2 > address_size)
        return fail(err, XB_ERR_IO, "the scope %s makes too long an address", t->scope);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return fail_errno(err, "socket");
    socklen_t sa_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len);
    if (bind(fd, (struct sockaddr *)&sa, sa_len) < 0 || listen(fd, 1) < 0) {
        int code = fail_errno(err, "bind");
        close(fd);
        return code;
    }
    {{ident}}_listener *l = malloc(sizeof *l);
    if (l == NULL) {
        close(fd);
        return fail(err, XB_ERR_IO, "out of memory");
    }
    l->fd = fd;
    snprintf(address, address_size, "@%s", sa.sun_path + 1);
    *listener = l;
    return XB_OK;
}

static int {{ident}}_accept(void *listener, uint64_t timeout_ns, void **endpoint,
                            xb_error *err)
{
    {{ident}}_listener *l = listener;
    /* YOUR TRANSPORT: wait for the peer, at most timeout_ns. */
    int rc = wait_fd(l->fd, POLLIN, deadline_after(timeout_ns), err, "no peer connected");
    if (rc != XB_OK)
        return rc;
    int fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
        return fail_errno(err, "accept");
    {{ident}}_endpoint *e = malloc(sizeof *e);
    if (e == NULL) {
        close(fd);
        return fail(err, XB_ERR_IO, "out of memory");
    }
    e->fd = fd;
    *endpoint = e;
    return XB_OK;
}

static void {{ident}}_close_listener(void *listener)
{
    {{ident}}_listener *l = listener;
    close(l->fd);
    free(l);
}

static int {{ident}}_connect(void *transport, const char *address, uint64_t timeout_ns,
                             void **endpoint, xb_error *err)
{
    (void)transport;
    /* Any string may arrive here: refuse what this transport did not give out. */
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t len = strlen(address);
    if (address[0] != '@' || strncmp(address + 1, PREFIX, strlen(PREFIX)) != 0 ||
        len >= sizeof sa.sun_path)
        return fail(err, XB_ERR_ADDRESS, "\"%.64s\" is not an address of {{name}}", address);
    memcpy(sa.sun_path + 1, address + 1, len - 1);
    socklen_t sa_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);

    /* YOUR TRANSPORT: reach the listener, at most timeout_ns. */
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return fail_errno(err, "socket");
    uint64_t deadline = deadline_after(timeout_ns);
    while (connect(fd, (struct sockaddr *)&sa, sa_len) < 0) {
        int e = errno;
        if ((e == EAGAIN || e == EINTR) && now_ns() < deadline) {
            /* A full backlog: try again until the deadline. */
            struct timespec ms = {.tv_sec = 0, .tv_nsec = 1000000};
            nanosleep(&ms, NULL);
            continue;
        }
        close(fd);
        errno = e;
        if (e == ECONNREFUSED || e == ENOENT)
            return fail(err, XB_ERR_ADDRESS, "connect to %s: %s", address, strerror(e));
        return fail_errno(err, "connect");
    }
    {{ident}}_endpoint *ep = malloc(sizeof *ep);
    if (ep == NULL) {
        close(fd);
        return fail(err, XB_ERR_IO, "out of memory");
    }
    ep->fd = fd;
    *endpoint = ep;
    return XB_OK;
}

/* ---- the hot path ----------------------------------------------------------- */

static int {{ident}}_send(void *endpoint, const void *message, size_t len,
                          uint64_t timeout_ns, xb_error *err)
{
    {{ident}}_endpoint *e = endpoint;
    if (len > MAX_MESSAGE)
        return fail(err, XB_ERR_TOO_LARGE, "a %zu-byte message; the largest is %d", len,
                    MAX_MESSAGE);
    /* YOUR TRANSPORT: one message, waiting at most timeout_ns for room. Try first,
     * and wait only when that would block: no system call that is not needed. */
    uint64_t deadline = 0;
    for (;;) {
        if (send(e->fd, message, len, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0)
            return XB_OK;
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN)
            return fail_errno(err, "send");
        if (deadline == 0)
            deadline = deadline_after(timeout_ns);
        int rc = wait_fd(e->fd, POLLOUT, deadline, err, "the socket stayed full");
        if (rc != XB_OK)
            return rc;
    }
}

static int {{ident}}_recv(void *endpoint, void *buffer, size_t len, uint64_t timeout_ns,
                          xb_error *err)
{
    {{ident}}_endpoint *e = endpoint;
    /* YOUR TRANSPORT: exactly one message of exactly len bytes, or XB_CLOSED once
     * the peer closed its sending side. */
    uint64_t deadline = 0;
    for (;;) {
        /* MSG_TRUNC: the message's real length, so that one of another length is
         * reported, never cut. */
        ssize_t n = recv(e->fd, buffer, len, MSG_DONTWAIT | MSG_TRUNC);
        if (n == 0)
            return XB_CLOSED;
        if (n > 0 && (size_t)n == len)
            return XB_OK;
        if (n > 0)
            return fail(err, XB_ERR_MESSAGE_SIZE, "a %zd-byte message where %zu were expected",
                        n, len);
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN)
            return fail_errno(err, "recv");
        if (deadline == 0)
            deadline = deadline_after(timeout_ns);
        int rc = wait_fd(e->fd, POLLIN, deadline, err, "no message arrived");
        if (rc != XB_OK)
            return rc;
    }
}

static int {{ident}}_close_send(void *endpoint, xb_error *err)
{
    {{ident}}_endpoint *e = endpoint;
    /* YOUR TRANSPORT: the end of the stream; the peer's recv returns XB_CLOSED after
     * the messages already sent. */
    if (shutdown(e->fd, SHUT_WR) < 0 && errno != ENOTCONN)
        return fail_errno(err, "shutdown");
    return XB_OK;
}

static void {{ident}}_close(void *endpoint)
{
    {{ident}}_endpoint *e = endpoint;
    close(e->fd);
    free(e);
}

/* ---- the description -------------------------------------------------------- */

/* YOUR TRANSPORT: its parameters, swept with `-p NAME=LIST`, for example
 *
 *     static const xb_param params[] = {
 *         {.name = "depth", .kind = XB_PARAM_INTEGER, .default_value = "64",
 *          .help = "messages in flight", .min = 1, .max = 4096},
 *     };
 *
 * with `.params = params, .param_count = 1` below; create then gets one xb_value
 * per parameter. */

static const xb_transport transports[] = {
    {
        .name = "{{transport}}",
        .description = "{{name}}: Unix-domain SOCK_SEQPACKET sockets (a stub to replace)",
        .max_message = MAX_MESSAGE,
        .flags = 0,
        .params = NULL,
        .param_count = 0,
        .create = {{ident}}_create,
        .destroy = {{ident}}_destroy,
        .listen = {{ident}}_listen,
        .accept = {{ident}}_accept,
        .close_listener = {{ident}}_close_listener,
        .connect = {{ident}}_connect,
        .send = {{ident}}_send,
        .flush = NULL,
        .recv = {{ident}}_recv,
        .close_send = {{ident}}_close_send,
        .close = {{ident}}_close,
        .loan = NULL,
        .commit = NULL,
        .borrow = NULL,
        .release = NULL,
        .reach = XB_REACH_HOST,
    },
};

static const xb_plugin plugin = {
    .abi_version = XB_ABI_VERSION,
    .name = "{{name}}",
    /* Your version: recorded with every result, so `xferbench compare` tells builds
     * apart. */
    .version = "0.1.0",
    .transports = transports,
    .transport_count = sizeof transports / sizeof transports[0],
    /* Nothing is left outside the processes (abstract sockets vanish with them).
     * YOUR TRANSPORT: a function removing what it names under host->scope, if it
     * leaves anything (files, queues, shared memory). */
    .cleanup = NULL,
};

XB_EXPORT const xb_plugin *xferbench_plugin_v1(uint32_t host_abi_version)
{
    (void)host_abi_version;
    return &plugin;
}

/*
 * A plugin transport over two anonymous pipes, one per direction: the smallest
 * complete plugin, and the built-in `pipe` transport written against the plugin ABI
 * (so that the two can be measured side by side: the difference is the cost of the
 * plugin interface).
 *
 *     cc -shared -fPIC -O2 -I include -o libxb_pipe.so examples/plugins/pipe/pipe.c
 *     xferbench run stream -t pipe,plugin:./libxb_pipe.so -s 64 --interleave
 *
 * A pipe has no name to connect to, so the listener publishes its pipes through
 * /proc/<pid>/fd/<n>: opening that path opens the same pipe, from this process or
 * another of the same user. The address is "pid:down_fd:up_fd". The connecting side
 * writes one hello byte up; on seeing it, the listener closes its copies of the
 * peer's ends, so that the peer's death shows as end-of-file (or EPIPE). Nothing is
 * created in the file system, so there is nothing to clean up.
 *
 * How a send or receive waits is the parameter `wait`:
 *  - block (the default, as the built-in transport): blocking descriptors, one write()
 *    or read() per message, which sleeps in the kernel until the pipe has room or
 *    data. A pipe's read has no timeout, so a hung peer is caught by xferbench's
 *    watch over progress (--timeout) instead of by this plugin (see the header's
 *    "Blocking and time").
 *  - poll: non-blocking descriptors; a send or receive first tries the system call
 *    and only when it would block waits in poll() for the rest of its timeout, so
 *    every timeout is honoured, at the price of more system calls and wake-ups
 *    whenever a side waits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <xferbench/plugin.h>

#define HELLO 0xA5

/* The choices of `wait`, in declaration order. */
enum { WAIT_BLOCK = 0, WAIT_POLL = 1 };

typedef struct {
    int pipe_size; /* bytes for F_SETPIPE_SZ; 0 keeps the kernel's */
    int nonblock;  /* O_NONBLOCK for wait=poll, 0 for wait=block */
} transport;

typedef struct {
    int down_w, up_r;   /* ours */
    int down_r, up_w;   /* the peer's, held until it opened its own copies */
} listener;

typedef struct {
    int tx, rx;
} endpoint;

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
    int code = (errno == EPIPE || errno == ECONNRESET) ? XB_ERR_PEER : XB_ERR_IO;
    return fail(err, code, "%s: %s", what, strerror(errno));
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Waits until fd is ready for `events` or the deadline passes: 1 ready, 0 timed
 * out, -1 error (errno set). */
static int wait_fd(int fd, short events, uint64_t deadline)
{
    for (;;) {
        uint64_t now = now_ns();
        if (now >= deadline)
            return 0;
        uint64_t left_ms = (deadline - now + 999999) / 1000000;
        struct pollfd p = {.fd = fd, .events = events};
        int n = poll(&p, 1, left_ms > 60000 ? 60000 : (int)left_ms);
        if (n > 0)
            return 1;
        if (n < 0 && errno != EINTR)
            return -1;
    }
}

static uint64_t deadline_after(uint64_t timeout_ns)
{
    uint64_t now = now_ns();
    return timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
}

/* ---- transport -------------------------------------------------------------- */

static int pipe_create(const xb_value *values, size_t count, const xb_host *host,
                       void **out, uint64_t *max_message, xb_error *err)
{
    (void)host;
    (void)max_message; /* no limit */
    transport *t = calloc(1, sizeof *t);
    if (!t)
        return fail(err, XB_ERR_IO, "out of memory");
    for (size_t i = 0; i < count; i++)
        if (strcmp(values[i].name, "pipe_size") == 0)
            t->pipe_size = (int)values[i].number;
        else if (strcmp(values[i].name, "wait") == 0)
            t->nonblock = values[i].number == WAIT_POLL ? O_NONBLOCK : 0;
    *out = t;
    return XB_OK;
}

static void pipe_destroy(void *t) { free(t); }

static int pipe_listen(void *tp, void **out, char *address, size_t size, xb_error *err)
{
    transport *t = tp;
    int down[2], up[2];
    if (pipe2(down, O_CLOEXEC | t->nonblock) != 0)
        return fail_errno(err, "pipe2");
    if (pipe2(up, O_CLOEXEC | t->nonblock) != 0) {
        int e = errno;
        close(down[0]);
        close(down[1]);
        errno = e;
        return fail_errno(err, "pipe2");
    }
    if (t->pipe_size > 0 && (fcntl(down[1], F_SETPIPE_SZ, t->pipe_size) < 0 ||
                             fcntl(up[1], F_SETPIPE_SZ, t->pipe_size) < 0)) {
        int e = errno;
        close(down[0]), close(down[1]), close(up[0]), close(up[1]);
        return fail(err, XB_ERR_PARAM,
                    "F_SETPIPE_SZ %d: %s (at most /proc/sys/fs/pipe-max-size)",
                    t->pipe_size, strerror(e));
    }
    listener *l = malloc(sizeof *l);
    if (!l) {
        close(down[0]), close(down[1]), close(up[0]), close(up[1]);
        return fail(err, XB_ERR_IO, "out of memory");
    }
    *l = (listener){.down_w = down[1], .up_r = up[0], .down_r = down[0], .up_w = up[1]};
    snprintf(address, size, "%d:%d:%d", (int)getpid(), l->down_r, l->up_w);
    *out = l;
    return XB_OK;
}

static int pipe_accept(void *lp, uint64_t timeout_ns, void **out, xb_error *err)
{
    listener *l = lp;
    int r = wait_fd(l->up_r, POLLIN, deadline_after(timeout_ns));
    if (r == 0)
        return fail(err, XB_ERR_TIMEDOUT, "no peer connected");
    if (r < 0)
        return fail_errno(err, "poll");
    unsigned char hello = 0;
    if (read(l->up_r, &hello, 1) != 1 || hello != HELLO)
        return fail(err, XB_ERR_IO, "the peer sent no hello byte");
    endpoint *e = malloc(sizeof *e);
    if (!e)
        return fail(err, XB_ERR_IO, "out of memory");
    /* The peer now holds its own copies: close ours, so its death shows as EOF. */
    close(l->down_r);
    close(l->up_w);
    *e = (endpoint){.tx = l->down_w, .rx = l->up_r};
    l->down_w = l->up_r = l->down_r = l->up_w = -1;
    *out = e;
    return XB_OK;
}

static void pipe_close_listener(void *lp)
{
    listener *l = lp;
    int fds[4] = {l->down_w, l->up_r, l->down_r, l->up_w};
    for (int i = 0; i < 4; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    free(l);
}

static int pipe_connect(void *tp, const char *address, uint64_t timeout_ns, void **out,
                        xb_error *err)
{
    transport *t = tp;
    (void)timeout_ns; /* opening and one byte never wait: the listener holds the other ends */
    int pid, down, up, used = 0;
    if (sscanf(address, "%d:%d:%d%n", &pid, &down, &up, &used) != 3 ||
        address[used] != '\0' || pid <= 0 || down < 0 || up < 0)
        return fail(err, XB_ERR_ADDRESS, "expected pid:down_fd:up_fd, got \"%.64s\"", address);
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", pid, down);
    int rx = open(path, O_RDONLY | O_CLOEXEC | t->nonblock);
    if (rx < 0)
        return fail(err, XB_ERR_ADDRESS, "open %s: %s", path, strerror(errno));
    snprintf(path, sizeof path, "/proc/%d/fd/%d", pid, up);
    int tx = open(path, O_WRONLY | O_CLOEXEC | t->nonblock);
    if (tx < 0) {
        int e = errno;
        close(rx);
        return fail(err, XB_ERR_ADDRESS, "open %s: %s", path, strerror(e));
    }
    unsigned char hello = HELLO;
    if (write(tx, &hello, 1) != 1) {
        int e = errno;
        close(rx), close(tx);
        return fail(err, XB_ERR_IO, "hello: %s", strerror(e));
    }
    endpoint *e = malloc(sizeof *e);
    if (!e) {
        close(rx), close(tx);
        return fail(err, XB_ERR_IO, "out of memory");
    }
    *e = (endpoint){.tx = tx, .rx = rx};
    *out = e;
    return XB_OK;
}

/* ---- the hot path --------------------------------------------------------------- */

/* The per-message write and read go to the kernel through syscall(), as the built-in
 * transport's do (it calls the kernel directly, without libc). glibc's write() and
 * read() are cancellation points: in a process with several threads, as xferbench's
 * measuring process is, each call also switches the thread's cancellation type
 * around the system call, an atomic update before and one after, which a
 * 64-byte message's round through a pipe notices. */

static int pipe_send(void *ep, const void *msg, size_t len, uint64_t timeout_ns, xb_error *err)
{
    endpoint *e = ep;
    const char *p = msg;
    uint64_t deadline = 0;
    if (e->tx < 0)
        return fail(err, XB_ERR_IO, "the sending side is closed");
    while (len > 0) {
        ssize_t n = syscall(SYS_write, e->tx, p, len);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN)
            return fail_errno(err, "write");
        /* The pipe is full: wait for room, for what is left of the timeout. */
        if (deadline == 0)
            deadline = deadline_after(timeout_ns);
        int r = wait_fd(e->tx, POLLOUT, deadline);
        if (r == 0)
            return fail(err, XB_ERR_TIMEDOUT, "the pipe stayed full");
        if (r < 0)
            return fail_errno(err, "poll");
    }
    return XB_OK;
}

static int pipe_recv(void *ep, void *buf, size_t len, uint64_t timeout_ns, xb_error *err)
{
    endpoint *e = ep;
    char *p = buf;
    size_t got = 0;
    uint64_t deadline = 0;
    while (got < len) {
        ssize_t n = syscall(SYS_read, e->rx, p + got, len - got);
        if (n > 0) {
            got += (size_t)n;
            continue;
        }
        if (n == 0) {
            if (got == 0)
                return XB_CLOSED;
            return fail(err, XB_ERR_MESSAGE_SIZE,
                        "the stream ended %zu bytes into a %zu-byte message", got, len);
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN)
            return fail_errno(err, "read");
        /* Nothing to read: wait for data, for what is left of the timeout. */
        if (deadline == 0)
            deadline = deadline_after(timeout_ns);
        int r = wait_fd(e->rx, POLLIN, deadline);
        if (r == 0)
            return fail(err, XB_ERR_TIMEDOUT, "no message arrived");
        if (r < 0)
            return fail_errno(err, "poll");
    }
    return XB_OK;
}

static int pipe_close_send(void *ep, xb_error *err)
{
    (void)err;
    endpoint *e = ep;
    if (e->tx >= 0)
        close(e->tx);
    e->tx = -1;
    return XB_OK;
}

static void pipe_close(void *ep)
{
    endpoint *e = ep;
    if (e->tx >= 0)
        close(e->tx);
    close(e->rx);
    free(e);
}

/* ---- description -------------------------------------------------------------- */

static const xb_choice waits[] = {
    {.name = "block", .help = "blocking descriptors: one system call per message, as the built-in pipe"},
    {.name = "poll", .help = "non-blocking descriptors and poll(): every timeout honoured"},
};

static const xb_param params[] = {
    {
        .name = "pipe_size",
        .kind = XB_PARAM_BYTES,
        .default_value = "0",
        .help = "capacity of each pipe (F_SETPIPE_SZ); 0 keeps the kernel's default (64 KiB)",
        .min = 0,
        .max = 1 << 30,
    },
    {
        .name = "wait",
        .kind = XB_PARAM_ENUM,
        .default_value = "block",
        .help = "how a send or receive waits: sleep in write()/read() (block) or in poll() with the call's timeout (poll)",
        .choices = waits,
        .choice_count = sizeof waits / sizeof waits[0],
    },
};

static const xb_transport transports[] = {
    {
        .name = "c-pipe",
        .description = "two anonymous pipes, as the built-in pipe, through the plugin ABI",
        .max_message = 0,
        .flags = 0,
        .params = params,
        .param_count = sizeof params / sizeof params[0],
        .create = pipe_create,
        .destroy = pipe_destroy,
        .listen = pipe_listen,
        .accept = pipe_accept,
        .close_listener = pipe_close_listener,
        .connect = pipe_connect,
        .send = pipe_send,
        .flush = NULL,
        .recv = pipe_recv,
        .close_send = pipe_close_send,
        .close = pipe_close,
    },
};

static const xb_plugin plugin = {
    .abi_version = XB_ABI_VERSION,
    .name = "xb-pipe",
    .version = "1.0.0",
    .transports = transports,
    .transport_count = 1,
    .cleanup = NULL,
};

XB_EXPORT const xb_plugin *xferbench_plugin_v1(uint32_t host_abi_version)
{
    (void)host_abi_version;
    return &plugin;
}

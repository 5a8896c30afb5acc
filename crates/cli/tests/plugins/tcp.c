/*
 * A plugin transport over TCP whose addresses cross hosts (reach =
 * XB_REACH_NETWORK, header revision 2), for the tests of `run --remote` with a
 * plugin. One TCP connection per channel; a message is its bytes, the length being
 * agreed out of band. listen binds xb_host::listen_host when the host gives one (the
 * measuring host's address on the route to the agent), else 127.0.0.1, on a free
 * port, and writes "IP:PORT".
 *
 *     cc -shared -fPIC -O2 -I include -o libxb_test_tcp.so crates/cli/tests/plugins/tcp.c
 *
 * Every wait is non-blocking descriptors and poll(), so every timeout is honoured.
 *
 * Built with -DXB_TEST_STATE_DIR='"DIR"', every process that makes the transport
 * leaves a file DIR/<scope>-<pid> behind, as a transport's queue or lock file would,
 * and the clean-up hook removes DIR/<scope>-*: a file left after a run names a
 * process whose scope was never cleaned up.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#ifdef XB_TEST_STATE_DIR
#include <dirent.h>
#endif

#include <xferbench/plugin.h>

typedef struct {
    char host[64];
} transport;

typedef struct {
    int fd;
} listener;

typedef struct {
    int fd;
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

/* 1: ready; 0: timed out; -1: poll failed. */
static int wait_fd(int fd, short events, uint64_t deadline)
{
    for (;;) {
        uint64_t now = now_ns();
        if (now >= deadline)
            return 0;
        uint64_t ms = (deadline - now + 999999u) / 1000000u;
        struct pollfd p = {.fd = fd, .events = events};
        int n = poll(&p, 1, ms > 1000 ? 1000 : (int)ms);
        if (n > 0)
            return 1;
        if (n < 0 && errno != EINTR)
            return -1;
    }
}

static void tune(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static int tcp_create(const xb_value *values, size_t count, const xb_host *host,
                      void **out, uint64_t *max_message, xb_error *err)
{
    (void)values;
    (void)count;
    (void)max_message;
    transport *t = calloc(1, sizeof *t);
    if (!t)
        return fail(err, XB_ERR_IO, "out of memory");
    const char *h = "127.0.0.1";
    if (host->abi_version >= 2 && host->listen_host)
        h = host->listen_host;
    snprintf(t->host, sizeof t->host, "%s", h);
#ifdef XB_TEST_STATE_DIR
    char path[512];
    snprintf(path, sizeof path, "%s/%s-%d", XB_TEST_STATE_DIR, host->scope, (int)getpid());
    int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    if (fd >= 0)
        close(fd);
#endif
    *out = t;
    return XB_OK;
}

#ifdef XB_TEST_STATE_DIR
static void tcp_cleanup(const char *scope)
{
    char prefix[128];
    snprintf(prefix, sizeof prefix, "%s-", scope);
    DIR *d = opendir(XB_TEST_STATE_DIR);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
            char path[512];
            snprintf(path, sizeof path, "%s/%s", XB_TEST_STATE_DIR, e->d_name);
            unlink(path);
        }
    }
    closedir(d);
}
#endif

static void tcp_destroy(void *t) { free(t); }

static int tcp_listen(void *tp, void **out, char *address, size_t size, xb_error *err)
{
    transport *t = tp;
    struct sockaddr_in a = {.sin_family = AF_INET};
    if (inet_pton(AF_INET, t->host, &a.sin_addr) != 1)
        return fail(err, XB_ERR_ADDRESS, "listen host %s is not an IPv4 address", t->host);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return fail_errno(err, "socket");
    socklen_t len = sizeof a;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 1) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        int rc = fail_errno(err, "bind/listen");
        close(fd);
        return rc;
    }
    listener *l = malloc(sizeof *l);
    if (!l) {
        close(fd);
        return fail(err, XB_ERR_IO, "out of memory");
    }
    l->fd = fd;
    snprintf(address, size, "%s:%u", t->host, (unsigned)ntohs(a.sin_port));
    *out = l;
    return XB_OK;
}

static int tcp_accept(void *lp, uint64_t timeout_ns, void **out, xb_error *err)
{
    listener *l = lp;
    int r = wait_fd(l->fd, POLLIN, now_ns() + timeout_ns);
    if (r == 0)
        return fail(err, XB_ERR_TIMEDOUT, "accept: no peer within the timeout");
    if (r < 0)
        return fail_errno(err, "poll");
    int fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
        return fail_errno(err, "accept");
    endpoint *e = malloc(sizeof *e);
    if (!e) {
        close(fd);
        return fail(err, XB_ERR_IO, "out of memory");
    }
    tune(fd);
    e->fd = fd;
    *out = e;
    return XB_OK;
}

static void tcp_close_listener(void *lp)
{
    listener *l = lp;
    close(l->fd);
    free(l);
}

static int tcp_connect(void *tp, const char *address, uint64_t timeout_ns, void **out,
                       xb_error *err)
{
    (void)tp;
    char host[64];
    unsigned port;
    struct sockaddr_in a = {.sin_family = AF_INET};
    if (strlen(address) >= sizeof host || sscanf(address, "%63[0-9.]:%u", host, &port) != 2 ||
        port == 0 || port > 65535 || inet_pton(AF_INET, host, &a.sin_addr) != 1)
        return fail(err, XB_ERR_ADDRESS, "`%.64s` is not IPv4:PORT", address);
    a.sin_port = htons((uint16_t)port);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return fail_errno(err, "socket");
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (errno != EINPROGRESS) {
            int rc = fail(err, XB_ERR_ADDRESS, "connect %s: %s", address, strerror(errno));
            close(fd);
            return rc;
        }
        int r = wait_fd(fd, POLLOUT, now_ns() + timeout_ns);
        int so = 0;
        socklen_t sl = sizeof so;
        if (r <= 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &sl) != 0 || so != 0) {
            int rc = r == 0 ? fail(err, XB_ERR_TIMEDOUT, "connect %s: timed out", address)
                            : fail(err, XB_ERR_ADDRESS, "connect %s: %s", address,
                                   strerror(so ? so : errno));
            close(fd);
            return rc;
        }
    }
    endpoint *e = malloc(sizeof *e);
    if (!e) {
        close(fd);
        return fail(err, XB_ERR_IO, "out of memory");
    }
    tune(fd);
    e->fd = fd;
    *out = e;
    return XB_OK;
}

static int tcp_send(void *ep, const void *msg, size_t len, uint64_t timeout_ns, xb_error *err)
{
    endpoint *e = ep;
    const char *p = msg;
    uint64_t deadline = 0;
    while (len > 0) {
        ssize_t n = send(e->fd, p, len, MSG_NOSIGNAL);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN)
            return fail_errno(err, "send");
        if (!deadline)
            deadline = now_ns() + timeout_ns;
        int r = wait_fd(e->fd, POLLOUT, deadline);
        if (r == 0)
            return fail(err, XB_ERR_TIMEDOUT, "send: no room within the timeout");
        if (r < 0)
            return fail_errno(err, "poll");
    }
    return XB_OK;
}

static int tcp_recv(void *ep, void *buf, size_t len, uint64_t timeout_ns, xb_error *err)
{
    endpoint *e = ep;
    char *p = buf;
    size_t got = 0;
    uint64_t deadline = 0;
    while (got < len) {
        ssize_t n = recv(e->fd, p + got, len - got, 0);
        if (n > 0) {
            got += (size_t)n;
            continue;
        }
        if (n == 0) {
            if (got == 0)
                return XB_CLOSED;
            return fail(err, XB_ERR_MESSAGE_SIZE, "the stream ended inside a message");
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN)
            return fail_errno(err, "recv");
        if (!deadline)
            deadline = now_ns() + timeout_ns;
        int r = wait_fd(e->fd, POLLIN, deadline);
        if (r == 0)
            return fail(err, XB_ERR_TIMEDOUT, "recv: nothing within the timeout");
        if (r < 0)
            return fail_errno(err, "poll");
    }
    return XB_OK;
}

static int tcp_close_send(void *ep, xb_error *err)
{
    endpoint *e = ep;
    if (shutdown(e->fd, SHUT_WR) != 0 && errno != ENOTCONN)
        return fail_errno(err, "shutdown");
    return XB_OK;
}

static void tcp_close(void *ep)
{
    endpoint *e = ep;
    close(e->fd);
    free(e);
}

static const xb_transport transports[] = {{
    .name = "test-tcp",
    .description = "TCP connections whose addresses cross hosts (a test plugin)",
    .max_message = 0,
    .create = tcp_create,
    .destroy = tcp_destroy,
    .listen = tcp_listen,
    .accept = tcp_accept,
    .close_listener = tcp_close_listener,
    .connect = tcp_connect,
    .send = tcp_send,
    .recv = tcp_recv,
    .close_send = tcp_close_send,
    .close = tcp_close,
    .reach = XB_REACH_NETWORK,
}};

static const xb_plugin plugin = {
    .abi_version = XB_ABI_VERSION,
    .name = "xb-test-tcp",
    .version = "1.0.0",
    .transports = transports,
    .transport_count = 1,
#ifdef XB_TEST_STATE_DIR
    .cleanup = tcp_cleanup,
#endif
};

XB_EXPORT const xb_plugin *xferbench_plugin_v1(uint32_t host_abi_version)
{
    (void)host_abi_version;
    return &plugin;
}

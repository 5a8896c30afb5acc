/*
 * nng pair1 sockets over ipc:// as an xferbench transport, through nng
 * (Debian: apt-get install libnng-dev).
 *
 *     cc -shared -fPIC -O2 -I include -o libxb_nng.so examples/plugins/nng/nng.c -lnng
 *     xferbench check -t plugin:./libxb_nng.so
 *     xferbench run pingpong -t unix,plugin:./libxb_nng.so -s 64,4KiB
 *
 * The design, and what each part of the plugin contract asks of it:
 *
 *  - One pair1 socket per channel. listen starts an nng listener on
 *    ipc:///tmp/xb-nng-<scope>-<pid>-<n>; the address is that URL. connect starts a
 *    dialer without blocking and waits, within its timeout, for nng to report the
 *    connection (NNG_PIPE_EV_ADD_POST); accept waits for the same event on its side.
 *    Once connected, the listening side removes the socket file: nobody else can
 *    reach the channel, and nothing is left in /tmp from then on.
 *  - An nng message is one xferbench message; an empty message ends the stream
 *    (close_send). Each endpoint has one aio for sending and one for receiving, used
 *    for every message with a timeout of at most 50 ms, so that a wait notices the
 *    peer's death between slices.
 *  - The peer's death or close: nng reports a connection's end as
 *    NNG_PIPE_EV_REM_POST, on one of its own threads; the callback sets a flag the
 *    endpoint reads. Between slices the endpoint also checks that the peer's process
 *    (NNG_OPT_IPC_PEER_PID) runs, for a peer whose socket another process holds.
 *  - Closing: nng has no linger (a closed pipe drops what it still holds), so close
 *    sends the end of stream and waits for the peer's (which follows everything the
 *    peer read) before closing the socket, within the timeout.
 *  - The nng_close hang of nng 1.5: closing a socket while its peer is still
 *    sending into the connection can leave nng's reaper thread waiting forever, and
 *    nng_close with it. close therefore pauses 20 ms before nng_close when the
 *    peer's end of stream has not arrived and the connection is up, and closes with
 *    nng_close alone (closing the pipe, dialer or listener first made nng crash).
 *    See the README.
 *  - Threads: nng runs a pool of its own threads (task queues, timers, the poller,
 *    the reaper, resolvers) from the first socket until nng_fini. They belong to the
 *    library, not to an object of this plugin, and sit idle once every socket is
 *    closed. nng_fini must not run concurrently with any other nng call, and other
 *    transport objects of the process may be using nng at any time, so the plugin
 *    never calls it.
 *  - Back-pressure: a pair1 socket's send waits (never drops) when its queue
 *    (-p sendbuf messages) and the connection are full; -p recvbuf messages are
 *    read ahead on the receiving side.
 *  - Clean-up: the socket file goes when the peer connects, or when the listener
 *    closes; a process that crashes before either leaves it, so the cleanup hook
 *    removes /tmp/xb-nng-<scope>-* (every xferbench process of the scope has exited
 *    when it is called).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/pair1/pair.h>

#include <xferbench/plugin.h>

#define DIR_PREFIX "/tmp/xb-nng-"
#define SLICE_MS 50
/* The pause before closing a socket whose peer may still be sending. */
#define CLOSE_PAUSE_US 20000

typedef struct {
    int sendbuf, recvbuf;
    char scope[72];
} transport;

/* One pair1 socket: a listener's until accept, then an endpoint's. */
typedef struct {
    nng_socket sock;
    nng_listener lst; /* id 0: none */
    nng_dialer dlr;   /* id 0: none */
    nng_aio *saio, *raio;
    /* Written by nng's threads in pipe_event, under mu. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    nng_pipe pipe;      /* the connection, id 0 until it is made */
    uint32_t early_gone; /* a connection that ended before its ADD_POST was seen */
    atomic_int gone;     /* the connection ended */
    pid_t peer;          /* 0: this process, or unknown */
    int eos_sent, peer_closed;
    uint64_t timeout_ns;
    char path[128]; /* the listening socket's file until removed; empty otherwise */
} chan;

typedef struct {
    chan *c; /* NULL once accepted */
} listener;

static atomic_uint next_socket;

static int fail(xb_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}

static int fail_nng(xb_error *err, const char *what, int rv)
{
    return fail(err, XB_ERR_IO, "%s: %s", what, nng_strerror(rv));
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
static int slice_ms(uint64_t deadline)
{
    uint64_t now = mono_ns();
    if (now >= deadline)
        return 0;
    uint64_t ms = (deadline - now + 999999) / 1000000;
    return ms > SLICE_MS ? SLICE_MS : (int)ms;
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

/* nng's report of a connection made or ended, on one of its threads. pair1 takes
 * one connection; any other (refused) ends without an ADD_POST. */
static void pipe_event(nng_pipe p, nng_pipe_ev ev, void *arg)
{
    chan *c = arg;
    uint32_t id = nng_pipe_id(p);
    pthread_mutex_lock(&c->mu);
    if (ev == NNG_PIPE_EV_ADD_POST && nng_pipe_id(c->pipe) <= 0) {
        c->pipe = p;
        if (c->early_gone == id)
            atomic_store(&c->gone, 1);
    } else if (ev == NNG_PIPE_EV_REM_POST) {
        if (nng_pipe_id(c->pipe) == (int)id)
            atomic_store(&c->gone, 1);
        else if (nng_pipe_id(c->pipe) <= 0)
            c->early_gone = id; /* its ADD_POST may still be on its way */
    }
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

/* Closes a channel's socket and frees it. nng_close closes the socket's connection,
 * dialer and listener itself, and no pipe event comes after it returns. */
static void free_chan(chan *c)
{
    nng_close(c->sock);
    nng_aio_free(c->saio);
    nng_aio_free(c->raio);
    if (c->path[0])
        unlink(c->path);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* A pair1 socket with the transport's options and the channel's pipe events. */
static int new_chan(transport *t, chan **out, xb_error *err)
{
    chan *c = calloc(1, sizeof *c);
    if (!c)
        return fail(err, XB_ERR_IO, "out of memory");
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    c->timeout_ns = 1000000000ull;
    int rv = nng_pair1_open(&c->sock);
    if (rv != 0) {
        pthread_cond_destroy(&c->cv);
        pthread_mutex_destroy(&c->mu);
        free(c);
        return fail_nng(err, "nng_pair1_open", rv);
    }
    const char *what = "nng_aio_alloc";
    if ((rv = nng_aio_alloc(&c->saio, NULL, NULL)) == 0 &&
        (rv = nng_aio_alloc(&c->raio, NULL, NULL)) == 0 &&
        (what = "NNG_OPT_RECVMAXSZ", rv = nng_socket_set_size(c->sock, NNG_OPT_RECVMAXSZ, 0)) == 0 &&
        (what = "NNG_OPT_SENDBUF", rv = nng_socket_set_int(c->sock, NNG_OPT_SENDBUF, t->sendbuf)) == 0 &&
        (what = "NNG_OPT_RECVBUF", rv = nng_socket_set_int(c->sock, NNG_OPT_RECVBUF, t->recvbuf)) == 0 &&
        (what = "nng_pipe_notify", rv = nng_pipe_notify(c->sock, NNG_PIPE_EV_ADD_POST, pipe_event, c)) == 0 &&
        (rv = nng_pipe_notify(c->sock, NNG_PIPE_EV_REM_POST, pipe_event, c)) == 0) {
        *out = c;
        return XB_OK;
    }
    int code = fail_nng(err, what, rv);
    free_chan(c);
    return code;
}

/* Waits up to the deadline for the connection; its pipe, or id 0. */
static nng_pipe wait_pipe(chan *c, uint64_t deadline)
{
    pthread_mutex_lock(&c->mu);
    while (nng_pipe_id(c->pipe) <= 0) {
        int ms = slice_ms(deadline);
        if (ms == 0)
            break;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += (long)ms * 1000000L;
        ts.tv_sec += ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&c->cv, &c->mu, &ts);
    }
    nng_pipe p = c->pipe;
    pthread_mutex_unlock(&c->mu);
    return p;
}

static pid_t peer_pid(nng_pipe p, pid_t fallback)
{
    int pid = 0;
    if (nng_pipe_get_int(p, NNG_OPT_IPC_PEER_PID, &pid) != 0 || pid <= 0)
        pid = (int)fallback;
    return pid == (int)getpid() ? 0 : (pid_t)pid;
}

/* ---- transport ------------------------------------------------------------------ */

static int xn_create(const xb_value *values, size_t count, const xb_host *host, void **out,
                     uint64_t *max_message, xb_error *err)
{
    (void)max_message; /* no limit */
    transport *t = calloc(1, sizeof *t);
    if (!t)
        return fail(err, XB_ERR_IO, "out of memory");
    for (size_t i = 0; i < count; i++) {
        if (strcmp(values[i].name, "sendbuf") == 0)
            t->sendbuf = (int)values[i].number;
        else if (strcmp(values[i].name, "recvbuf") == 0)
            t->recvbuf = (int)values[i].number;
    }
    snprintf(t->scope, sizeof t->scope, "%s", host->scope);
    *out = t;
    return XB_OK;
}

static void xn_destroy(void *tp)
{
    free(tp);
}

static int xn_listen(void *tp, void **out, char *address, size_t size, xb_error *err)
{
    transport *t = tp;
    listener *l = calloc(1, sizeof *l);
    if (!l)
        return fail(err, XB_ERR_IO, "out of memory");
    chan *c;
    int rc = new_chan(t, &c, err);
    if (rc != XB_OK) {
        free(l);
        return rc;
    }
    snprintf(c->path, sizeof c->path, DIR_PREFIX "%s-%d-%u", t->scope, (int)getpid(),
             atomic_fetch_add(&next_socket, 1));
    char url[160];
    snprintf(url, sizeof url, "ipc://%s", c->path);
    int rv = nng_listener_create(&c->lst, c->sock, url);
    if (rv == 0 && (rv = nng_listener_start(c->lst, 0)) != 0)
        unlink(c->path);
    if (rv != 0) {
        rc = fail(err, XB_ERR_IO, "nng_listen %s: %s", url, nng_strerror(rv));
        c->path[0] = '\0'; /* not ours: do not remove */
        free_chan(c);
        free(l);
        return rc;
    }
    snprintf(address, size, "%s", url);
    l->c = c;
    *out = l;
    return XB_OK;
}

static int xn_accept(void *lp, uint64_t timeout_ns, void **out, xb_error *err)
{
    listener *l = lp;
    chan *c = l->c;
    if (!c)
        return fail(err, XB_ERR_IO, "accept called twice");
    nng_pipe p = wait_pipe(c, deadline_after(timeout_ns));
    if (nng_pipe_id(p) <= 0)
        return fail(err, XB_ERR_TIMEDOUT, "no peer connected");
    /* The one peer is here: nobody else may connect, and the file can go. */
    unlink(c->path);
    c->path[0] = '\0';
    c->peer = peer_pid(p, 0);
    l->c = NULL; /* the endpoint's now */
    *out = c;
    return XB_OK;
}

static void xn_close_listener(void *lp)
{
    listener *l = lp;
    if (l->c)
        free_chan(l->c);
    free(l);
}

/* An address is "ipc:///tmp/xb-nng-<scope>-<pid>-<n>" as xn_listen makes it; the
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

static int xn_connect(void *tp, const char *address, uint64_t timeout_ns, void **out,
                      xb_error *err)
{
    transport *t = tp;
    pid_t listener_pid;
    if (!parse_address(address, &listener_pid))
        return fail(err, XB_ERR_ADDRESS, "\"%.64s\" is not an nng plugin address", address);
    struct stat st;
    if (stat(address + 6, &st) != 0 || !S_ISSOCK(st.st_mode))
        return fail(err, XB_ERR_ADDRESS, "nothing listens at %s", address);
    uint64_t deadline = deadline_after(timeout_ns);
    chan *c;
    int rc = new_chan(t, &c, err);
    if (rc != XB_OK)
        return rc;
    int rv = nng_dialer_create(&c->dlr, c->sock, address);
    if (rv == 0)
        rv = nng_dialer_start(c->dlr, NNG_FLAG_NONBLOCK);
    if (rv != 0) {
        rc = fail(err, XB_ERR_ADDRESS, "nng_dial %s: %s", address, nng_strerror(rv));
        free_chan(c);
        return rc;
    }
    nng_pipe p = wait_pipe(c, deadline);
    if (nng_pipe_id(p) <= 0) {
        free_chan(c);
        return fail(err, XB_ERR_TIMEDOUT, "could not connect to %s", address);
    }
    c->peer = peer_pid(p, listener_pid);
    *out = c;
    return XB_OK;
}

/* ---- the hot path ------------------------------------------------------------------ */

/* Why a wait that timed out a slice cannot go on, or 0 to keep waiting. */
static int peer_trouble(chan *c, xb_error *err)
{
    if (atomic_load(&c->gone))
        return fail(err, XB_ERR_PEER, "the peer disconnected");
    if (!alive(c->peer))
        return fail(err, XB_ERR_PEER, "the peer process (pid %d) is gone", (int)c->peer);
    return 0;
}

/* Sends m (which nng owns once this succeeds; freed here otherwise). */
static int send_msg(chan *c, nng_msg *m, uint64_t timeout_ns, xb_error *err)
{
    uint64_t deadline = deadline_after(timeout_ns);
    for (;;) {
        int ms = slice_ms(deadline);
        if (ms == 0) {
            nng_msg_free(m);
            return fail(err, XB_ERR_TIMEDOUT, "the peer took no message");
        }
        nng_aio_set_msg(c->saio, m);
        nng_aio_set_timeout(c->saio, ms);
        nng_send_aio(c->sock, c->saio);
        nng_aio_wait(c->saio);
        int rv = nng_aio_result(c->saio);
        if (rv == 0)
            return XB_OK;
        if (rv != NNG_ETIMEDOUT) {
            nng_msg_free(m);
            return fail_nng(err, "send", rv);
        }
        int rc = peer_trouble(c, err);
        if (rc != 0) {
            nng_msg_free(m);
            return rc;
        }
    }
}

static int xn_send(void *ep, const void *msg, size_t len, uint64_t timeout_ns, xb_error *err)
{
    chan *c = ep;
    c->timeout_ns = timeout_ns;
    if (c->eos_sent)
        return fail(err, XB_ERR_IO, "the sending side is closed");
    if (atomic_load_explicit(&c->gone, memory_order_relaxed))
        return fail(err, XB_ERR_PEER, "the peer disconnected");
    nng_msg *m;
    int rv = nng_msg_alloc(&m, len);
    if (rv != 0)
        return rv == NNG_ENOMEM ? fail(err, XB_ERR_TOO_LARGE, "a %zu-byte message: %s", len,
                                       nng_strerror(rv))
                                : fail_nng(err, "nng_msg_alloc", rv);
    memcpy(nng_msg_body(m), msg, len);
    return send_msg(c, m, timeout_ns, err);
}

/* One receive of at most ms milliseconds: 0 and *m set, or nng's error. */
static int recv_once(chan *c, int ms, nng_msg **m)
{
    nng_aio_set_timeout(c->raio, ms);
    nng_recv_aio(c->sock, c->raio);
    nng_aio_wait(c->raio);
    int rv = nng_aio_result(c->raio);
    if (rv == 0)
        *m = nng_aio_get_msg(c->raio);
    return rv;
}

/* What a received message means for a recv of len bytes into buf (frees it). */
static int take(chan *c, nng_msg *m, void *buf, size_t len, xb_error *err)
{
    size_t n = nng_msg_len(m);
    int rc = XB_OK;
    if (n == 0) {
        c->peer_closed = 1;
        rc = XB_CLOSED;
    } else if (n != len) {
        rc = fail(err, XB_ERR_MESSAGE_SIZE, "a %zu-byte message where %zu bytes were expected",
                  n, len);
    } else {
        memcpy(buf, nng_msg_body(m), len);
    }
    nng_msg_free(m);
    return rc;
}

static int xn_recv(void *ep, void *buf, size_t len, uint64_t timeout_ns, xb_error *err)
{
    chan *c = ep;
    c->timeout_ns = timeout_ns;
    if (c->peer_closed)
        return XB_CLOSED;
    uint64_t deadline = deadline_after(timeout_ns);
    for (;;) {
        int ms = slice_ms(deadline);
        if (ms == 0)
            return fail(err, XB_ERR_TIMEDOUT, "no message arrived");
        nng_msg *m;
        int rv = recv_once(c, ms, &m);
        if (rv == 0)
            return take(c, m, buf, len, err);
        if (rv != NNG_ETIMEDOUT)
            return fail_nng(err, "recv", rv);
        int rc = peer_trouble(c, err);
        if (rc != 0) {
            /* What arrived before the connection ended is still queued. */
            if (recv_once(c, 0, &m) == 0)
                return take(c, m, buf, len, err);
            return rc;
        }
    }
}

static int xn_close_send(void *ep, xb_error *err)
{
    chan *c = ep;
    if (c->eos_sent)
        return XB_OK;
    c->eos_sent = 1;
    if (atomic_load(&c->gone))
        return XB_OK;
    nng_msg *m;
    int rv = nng_msg_alloc(&m, 0);
    if (rv != 0)
        return fail_nng(err, "nng_msg_alloc", rv);
    return send_msg(c, m, c->timeout_ns, err);
}

static void xn_close(void *ep)
{
    chan *c = ep;
    xb_error ignored;
    if (!c->eos_sent)
        xn_close_send(c, &ignored);
    /* nng drops what a connection still holds when it closes, so wait for the peer's
     * end of stream before closing ours: it comes once the peer has read everything
     * we sent. Give up at once if the peer sends data instead (it is not closing),
     * disconnects, or the timeout passes. */
    uint64_t deadline = deadline_after(c->timeout_ns);
    while (!c->peer_closed && !atomic_load(&c->gone)) {
        int ms = slice_ms(deadline);
        if (ms == 0)
            break;
        nng_msg *m;
        int rv = recv_once(c, ms, &m);
        if (rv == 0) {
            size_t n = nng_msg_len(m);
            nng_msg_free(m);
            if (n != 0)
                break;
            c->peer_closed = 1;
        } else if (rv != NNG_ETIMEDOUT || !alive(c->peer)) {
            break;
        }
    }
    /* nng before 1.10 can hang in nng_close when the peer is still sending into the
     * connection (the socket's teardown races the incoming traffic, and nng's reaper
     * thread waits forever on the connection's receive; see the README). A pause
     * before closing such a socket lets nng settle; after the peer's end of stream,
     * or once the connection is gone, nothing arrives and no pause is needed. */
    if (!c->peer_closed && !atomic_load(&c->gone))
        usleep(CLOSE_PAUSE_US);
    free_chan(c);
}

/* ---- clean-up -------------------------------------------------------------------- */

static void xn_cleanup(const char *scope)
{
    DIR *d = opendir("/tmp");
    if (!d)
        return;
    char prefix[128];
    snprintf(prefix, sizeof prefix, "xb-nng-%s-", scope);
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
        .name = "sendbuf",
        .kind = XB_PARAM_INTEGER,
        .default_value = "0",
        .help = "messages a socket queues for sending before a send waits for the connection (NNG_OPT_SENDBUF; 0 is nng's default)",
        .min = 0,
        .max = 8192,
    },
    {
        .name = "recvbuf",
        .kind = XB_PARAM_INTEGER,
        .default_value = "0",
        .help = "messages a socket reads ahead of the receiver (NNG_OPT_RECVBUF; 0 is nng's default)",
        .min = 0,
        .max = 8192,
    },
};

static const xb_transport transports[] = {
    {
        .name = "nng",
        .description = "nng pair1 sockets over ipc:// (libnng)",
        .max_message = 0,
        .flags = 0,
        .params = params,
        .param_count = sizeof params / sizeof params[0],
        .create = xn_create,
        .destroy = xn_destroy,
        .listen = xn_listen,
        .accept = xn_accept,
        .close_listener = xn_close_listener,
        .connect = xn_connect,
        .send = xn_send,
        .flush = NULL,
        .recv = xn_recv,
        .close_send = xn_close_send,
        .close = xn_close,
    },
};

static char version[48];

static const xb_plugin plugin = {
    .abi_version = XB_ABI_VERSION,
    .name = "xb-nng",
    .version = version,
    .transports = transports,
    .transport_count = sizeof transports / sizeof transports[0],
    .cleanup = xn_cleanup,
};

XB_EXPORT const xb_plugin *xferbench_plugin_v1(uint32_t host_abi_version)
{
    (void)host_abi_version;
    /* The plugin's version and the nng it runs with: both change what is measured.
     * nng_version() reads a constant; it starts no thread. */
    if (!version[0])
        snprintf(version, sizeof version, "1.0.0 nng %s", nng_version());
    return &plugin;
}

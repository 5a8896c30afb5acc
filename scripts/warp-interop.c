/*
 * Interop driver: warp-pipe's own client library (src/client.c, src/server.c in
 * client mode) against a Warp Pipe memory mock, doing what the Zephyr sample
 * pcie_native_thread does for one thread: enumerate (config reads, BAR sizing), then
 * ITERATIONS × (read 2048 B of BAR1, write buf[j] = j + i, read back and compare).
 * Written for xferbench (not taken from warp-pipe); build with scripts/warp-interop.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <warppipe/client.h>
#include <warppipe/server.h>

#define LEN 2048

struct done { int finished; int len; uint8_t *buf; int cap; };

static void on_completion(const struct warppipe_completion_status st, const void *data, int length, void *priv)
{
	struct done *d = priv;
	d->finished = 1;
	d->len = st.error_code ? -1 : length;
	if (!st.error_code)
		memcpy(d->buf, data, length < d->cap ? length : d->cap);
}

static struct warppipe_server server = { .listen = false, .addr_family = AF_INET, .host = "127.0.0.1", .quit = false };
static struct warppipe_client *client;

static int wait_for(struct done *d)
{
	while (!d->finished && !server.quit)
		warppipe_server_loop(&server);
	return server.quit ? -1 : d->len;
}

static int cfg_read(uint64_t off, uint32_t *val)
{
	struct done d = { .buf = (uint8_t *)val, .cap = 4 };
	client->private_data = &d;
	if (warppipe_config0_read(client, off, 4, on_completion) < 0)
		return -1;
	return wait_for(&d);
}

static int bar_read(int bar, uint64_t addr, uint8_t *buf, int len)
{
	struct done d = { .buf = buf, .cap = len };
	client->private_data = &d;
	if (warppipe_read(client, bar, addr, len, on_completion) < 0)
		return -1;
	return wait_for(&d);
}

int main(int argc, char **argv)
{
	int iterations = argc > 2 ? atoi(argv[2]) : 10;
	static uint8_t buf[LEN];
	uint32_t v;

	server.port = argc > 1 ? argv[1] : "2115";
	if (warppipe_server_create(&server) < 0) {
		fprintf(stderr, "cannot connect\n");
		return 1;
	}
	client = TAILQ_FIRST(&server.clients)->client;
	if (cfg_read(0, &v) != 4) {
		fprintf(stderr, "config read failed\n");
		return 1;
	}
	printf("vendor %04x device %04x\n", v & 0xffff, v >> 16);
	for (int off = 0x10; off < 0x28; off += 4) {
		uint32_t ones = 0xffffffff, mask, addr = off * 0x10000;
		warppipe_config0_write(client, off, &ones, 4);
		if (cfg_read(off, &mask) != 4 || mask == 0)
			continue;
		uint32_t size = -(mask & ~0xfu);
		warppipe_register_bar(client, addr, size, (off - 0x10) / 4, NULL, NULL);
		warppipe_config0_write(client, off, &addr, 4);
		printf("BAR%d at 0x%x size %u\n", (off - 0x10) / 4, addr, size);
	}
	int bad = 0;
	for (int i = 0; i < iterations; i++) {
		if (bar_read(1, 0, buf, LEN) != LEN)
			return 2;
		for (int j = 0; j < LEN; j++)
			buf[j] = j + i;
		if (warppipe_write(client, 1, 0, buf, LEN) != 0)
			return 2;
		memset(buf, 0, LEN);
		if (bar_read(1, 0, buf, LEN) != LEN)
			return 2;
		for (int j = 0; j < LEN; j++)
			bad += buf[j] != (uint8_t)(j + i);
	}
	printf("%d iterations, %d bad bytes\n", iterations, bad);
	return bad ? 3 : 0;
}

/*
 * The pipe example as a plugin built against header revision 1 would describe
 * itself: abi_version 1, and a transport array read with revision 1's element size
 * (no `reach`). It must keep loading, and be taken as local to one host.
 */
#define _GNU_SOURCE
#include <xferbench/plugin.h>

#undef XB_ABI_VERSION
#define XB_ABI_VERSION 1

#include "../../../../examples/plugins/pipe/pipe.c"

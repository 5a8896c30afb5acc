//! The hot loops of the perf-stat study.
//!
//! # The alignment pair
//!
//! [`copy_a`] and [`copy_b`] copy bytes one at a time (two per loop trip, then a
//! tail byte), as the seed's `ByteBuffer.writeBytes` of a `CircularBuffer<UInt8>`
//! does. On x86-64 both are the same instruction sequence emitted twice by
//! [`core::arch::global_asm!`], each in its own 64-byte-aligned section. The loop is
//! placed *before* the function's entry point, so the padding in front of it is
//! never executed and both variants retire exactly the same instructions:
//!
//! * A: the loop starts on a 64-byte boundary; its 25 bytes sit in one 32-byte
//!   window.
//! * B: the loop starts 42 bytes past a 64-byte boundary; its body straddles a
//!   cache line, and the macro-fused `cmp`/`jb` pair that closes it crosses a
//!   32-byte (and 64-byte) boundary, the case Intel's JCC-erratum microcode keeps out
//!   of the decoded-µop cache (DSB), and which a 16-byte MITE fetch splits.
//!
//! Whether that costs time depends on the CPU's front end; on other architectures
//! both variants are the same Rust loop ([`ALIGNMENT_CONTROLLED`] is false) and the
//! study says so.
//!
//! # The memory pair
//!
//! Both walk a linked list of `n` nodes, one `u32` index per node. A's nodes are
//! contiguous and in order (16 per cache line, the prefetcher's favourite) and it
//! mixes every index into a hash (more instructions per node). B's nodes are one per
//! cache line, in a shuffled order over `64·n` bytes, and it does nothing else: fewer
//! instructions, a cache miss per node.

/// Whether A and B differ in code placement on this architecture (x86-64 only).
pub const ALIGNMENT_CONTROLLED: bool = cfg!(target_arch = "x86_64");

/// Bytes of padding before B's loop, past a 64-byte boundary.
pub const B_LOOP_OFFSET: usize = 42;

/// A byte-copy loop: `copy(dst, src, len)` copies `len` bytes.
pub type CopyFn = unsafe extern "C" fn(*mut u8, *const u8, usize);

#[cfg(target_arch = "x86_64")]
macro_rules! copy_loop {
    ($section:literal, $name:literal, $pad:literal) => {
        core::arch::global_asm!(
            concat!(".pushsection .text.", $section, ",\"ax\",@progbits"),
            ".p2align 6",
            concat!(".skip ", $pad, ", 0x90"),
            // The hot loop, two bytes per trip; rcx = index, r8 = len rounded down.
            concat!(".L", $name, "_loop:"),
            "movzx eax, byte ptr [rsi + rcx]",
            "mov byte ptr [rdi + rcx], al",
            "movzx eax, byte ptr [rsi + rcx + 1]",
            "mov byte ptr [rdi + rcx + 1], al",
            "add rcx, 2",
            "cmp rcx, r8",
            concat!("jb .L", $name, "_loop"),
            concat!("jmp .L", $name, "_tail"),
            concat!(".globl ", $name),
            concat!(".hidden ", $name),
            concat!(".type ", $name, ",@function"),
            concat!($name, ":"),
            "xor ecx, ecx",
            "mov r8, rdx",
            "and r8, -2",
            concat!("jne .L", $name, "_loop"),
            concat!(".L", $name, "_tail:"),
            "cmp rcx, rdx",
            concat!("jae .L", $name, "_done"),
            "movzx eax, byte ptr [rsi + rcx]",
            "mov byte ptr [rdi + rcx], al",
            concat!(".L", $name, "_done:"),
            "ret",
            concat!(".size ", $name, ", . - ", $name),
            ".popsection",
        );
    };
}

#[cfg(target_arch = "x86_64")]
copy_loop!("xferbench_perfstat_a", "xferbench_perfstat_copy_a", "0");
#[cfg(target_arch = "x86_64")]
copy_loop!("xferbench_perfstat_b", "xferbench_perfstat_copy_b", "42");

#[cfg(target_arch = "x86_64")]
unsafe extern "C" {
    fn xferbench_perfstat_copy_a(dst: *mut u8, src: *const u8, len: usize);
    fn xferbench_perfstat_copy_b(dst: *mut u8, src: *const u8, len: usize);
}

/// Variant A's copy loop (aligned).
#[cfg(target_arch = "x86_64")]
pub const COPY_A: CopyFn = xferbench_perfstat_copy_a;
/// Variant B's copy loop (the same instructions, straddling a boundary).
#[cfg(target_arch = "x86_64")]
pub const COPY_B: CopyFn = xferbench_perfstat_copy_b;

/// The portable copy loop, used for both variants off x86-64.
///
/// # Safety
///
/// `src` must be valid for `len` reads and `dst` for `len` writes; they must not
/// overlap.
#[cfg(not(target_arch = "x86_64"))]
#[inline(never)]
unsafe extern "C" fn copy_portable(dst: *mut u8, src: *const u8, len: usize) {
    // SAFETY: the caller's contract.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, len) }
}

/// Variant A's copy loop (portable: the same as B).
#[cfg(not(target_arch = "x86_64"))]
pub const COPY_A: CopyFn = copy_portable;
/// Variant B's copy loop (portable: the same as A).
#[cfg(not(target_arch = "x86_64"))]
pub const COPY_B: CopyFn = copy_portable;

/// Copies `src` into `dst` with `copy`.
pub fn copy_into(copy: CopyFn, dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "copy_into: lengths differ");
    // SAFETY: both slices are valid for `len` bytes and cannot overlap (one is
    // borrowed mutably); the loops read `src` and write `dst` within `len`.
    unsafe { copy(dst.as_mut_ptr(), src.as_ptr(), src.len()) }
}

/// Appends `src` to `buf` with `copy` (the seed's `writeBytes`).
pub fn append(copy: CopyFn, buf: &mut Vec<u8>, src: &[u8]) {
    buf.reserve(src.len());
    let len = buf.len();
    let spare = &mut buf.spare_capacity_mut()[..src.len()];
    // SAFETY: `spare` is `src.len()` writable bytes of `buf`'s reserved capacity,
    // disjoint from `src` (which `buf` does not own); after the copy those bytes are
    // initialised, so the length may grow over them.
    unsafe {
        copy(spare.as_mut_ptr().cast(), src.as_ptr(), src.len());
        buf.set_len(len + src.len());
    }
}

/// The nodes of the memory pair, and how to walk them.
#[derive(Debug, Clone)]
pub struct Walk {
    next: Vec<u32>,
    sparse: bool,
}

/// Cache-line stride of the sparse layout, in `u32` slots.
pub const SPARSE_STRIDE: usize = 16;

impl Walk {
    /// A's list: `nodes` contiguous nodes, each pointing at the next.
    pub fn dense(nodes: usize) -> Walk {
        let n = nodes.max(1);
        let next = (0..n).map(|i| ((i + 1) % n) as u32).collect();
        Walk {
            next,
            sparse: false,
        }
    }

    /// B's list: `nodes` nodes one per cache line, linked in a shuffled order (one
    /// cycle through all of them; a fixed seed, so every run walks the same order).
    pub fn shuffled(nodes: usize) -> Walk {
        let n = nodes.max(1);
        let mut order: Vec<u32> = (0..n as u32).collect();
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for i in (1..n).rev() {
            // xorshift64*: cheap, deterministic, good enough for a shuffle.
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            let r = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
            order.swap(i, (r % (i as u64 + 1)) as usize);
        }
        let mut next = vec![0u32; n * SPARSE_STRIDE];
        for k in 0..n {
            let from = order[k] as usize * SPARSE_STRIDE;
            next[from] = order[(k + 1) % n] * SPARSE_STRIDE as u32;
        }
        Walk { next, sparse: true }
    }

    /// Bytes the list occupies.
    pub fn footprint(&self) -> usize {
        self.next.len() * 4
    }

    /// Visits `steps` nodes from the first; returns a checksum so the work stays.
    #[inline(never)]
    pub fn walk(&self, steps: u64) -> u64 {
        if self.sparse {
            walk_sparse(&self.next, steps)
        } else {
            walk_dense(&self.next, steps)
        }
    }
}

/// A: the next node and a hash of every index (more instructions per node).
#[inline(never)]
fn walk_dense(next: &[u32], steps: u64) -> u64 {
    let mut i = 0u32;
    let mut acc = 0u64;
    for _ in 0..steps {
        let n = next[i as usize];
        acc = (acc ^ u64::from(n))
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(5);
        i = n;
    }
    acc ^ u64::from(i)
}

/// B: only the next node.
#[inline(never)]
fn walk_sparse(next: &[u32], steps: u64) -> u64 {
    let mut i = 0u32;
    for _ in 0..steps {
        i = next[i as usize];
    }
    u64::from(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_copy_loops_copy_every_length() {
        for copy in [COPY_A, COPY_B] {
            for len in [0usize, 1, 2, 3, 17, 1024, 1025] {
                let src: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
                let mut dst = vec![0xAAu8; len];
                copy_into(copy, &mut dst, &src);
                assert_eq!(dst, src, "len {len}");
                let mut buf = vec![7u8];
                append(copy, &mut buf, &src);
                assert_eq!(buf.len(), len + 1);
                assert_eq!(&buf[1..], &src[..]);
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_loops_sit_where_the_doc_says() {
        // The entry follows the loop, which is 25 bytes plus a 2-byte jump; the
        // entry's offset from the loop is the same in both.
        let a = COPY_A as usize;
        let b = COPY_B as usize;
        let loop_a = a - 27;
        let loop_b = b - 27;
        assert_eq!(loop_a % 64, 0, "A's loop at {loop_a:#x}");
        assert_eq!(loop_b % 64, B_LOOP_OFFSET, "B's loop at {loop_b:#x}");
    }

    #[test]
    fn both_walks_visit_every_node_once_per_cycle() {
        let n = 1000;
        for w in [Walk::dense(n), Walk::shuffled(n)] {
            let stride = if w.sparse { SPARSE_STRIDE } else { 1 };
            let mut seen = std::collections::BTreeSet::new();
            let mut i = 0usize;
            for _ in 0..n {
                assert!(seen.insert(i), "node {i} visited twice");
                i = w.next[i] as usize;
            }
            assert_eq!(i, 0, "one cycle through all nodes");
            assert!(seen.iter().all(|s| s % stride == 0));
        }
        assert_eq!(Walk::shuffled(n).footprint(), n * 64);
        assert_eq!(Walk::dense(n).walk(n as u64), Walk::dense(n).walk(n as u64));
    }
}

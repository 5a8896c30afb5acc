//! The two RPMsg headers: the 16-byte message header in front of every payload and
//! the link header both sides validate before touching the shared area.
//!
//! Input: 16 bytes of message header, a `u32` buffer length (the used length the
//! vring reported), a `u64` area length (the bytes mapped), then the link header's
//! bytes as they lie in shared memory (missing bytes are zero).
//!
//! Checked: decoding never panics and re-encodes to the same bytes; an accepted
//! message header's payload fits both the buffer and the 496-byte limit; an accepted
//! link header describes two vrings and a buffer pool that lie, in order and without
//! overlap, after the header and inside the mapped area, at the vring alignment.

#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::atomic::Ordering;
use xferbench_fuzz::{Shared, take, take_u32, take_u64};
use xferbench_transports::rpmsg::header::{
    BUF_SIZE, LinkHeader, MAX_PAYLOAD, MAX_VRING, MSG_HEADER_LEN, MsgHeader, VRING_ALIGN,
};
use xferbench_transports::rpmsg::vring::vring_size;

fuzz_target!(|data: &[u8]| {
    let mut d = data;
    let raw: [u8; MSG_HEADER_LEN] = take(&mut d);
    let used_len = take_u32(&mut d) as usize;
    let area_len = take_u64(&mut d);

    let h = MsgHeader::decode(&raw);
    assert_eq!(h.encode(), raw);
    if let Ok(len) = h.check(used_len) {
        assert_eq!(len, usize::from(h.len));
        assert!(len <= MAX_PAYLOAD);
        assert!(MSG_HEADER_LEN + len <= used_len.min(BUF_SIZE));
    }

    // SAFETY: a LinkHeader is integers and atomics only: any bytes are one.
    let link = unsafe { Shared::<LinkHeader>::from_bytes(d) };
    let l = link.get();
    let magic = l.magic.load(Ordering::Acquire);
    if l.validate(magic, area_len).is_ok() {
        let num = u64::from(l.num);
        assert!(num.is_power_of_two() && (2..=u64::from(MAX_VRING)).contains(&num));
        assert_eq!(u64::from(l.buf_count), 2 * num);
        let vr = vring_size(num as usize) as u64;
        let align = VRING_ALIGN as u64;
        assert!(size_of::<LinkHeader>() as u64 <= l.tx_offset);
        assert!(l.tx_offset.is_multiple_of(align) && l.rx_offset.is_multiple_of(align));
        assert!(l.tx_offset + vr <= l.rx_offset);
        assert!(l.rx_offset + vr <= l.buf_offset);
        assert!(l.buf_offset + 2 * num * BUF_SIZE as u64 <= l.area_len);
        assert!(l.area_len <= area_len);
        assert!(l.ept_count >= 1 && l.ept_base.checked_add(l.ept_count).is_some());
    }
});

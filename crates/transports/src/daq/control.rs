//! A board's control block: the "registers" the host reads to learn whether an
//! acquisition ended.
//!
//! # Layout (version 1, little-endian, 32 bytes at offset 0 of a memfd page)
//!
//! ```text
//! 0   magic         u32  "SIS8"
//! 4   version       u32  1
//! 8   status        u32  ACQUISITION_CONTROL_STATUS: bits 0-1 set while armed
//! 12  board         u32  the board's index
//! 16  acquisitions  u64  acquisitions ended since creation (monotonic)
//! 24  samples       u64  samples in the device memory
//! ```
//!
//! The model's threads write it through a shared mapping with atomics. The host
//! reads it with `pread` ([`ControlReader::read`]), one system call per register
//! read as the original's `ioctl`, and treats what it reads as hostile: the read is
//! a fixed 32 bytes, and the magic, version, board, size, unknown status bits and a
//! counter that goes backwards are all refused with an error that names the field.

use super::error::DaqError;
use super::memory::{Mapping, map, memfd};
use rustix::fd::OwnedFd;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// `"SIS8"` as a little-endian u32.
pub const MAGIC: u32 = u32::from_le_bytes(*b"SIS8");
/// Layout version.
pub const VERSION: u32 = 1;
/// Status bits set while an acquisition is armed and running (`val & 0x3`).
pub const STATUS_ARMED: u32 = 0x3;
/// Bytes the host reads.
pub const BLOCK_BYTES: usize = 32;

/// The control block as the model's threads see it.
#[repr(C)]
#[derive(Debug)]
pub struct ControlBlock {
    magic: AtomicU32,
    version: AtomicU32,
    status: AtomicU32,
    board: AtomicU32,
    acquisitions: AtomicU64,
    samples: AtomicU64,
}

const _: () = assert!(std::mem::size_of::<ControlBlock>() == BLOCK_BYTES);

/// A board's control block: its memfd and the model's mapping of it.
#[derive(Debug)]
pub struct Control {
    fd: OwnedFd,
    map: Mapping,
    board: u32,
    samples: u64,
}

impl Control {
    /// Creates the block of board `board` with `samples` samples, idle.
    pub fn create(board: usize, samples: usize) -> Result<Control, DaqError> {
        let fd = memfd(&format!("daq-ctl{board}"), 4096)?;
        let map = map(&fd, 4096, true)?;
        let c = Control {
            fd,
            map,
            board: board as u32,
            samples: samples as u64,
        };
        let b = c.block();
        b.version.store(VERSION, Ordering::Relaxed);
        b.board.store(board as u32, Ordering::Relaxed);
        b.samples.store(samples as u64, Ordering::Relaxed);
        b.magic.store(MAGIC, Ordering::Release);
        Ok(c)
    }

    fn block(&self) -> &ControlBlock {
        // SAFETY: the mapping is 4096 bytes, page aligned, lives as long as self, and
        // ControlBlock is all atomics, valid for any bit pattern.
        unsafe { &*self.map.as_ptr().cast::<ControlBlock>() }
    }

    /// Arms an acquisition (the host's register write).
    pub fn arm(&self) {
        self.block().status.store(STATUS_ARMED, Ordering::Release);
    }

    /// Whether an acquisition is armed, as the model sees it.
    pub fn armed(&self) -> bool {
        self.block().status.load(Ordering::Acquire) & STATUS_ARMED != 0
    }

    /// Ends the armed acquisition, if any: status idle, counter + 1. Returns
    /// whether one ended.
    pub fn end_acquisition(&self) -> bool {
        let b = self.block();
        if b.status
            .compare_exchange(STATUS_ARMED, 0, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            b.acquisitions.fetch_add(1, Ordering::Release);
            true
        } else {
            false
        }
    }

    /// A reader of this block for the host.
    pub fn reader(&self) -> Result<ControlReader, DaqError> {
        Ok(ControlReader {
            fd: self.fd.try_clone().map_err(|e| DaqError::Memory {
                what: "dup of the control block",
                source: e,
            })?,
            board: self.board,
            samples: self.samples,
            last: 0,
        })
    }

    /// The memfd, for tests that corrupt the block.
    pub fn fd(&self) -> &OwnedFd {
        &self.fd
    }
}

/// What one register read found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status {
    /// The status word.
    pub status: u32,
    /// Acquisitions ended so far.
    pub acquisitions: u64,
}

impl Status {
    /// Whether an acquisition is armed (`val & 0x3`).
    pub fn armed(&self) -> bool {
        self.status & STATUS_ARMED != 0
    }
}

/// The host's side: reads the block with `pread` and validates it.
#[derive(Debug)]
pub struct ControlReader {
    fd: OwnedFd,
    board: u32,
    samples: u64,
    last: u64,
}

impl ControlReader {
    /// One register read: a `pread` of the block, validated.
    pub fn read(&mut self) -> Result<Status, DaqError> {
        let mut raw = [0u8; BLOCK_BYTES];
        let n = rustix::io::pread(&self.fd, &mut raw, 0).map_err(|e| DaqError::Memory {
            what: "pread of the control block",
            source: e.into(),
        })?;
        let s = parse(&raw[..n], self.board, self.samples, self.last)?;
        self.last = s.acquisitions;
        Ok(s)
    }
}

fn bad(field: &'static str, detail: String) -> DaqError {
    DaqError::ControlBlock { field, detail }
}

/// Validates the bytes of a control block read by the host of board `board` with
/// `samples` samples, whose last read counter was `last`.
pub fn parse(raw: &[u8], board: u32, samples: u64, last: u64) -> Result<Status, DaqError> {
    if raw.len() != BLOCK_BYTES {
        return Err(bad(
            "length",
            format!("read {} bytes, expected {BLOCK_BYTES}", raw.len()),
        ));
    }
    let u32_at = |o: usize| u32::from_le_bytes(raw[o..o + 4].try_into().expect("4 bytes"));
    let u64_at = |o: usize| u64::from_le_bytes(raw[o..o + 8].try_into().expect("8 bytes"));
    if u32_at(0) != MAGIC {
        return Err(bad(
            "magic",
            format!("{:#010x}, expected {MAGIC:#010x}", u32_at(0)),
        ));
    }
    if u32_at(4) != VERSION {
        return Err(bad("version", format!("{}, expected {VERSION}", u32_at(4))));
    }
    let status = u32_at(8);
    if status & !STATUS_ARMED != 0 {
        return Err(bad("status", format!("unknown bits in {status:#x}")));
    }
    if u32_at(12) != board {
        return Err(bad("board", format!("{}, expected {board}", u32_at(12))));
    }
    let acquisitions = u64_at(16);
    if acquisitions < last {
        return Err(bad(
            "acquisitions",
            format!("went back from {last} to {acquisitions}"),
        ));
    }
    if u64_at(24) != samples {
        return Err(bad(
            "samples",
            format!("{}, expected {samples}", u64_at(24)),
        ));
    }
    Ok(Status {
        status,
        acquisitions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_reads_what_the_model_writes() {
        let c = Control::create(2, 1000).unwrap();
        let mut r = c.reader().unwrap();
        assert_eq!(
            r.read().unwrap(),
            Status {
                status: 0,
                acquisitions: 0
            }
        );
        c.arm();
        assert!(r.read().unwrap().armed());
        assert!(c.end_acquisition());
        assert!(!c.end_acquisition());
        assert_eq!(
            r.read().unwrap(),
            Status {
                status: 0,
                acquisitions: 1
            }
        );
    }

    #[test]
    fn a_hostile_block_is_refused_naming_the_field() {
        let c = Control::create(1, 64).unwrap();
        let mut good = [0u8; BLOCK_BYTES];
        rustix::io::pread(c.fd(), &mut good, 0).unwrap();
        assert!(parse(&good, 1, 64, 0).is_ok());
        let field = |raw: &[u8], last| match parse(raw, 1, 64, last) {
            Err(DaqError::ControlBlock { field, .. }) => field,
            other => panic!("accepted: {other:?}"),
        };
        assert_eq!(field(&good[..31], 0), "length");
        for (offset, value, name) in [
            (0, 0xdead_u64, "magic"),
            (4, 2, "version"),
            (8, 0x10, "status"),
            (12, 7, "board"),
            (24, 65, "samples"),
        ] {
            let mut b = good;
            if offset == 24 {
                b[24..32].copy_from_slice(&value.to_le_bytes());
            } else {
                b[offset..offset + 4].copy_from_slice(&(value as u32).to_le_bytes());
            }
            assert_eq!(field(&b, 0), name);
        }
        assert_eq!(field(&good, 5), "acquisitions");
        rustix::io::pwrite(c.fd(), &[0xff; 4], 0).unwrap();
        assert!(c.reader().unwrap().read().is_err());
    }
}

//! A model of Struck SIS8300 digitizer boards in a MicroTCA crate, for the
//! `sis8300` study: no hardware, but the same mechanisms behind the same costs.
//!
//! # The model
//!
//! A [`Digitizer`] holds N [`Board`]s. Each board has
//!
//! * **device memory** ([`memory::DeviceMemory`]): a memfd filled with the
//!   deterministic pattern of [`memory::sample`] and sealed against writes and
//!   resizes, so every sample read can be verified;
//! * a **control block** ([`control`]): the status word and the acquisition counter,
//!   read by the host with one system call per read and validated like any bytes
//!   from a device;
//! * a **DMA engine**: a thread that performs each transfer for the reader, paced to
//!   the board's [`Link`] and to the crate's shared [`Bus`] limit, so boards slow
//!   each other down;
//! * an **interrupt line**: an eventfd the model signals when an acquisition ends.
//!
//! A [`Trigger`] ends armed acquisitions: the crate's internal trigger at a rate
//! (14 Hz by default, all boards on the same tick, like the backplane trigger line)
//! or the software trigger, which ends an acquisition as soon as it is armed.
//!
//! # Readout paths ([`Access`])
//!
//! * `read`: the driver's bounce-buffer path. For each chunk of at most
//!   [`CHUNK_BYTES`] (4 MiB) the engine performs the link transfer (time on the link
//!   and the bus, no host CPU, as a DMA), then the reader `pread`s the chunk from the
//!   device memory: the kernel's user-copy routine moves the bytes, as the driver's
//!   `copy_to_user` does. DMA and copy alternate serially, as in the driver.
//!   The link time is a schedule for the whole read (chunk k completes no earlier
//!   than `(bytes of chunks 0..=k) / rate` after the read began), because the
//!   presets are the seed's end-to-end figures, the driver's copy included: a
//!   read runs at the preset as long as this machine copies faster than the link.
//! * `mmap`: the engine copies the device memory straight into a shared mapping the
//!   reader then reads in place (zero copy for the reader). The engine's copy stands
//!   for the board's DMA writes and its CPU time is the model's, reported apart
//!   ([`Board::engine_cpu`]).
//!
//! # End of acquisition ([`DaqEnd`])
//!
//! * `poll`: a `pread` of the control block per status read, then `usleep(1)`, until
//!   the armed bits clear: the original's `ioctl` register read loop.
//! * `irq`: a blocking `poll(2)` on the board's eventfd, which the trigger signals
//!   when it ends the acquisition.
//!
//! Nothing outlives a [`Digitizer`]: the memfds have no name, and dropping it stops
//! and joins every thread.

pub mod board;
pub mod config;
pub mod control;
pub mod convert;
pub mod error;
pub mod memory;

pub use board::{Board, Bus, Digitizer, EngineMeter};
pub use config::{
    Access, CHUNK_BYTES, DEFAULT_BUS_BYTES_PER_S, DaqEnd, DigitizerConfig, Link, SAMPLE_QUANTUM,
    Trigger, round_up_samples,
};
pub use error::DaqError;
